package app

import (
	"html/template"
	"net/http"
	"strings"
)

var statusPage = template.Must(template.New("status").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Hearth</title></head>
<body><main>
<h1>Hearth</h1>
<dl>
<dt>MCP endpoint</dt><dd data-testid="mcp-url">{{.MCP}}</dd>
<dt>Policy mode</dt><dd data-testid="policy-mode">{{.Mode}}</dd>
</dl>
</main></body></html>`))

// panelHandler serves the read-only status page of the control panel on
// its own loopback listener; foreign Host headers are refused.
func (a *App) panelHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; frame-ancestors 'none'")
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		data := struct{ MCP, Mode string }{a.MCPURL(), a.Config.Policy.Mode}
		if err := statusPage.Execute(w, data); err != nil {
			a.Log.Error("render status page", "err", err)
		}
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if i := strings.LastIndexByte(host, ':'); i > 0 && !strings.HasSuffix(host, "]") {
			host = host[:i]
		}
		host = strings.Trim(host, "[]")
		if host != "localhost" && host != "127.0.0.1" && host != "::1" {
			http.Error(w, "Forbidden: Host must be a loopback address", http.StatusForbidden)
			return
		}
		mux.ServeHTTP(w, r)
	})
}
