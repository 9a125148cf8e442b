package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/hearth-dev/hearth/internal/jsonx"
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
		if origin := firstValue(r.Header, hdrOrigin); origin != "" && !loopbackOrigin(origin) {
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

// readBody reads the (bounded) body: into exactly its length when known,
// so that a 4 MiB body costs 4 MiB, not the doublings of io.ReadAll.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body := http.MaxBytesReader(w, r.Body, MaxBodyBytes)
	if r.ContentLength >= 0 && r.ContentLength <= MaxBodyBytes {
		buf := make([]byte, r.ContentLength)
		if _, err := io.ReadFull(body, buf); err != nil {
			return nil, err
		}
		return buf, nil
	}
	return io.ReadAll(body)
}

// A callHandler serves a request after fingerprint, given what
// fingerprint read of it (a zero wireRequest when it read no body: not a
// POST). It is all fingerprint knows of what comes next: the fast path
// and the SDK each are one.
type callHandler interface {
	serveWire(w http.ResponseWriter, r *http.Request, wire wireRequest)
}

// sdkCalls hands a request to the go-sdk: the body fingerprint read, again,
// and what the tool handler needs of it (handle) in the context.
type sdkCalls struct{ sdk http.Handler }

func (c sdkCalls) serveWire(w http.ResponseWriter, r *http.Request, wire wireRequest) {
	if wire.body != nil {
		r.Body = io.NopCloser(bytes.NewReader(wire.body))
	}
	c.sdk.ServeHTTP(w, withWire(r, wire))
}

// requestNoter is a ResponseWriter that wants the request's id and method
// for the error answers it writes (rpcErrors' writer).
type requestNoter interface {
	noteRequest(id json.RawMessage, method string)
}

// fingerprint reads the (bounded) body, refuses what the SDK would answer
// in plain text or silently alter (not JSON, not a request object, nested
// too deep, invalid UTF-8 outside a tool's arguments) with a JSON-RPC
// error, reads the request once (readRequest) with its fingerprint, and
// hands it to next. Invalid UTF-8 inside a tool's arguments is left to
// the tool call, which refuses it as invalid_input naming the field.
func (s *Server) fingerprint(next callHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.serveWire(w, r, wireRequest{})
			return
		}
		body, err := readBody(w, r)
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				writeRPCError(w, http.StatusRequestEntityTooLarge, nil, codeInvalidRequest, fmt.Sprintf("Invalid request: body larger than %d bytes", MaxBodyBytes))
				return
			}
			writeRPCError(w, http.StatusBadRequest, nil, codeInvalidRequest, "Invalid request: the body could not be read")
			return
		}
		trimmed := bytes.TrimSpace(body)
		scan := jsonx.Scan(trimmed, MaxJSONDepth)
		if len(trimmed) == 0 || !scan.Valid(trimmed) {
			writeRPCError(w, http.StatusBadRequest, nil, codeParseError, "Parse error: request body is not valid JSON")
			return
		}
		if trimmed[0] != '{' && trimmed[0] != '[' {
			writeRPCError(w, http.StatusBadRequest, nil, codeInvalidRequest, "Invalid request: the body must be a JSON-RPC request object")
			return
		}
		if scan.TooDeep {
			writeRPCError(w, http.StatusBadRequest, nil, codeParseError, fmt.Sprintf("Parse error: JSON nested deeper than %d levels", MaxJSONDepth))
			return
		}
		wire := readRequest(body)
		if n, ok := w.(requestNoter); ok && !wire.malformed {
			n.noteRequest(wire.ID, wire.Method)
		}
		if trimmed[0] == '{' && (wire.malformed || wire.Method == "" && !wire.reply) {
			// Neither a request, a notification nor a response (the SDK
			// would take it for a response and answer 202).
			writeRPCError(w, http.StatusBadRequest, wire.ID, codeInvalidRequest, `Invalid request: a JSON-RPC request needs "jsonrpc":"2.0" and a string "method"`)
			return
		}
		if p := scan.BadPath; p != nil {
			if wire.malformed || wire.Method != "tools/call" || len(p) <= 2 || p[0] != "params" || p[1] != "arguments" {
				writeRPCError(w, http.StatusBadRequest, wire.ID, codeInvalidParams,
					fmt.Sprintf("Invalid params: field %q is not valid UTF-8 (invalid bytes or a lone surrogate escape such as \\ud800)", fieldPath(p)))
				return
			}
			wire.BadUTF8 = fieldPath(p[2:])
		}
		wire.fingerprinted()
		next.serveWire(w, r, wire)
	})
}
