// Package route holds the one rule about conversation routes that several
// packages apply: a request-scoped (anonymous) route has no later request
// of its own, so every anonymous request shares one scope for the things
// that must persist across requests (the UNKNOWN gate, artifact listings).
package route

import "strings"

// AnonymousPrefix marks request-scoped routes.
const AnonymousPrefix = "anon:"

// Anonymous reports whether r is a request-scoped route.
func Anonymous(r string) bool { return strings.HasPrefix(r, AnonymousPrefix) }

// Match returns an SQL condition on column, and its one argument, that
// selects the rows in r's scope: r's own rows, or for an anonymous route
// the rows of every anonymous route.
func Match(column, r string) (cond string, arg string) {
	if Anonymous(r) {
		return column + " LIKE ?", AnonymousPrefix + "%"
	}
	return column + " = ?", r
}
