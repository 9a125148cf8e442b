package mcpserver

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/artifacts"
	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/fsops"
)

// TestAppendEnvelopeMatchesMarshal: the envelope a call answers with is
// written as json.Marshal writes it, for every member present and absent,
// strings that need escaping, each kind of result (one that appends
// itself, a typed nil of that kind, a map, a raw message Marshal
// compacts, one Marshal refuses), errors, artifacts, arrivals and route
// probes. A member added to the envelope without a line in
// appendEnvelope fails here.
func TestAppendEnvelopeMatchesMarshal(t *testing.T) {
	if n := reflect.TypeFor[dispatch.Envelope]().NumField(); n != 10 {
		t.Fatalf("Envelope has %d fields; appendEnvelope writes 10: add the new one there and here", n)
	}
	at := time.Unix(1764600000, 123456789).UTC()
	strs := []string{"", "completed", "fs.stat", "<b>&\"x\"\\\n", "bad\xff\u2028"}
	results := []any{nil, fsops.StatResult{Path: "/a/<b>.txt", Exists: true, Type: "file", Size: 3, Mode: "-rw-------", MTime: at, SHA256: "ab"},
		fsops.StatResult{Path: "/missing"}, (*fsops.StatResult)(nil), &fsops.StatResult{Path: "/p"},
		map[string]any{"z": 1, "a": "<&>", "n": nil}, json.RawMessage(`{ "x" : "<y>", "l": [1, 2] }`), []string{},
		math.Inf(1), fsops.StatResult{Path: "/far", Exists: true, MTime: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}}
	errs := []*dispatch.ErrorBody{nil, {Code: "invalid_input", Message: "path: <bad>"},
		{Code: "x", Message: "y", Details: map[string]any{"steps": []any{map[string]any{"i": 1}}}}}
	arts := []*artifacts.Meta{nil, {ID: "a1", Name: "out<1>.txt", MIME: "text/plain", Size: 9, SHA256: "ff", Source: "machine.exec", CreatedAt: at}}
	arrs := [][]dispatch.Arrival{nil, {}, {{Seq: 3, FutureID: "f1", CompletedAt: at, Envelope: json.RawMessage(`{"state": "completed","x":"<&>"}`)}}}
	probes := []*RouteProbe{nil, {Nonce: "n<1>", ExpiresAt: at}}
	n := 0
	for i, state := range strs {
		for j, res := range results {
			for k, e := range errs {
				for l, arr := range arrs {
					env := &dispatch.Envelope{State: state, Primitive: strs[(i+1)%len(strs)], FutureID: strs[(i+j)%len(strs)],
						PermitID: strs[(j+k)%len(strs)], CommandID: strs[(k+l)%len(strs)], Replayed: (i+j)%2 == 0,
						Result: res, Error: e, Artifact: arts[(i+l)%len(arts)], Arrivals: arr}
					probe := probes[(j+l)%len(probes)]
					wire := struct {
						*dispatch.Envelope
						RouteProbe *RouteProbe `json:"route_probe,omitempty"`
					}{env, probe}
					want, werr := json.Marshal(wire)
					got, ok := appendEnvelope(nil, env, probe)
					if ok != (werr == nil) || ok && string(got) != string(want) {
						t.Fatalf("appendEnvelope = %s %v\nMarshal         %s %v", got, ok, want, werr)
					}
					enc, err := encodeEnvelope(env, probe)
					if (err == nil) != (werr == nil) || err == nil && string(enc) != string(want) {
						t.Fatalf("encodeEnvelope = %s %v, Marshal %s %v", enc, err, want, werr)
					}
					n++
				}
			}
		}
	}
	t.Logf("%d envelopes", n)
}
