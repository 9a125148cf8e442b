package runs_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/mcpserver"
)

// trusted runs exec without permits, so these tests exercise the run tool
// rather than the operator's approval.
func trusted(c *config.Config) { c.Policy.Mode = config.ModeTrusted }

// arrival is one delivered result.
type arrival struct {
	Seq      float64
	FutureID string
	Env      map[string]any
}

// collect polls the conversation (with host_info calls) until an arrival
// for every id came, and returns them in delivery order. Arrivals already
// delivered on the responses in seen (such as the scatter's own) count.
func collect(t *testing.T, c *hearthtest.Client, ids []string, seen ...*hearthtest.Result) []arrival {
	t.Helper()
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	var got []arrival
	take := func(r *hearthtest.Result) {
		for _, a := range r.Arrivals() {
			id, _ := a["future_id"].(string)
			if !want[id] {
				continue
			}
			delete(want, id)
			env, _ := a["envelope"].(map[string]any)
			got = append(got, arrival{Seq: a["seq"].(float64), FutureID: id, Env: env})
		}
	}
	for _, r := range seen {
		take(r)
	}
	deadline := time.Now().Add(60 * time.Second)
	for len(want) > 0 && time.Now().Before(deadline) {
		take(c.Call("machine", map[string]any{"operation": "host_info"}))
		if len(want) > 0 {
			time.Sleep(30 * time.Millisecond)
		}
	}
	if len(want) > 0 {
		t.Fatalf("no arrival for %v (got %d)", want, len(got))
	}
	return got
}

// futureIDs returns the future ids of a scatter answer, by index.
func futureIDs(t *testing.T, r *hearthtest.Result) []string {
	t.Helper()
	fs, ok := r.Get("result.futures").([]any)
	if !ok {
		t.Fatalf("scatter answer without futures: %s", r.Raw)
	}
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = hearthtest.Get(f, "future_id").(string)
		if hearthtest.Get(f, "index") != float64(i) {
			t.Fatalf("futures out of index order: %s", r.Raw)
		}
	}
	return out
}

func byID(as []arrival) map[string]arrival {
	m := map[string]arrival{}
	for _, a := range as {
		m[a.FutureID] = a
	}
	return m
}

// mcpRoute is the stored route of a hearth/conversation.
func mcpRoute(conv string) string {
	return mcpserver.Route(map[string]any{"hearth/conversation": conv})
}

// needsPOSIX skips a test that runs POSIX programs (sh, echo, printf,
// sleep) through machine.exec.
func needsPOSIX(t *testing.T) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("runs POSIX programs")
	}
}
