package mcpserver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/hearth-dev/hearth/internal/httpbound"
)

// JSON-RPC error codes Hearth answers at the HTTP layer.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternal       = -32603
	// codeServerBusy is in JSON-RPC's implementation-defined server range.
	codeServerBusy = -32000
)

// writeRPCError answers a JSON-RPC error object with an HTTP status; id is
// the request's id when it is known (null otherwise).
func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, code int, msg string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	if err != nil {
		b = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}`)
	}
	h := w.Header()
	h.Del("Content-Length")
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(b)
}

// Reject answers a request the listener's bounds refused before it was
// read (too large, too slow, too many at once) as a JSON-RPC error, with
// the same HTTP status (and Retry-After on a 503).
func Reject(w http.ResponseWriter, _ *http.Request, rej httpbound.Rejection) {
	code := codeInvalidRequest
	if rej.Status == http.StatusServiceUnavailable {
		code = codeServerBusy
	}
	writeRPCError(w, rej.Status, nil, code, rej.Message)
}

// rpcErrors turns every plain-text error answer to a POST (the go-sdk's
// http.Error calls, Hearth's own Host/Origin refusals) into a JSON-RPC
// error object with the same status, so that a client always reads
// JSON-RPC. The code is method-not-found for an unknown method, parse
// error for a body that is not JSON, invalid request otherwise (internal
// error for a 5xx).
func rpcErrors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		iw := &rpcErrorWriter{ResponseWriter: w}
		next.ServeHTTP(iw, r)
		iw.finish()
	})
}

// rpcState is what the request's reading learned that an error answer
// needs: its id and method.
type rpcState struct {
	ID     json.RawMessage
	Method string
}

type rpcErrorWriter struct {
	http.ResponseWriter
	state     rpcState
	intercept bool
	status    int
	text      bytes.Buffer
}

func (w *rpcErrorWriter) WriteHeader(status int) {
	if status >= 400 && !strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
		w.intercept, w.status = true, status
		return
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *rpcErrorWriter) Write(b []byte) (int, error) {
	if w.intercept {
		if w.text.Len() < 1024 {
			w.text.Write(b)
		}
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// noteRequest keeps the request's id and method for an error answer
// (requestNoter).
func (w *rpcErrorWriter) noteRequest(id json.RawMessage, method string) {
	w.state.ID, w.state.Method = id, method
}

// Unwrap lets http.ResponseController reach the connection.
func (w *rpcErrorWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush flushes what is not being intercepted.
func (w *rpcErrorWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok && !w.intercept {
		f.Flush()
	}
}

func (w *rpcErrorWriter) finish() {
	if !w.intercept {
		return
	}
	text := strings.TrimSpace(w.text.String())
	code := codeInvalidRequest
	msg := "Invalid request: " + text
	switch {
	case strings.Contains(text, "JSON RPC not handled"):
		code = codeMethodNotFound
		msg = "Method not found: " + w.state.Method
	case strings.HasPrefix(text, "malformed payload"):
		msg = "Invalid request: the body is not a JSON-RPC message"
	case w.status >= 500:
		code = codeInternal
		msg = "Internal error"
	}
	writeRPCError(w.ResponseWriter, w.status, w.state.ID, code, msg)
}
