package mcpserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// MaxBodyBytes bounds one MCP request body (the go-sdk default).
const MaxBodyBytes = 4 << 20

type requestInfoKey struct{}

// requestInfo is what the HTTP layer learns about a request before the SDK
// sees it.
type requestInfo struct {
	// FP fingerprints the JSON-RPC request id together with the tool name
	// and arguments, so a retry of the same request is recognised without
	// storing the raw id.
	FP string
}

func infoFrom(ctx context.Context) requestInfo {
	ri, _ := ctx.Value(requestInfoKey{}).(requestInfo)
	return ri
}

// Handler returns the MCP HTTP surface: POST /mcp only (the SDK answers
// 405 for other methods on /mcp), 404 elsewhere, with Host and Origin
// checks in front of the SDK's own DNS-rebinding protection.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/mcp", s.guard(s.fingerprint(s.sdk)))
	mux.Handle("/.well-known/", s.guard(http.HandlerFunc(wellKnownNotFound)))
	mux.HandleFunc("/", http.NotFound)
	return mux
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
		if origin := r.Header.Get("Origin"); origin != "" && !loopbackOrigin(origin) {
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
	accept := strings.Join(r.Header.Values("Accept"), ",")
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

// fingerprint reads the (bounded) body, derives the request fingerprint,
// and hands the SDK an identical body.
func (s *Server) fingerprint(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				http.Error(w, "Request body too large", http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, "Bad request body", http.StatusBadRequest)
			return
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			} `json:"params"`
		}
		err = json.Unmarshal(body, &msg)
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) || errors.Is(err, io.ErrUnexpectedEOF) {
			// The SDK answers malformed JSON with a plain-text 400; a
			// JSON-RPC client deserves a parse error it can read.
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: request body is not valid JSON"}}`)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if err == nil && len(msg.ID) > 0 && msg.Method == "tools/call" {
			h := sha256.New()
			h.Write(msg.ID)
			h.Write([]byte{0})
			h.Write([]byte(msg.Params.Name))
			h.Write([]byte{0})
			h.Write(msg.Params.Arguments)
			ri := requestInfo{FP: hex.EncodeToString(h.Sum(nil))}
			r = r.WithContext(context.WithValue(r.Context(), requestInfoKey{}, ri))
		}
		next.ServeHTTP(w, r)
	})
}
