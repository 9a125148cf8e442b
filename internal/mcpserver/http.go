package mcpserver

import (
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// MaxBodyBytes bounds one MCP request body (the go-sdk default).
const MaxBodyBytes = 4 << 20

// Handler returns the MCP HTTP surface: POST /mcp only (the SDK answers
// 405 for other methods on /mcp), 404 elsewhere, with Host and Origin
// checks in front of the SDK's own DNS-rebinding protection.
func (s *Server) Handler() http.Handler { return s.handler(true) }

// handler is the HTTP surface with or without the fast path for plain
// tools/call requests (fastpath.go); without it every request reaches
// the SDK.
func (s *Server) handler(fast bool) http.Handler {
	var calls callHandler = sdkCalls{s.sdk}
	if fast {
		calls = s.fastPath(calls)
	}
	endpoint := rpcErrors(s.guard(s.fingerprint(calls)))
	mux := http.NewServeMux()
	mux.Handle("/mcp", endpoint)
	mux.Handle("/.well-known/", s.guard(http.HandlerFunc(wellKnownNotFound)))
	mux.HandleFunc("/", http.NotFound)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Every call is a POST to /mcp, which the mux would route to the
		// endpoint after matching its patterns: go there at once.
		if r.URL.Path == "/mcp" && r.Method != http.MethodConnect {
			endpoint.ServeHTTP(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// wellKnownNotFound answers a JSON 404 for discovery paths such as
// /.well-known/oauth-protected-resource: Hearth's endpoint needs no OAuth,
// and clients that probe for it (tunnel-client does) read JSON.
func wellKnownNotFound(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusNotFound)
	_, _ = io.WriteString(w, `{"error":"not_found","error_description":"Hearth's MCP endpoint needs no OAuth; there is no metadata here"}`+"\n")
}

// guard refuses a request whose Host is not a loopback name, or whose
// Origin (when present) is not a loopback origin: a web page in the user's
// browser must never reach the MCP endpoint, even through DNS rebinding.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopbackHost(r.Host) {
			http.Error(w, "Forbidden: Host must be a loopback address", http.StatusForbidden)
			return
		}
		if origin := r.Header[hdrOrigin]; len(origin) > 0 && origin[0] != "" && !loopbackOrigin(origin[0]) {
			http.Error(w, "Forbidden: cross-origin request", http.StatusForbidden)
			return
		}
		acceptJSONOnly(r)
		next.ServeHTTP(w, r)
	})
}

// acceptJSONOnly lets a client that sends only "Accept: application/json"
// through the SDK's check for both media types: Hearth always answers with
// JSON (never an event stream), so such a client can read every answer.
func acceptJSONOnly(r *http.Request) {
	if r.Method != http.MethodPost {
		return
	}
	accept := strings.Join(r.Header[hdrAccept], ",")
	if strings.Contains(accept, "text/event-stream") {
		return
	}
	if strings.Contains(accept, "application/json") || strings.Contains(accept, "*/*") || strings.Contains(accept, "application/*") {
		r.Header.Set("Accept", accept+", text/event-stream")
	}
}

// loopbackHost reports whether a Host header names this machine's loopback
// interface (with or without a port).
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	if host == "127.0.0.1" || host == "localhost" {
		return true // what every local client sends, without parsing
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// loopbackOrigin reports whether origin is http(s) on a loopback host.
func loopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" && u.Path != "/" {
		return false
	}
	return loopbackHost(u.Host)
}
