package primitive

import "strings"

// The one rule about conversation routes that several packages apply: a
// request-scoped (anonymous) route has no later request of its own, so
// every anonymous request shares one scope for the things that must
// persist across requests (the UNKNOWN gate, artifact listings).

// AnonymousRoutePrefix marks request-scoped routes.
const AnonymousRoutePrefix = "anon:"

// AnonymousRoute reports whether r is a request-scoped route.
func AnonymousRoute(r string) bool { return strings.HasPrefix(r, AnonymousRoutePrefix) }

// RouteMatch returns an SQL condition on column, and its one argument, that
// selects the rows in r's scope: r's own rows, or for an anonymous route
// the rows of every anonymous route.
func RouteMatch(column, r string) (cond string, arg string) {
	if AnonymousRoute(r) {
		return column + " LIKE ?", AnonymousRoutePrefix + "%"
	}
	return column + " = ?", r
}
