package runs

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/store"
)

func TestCommandTextQuoting(t *testing.T) {
	for _, c := range []struct{ in, posix, windows string }{
		{"plain-1.2", "plain-1.2", "plain-1.2"},
		{"", "''", `""`},
		{"a b", "'a b'", `"a b"`},
		{`it's`, `'it'\''s'`, `it's`},
		{`a"b`, `'a"b'`, `"a\"b"`},
		{`a b\`, `'a b\'`, `"a b\\"`},
		{`a\"b c`, `'a\"b c'`, `"a\\\"b c"`},
		{`$(x); y`, `'$(x); y'`, `"$(x); y"`},
	} {
		if got := posixQuote(c.in); got != c.posix {
			t.Errorf("posixQuote(%q) = %s, want %s", c.in, got, c.posix)
		}
		if got := windowsQuote(c.in); got != c.windows {
			t.Errorf("windowsQuote(%q) = %s, want %s", c.in, got, c.windows)
		}
	}
	if got := commandText([]string{"oracle", "-p", "a b"}, "linux"); got != "oracle -p 'a b'" {
		t.Errorf("commandText: %s", got)
	}
}

func TestFieldAtAndPlaceholder(t *testing.T) {
	spec := &primitive.Spec{Tool: "t", Operation: "x", Fields: []primitive.Field{
		{Name: "args", Type: primitive.TArray, Items: &primitive.Field{Type: primitive.TString}},
		{Name: "env", Type: primitive.TObject, Values: primitive.TString},
		{Name: "job", Type: primitive.TObject, Fields: []primitive.Field{
			{Name: "n", Type: primitive.TInteger, Min: primitive.Bound(3)},
			{Name: "mode", Type: primitive.TString, Enum: []string{"a", "b"}},
			{Name: "list", Type: primitive.TArray, Min: primitive.Bound(2), Items: &primitive.Field{Type: primitive.TBoolean}},
		}},
		{Name: "sha", Type: primitive.TString, Nullable: true},
	}}
	for _, c := range []struct {
		at   string
		want any
	}{
		{"args[3]", "$future"},
		{"env.HOME", "$future"},
		{"job.n", 3.0},
		{"job.mode", "a"},
		{"job.list", []any{false, false}},
		{"job.list[1]", false},
		{"sha", nil},
		{"nope", nil},
		{"args.x", nil},
	} {
		got := placeholder(fieldAt(spec, c.at))
		if gs, ws := toJSON(got), toJSON(c.want); gs != ws {
			t.Errorf("placeholder at %s = %s, want %s", c.at, gs, ws)
		}
	}
	if got := splitPath("a.b[2][0].c"); len(got) != 5 || got[2] != "[2]" || got[3] != "[0]" || got[4] != "c" {
		t.Errorf("splitPath: %q", got)
	}
}

// newTestEvents is a call history over a fresh database, closed when the
// test ends.
func newTestEvents(t testing.TB) (*Events, *store.DB) {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &Events{DB: db}, db
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestCallHistoryIsBounded(t *testing.T) {
	ev, db := newTestEvents(t)
	spec := &primitive.Spec{Tool: "t", Operation: "x"}
	ctx := context.Background()
	for range HistoryKeep + 200 {
		ev.Observe(ctx, spec, "r:one")
	}
	ev.Observe(dispatch.WithNested(ctx), spec, "r:one")
	ev.Observe(ctx, spec, dispatch.AnonymousPrefix+"req")
	h, err := ev.History(ctx, "r:one", 5000)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) < HistoryKeep || len(h) > HistoryKeep+64 {
		t.Fatalf("history holds %d calls, want about %d", len(h), HistoryKeep)
	}
	var n int
	db.R.QueryRow(`SELECT COUNT(*) FROM events WHERE route <> 'r:one'`).Scan(&n)
	if n != 0 {
		t.Fatalf("anonymous route recorded")
	}
}

// TestRecordKeepsOrderAcrossStatements: one batch larger than an INSERT
// statement holds, of two interleaved routes, is recorded in call order
// for each, and each route's history stays bounded.
func TestRecordKeepsOrderAcrossStatements(t *testing.T) {
	ev, _ := newTestEvents(t)
	ctx := context.Background()
	var recs []callRec
	want := map[string][]string{}
	for i := range 3*insertCallsChunk + 7 {
		route := []string{"r:a", "r:b"}[i%3/2]
		sig := fmt.Sprintf("t.op%d", i)
		recs = append(recs, callRec{at: int64(i), route: route, sig: sig})
		want[route] = append(want[route], sig)
	}
	// Enough batches that either route would hold twice HistoryKeep
	// untrimmed.
	for range 2*HistoryKeep/len(want["r:b"]) + 1 {
		ev.record(ctx, recs)
	}
	for route, sigs := range want {
		h, err := ev.History(ctx, route, len(sigs))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(h, sigs) {
			t.Fatalf("%s: history %v, want %v", route, h, sigs)
		}
		all, _ := ev.History(ctx, route, 50000)
		if len(all) > HistoryKeep+63 {
			t.Fatalf("%s holds %d calls, want at most about %d", route, len(all), HistoryKeep)
		}
	}
}

// TestChunkSizeUsesEightStatements: a batch of any size is written in
// chunks of at most insertCallsChunk calls, each a power of two (eight
// statement texts in all, each prepared once).
func TestChunkSizeUsesEightStatements(t *testing.T) {
	sizes := map[int]bool{}
	for n := 1; n <= 3*insertCallsChunk+1; n++ {
		left := n
		for left > 0 {
			c := chunkSize(left)
			if c < 1 || c > left || c > insertCallsChunk || c&(c-1) != 0 {
				t.Fatalf("chunkSize(%d) = %d (of a batch of %d)", left, c, n)
			}
			sizes[c] = true
			left -= c
		}
	}
	if len(sizes) != 8 {
		t.Fatalf("%d statement sizes, want 8: %v", len(sizes), sizes)
	}
}

// TestEventListUsesTheEntityIndex: List reads one entity's events through
// events_entity, which leaves call history out, not by a scan of every
// event.
func TestEventListUsesTheEntityIndex(t *testing.T) {
	ev, _ := newTestEvents(t)
	plan, err := ev.DB.QueryPlan(context.Background(), listQuery(true), "r:x", "run_1", 10)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(plan, "; "); !strings.Contains(got, "USING INDEX events_entity") {
		t.Fatalf("query plan %q: the entity's events are not read through events_entity", got)
	}
}

// BenchmarkRecordCalls: the call history's write of a batch of 128 calls
// of two conversations, in steady state (each route trimmed as it goes),
// with the entity index leaving call history out (as migrated) beside the
// same table with every row in it (as before migration 0015):
//
//	go test -run '^$' -bench RecordCalls -count 6 ./internal/runs/ | benchstat -col /index -
func BenchmarkRecordCalls(b *testing.B) {
	for _, full := range []bool{false, true} {
		name := "index=partial"
		if full {
			name = "index=full"
		}
		b.Run(name, func(b *testing.B) {
			ev, _ := newTestEvents(b)
			if full {
				if _, err := ev.DB.W.Exec(`DROP INDEX events_entity; CREATE INDEX events_entity ON events(entity_id, seq)`); err != nil {
					b.Fatal(err)
				}
			}
			ctx := context.Background()
			recs := make([]callRec, insertCallsChunk)
			for i := range recs {
				recs[i] = callRec{at: int64(i), route: []string{"r:a", "r:b"}[i%2], sig: "fs.stat"}
			}
			for range 2 * HistoryKeep / len(recs) { // a full history first
				ev.record(ctx, recs)
			}
			b.ResetTimer()
			for b.Loop() {
				ev.record(ctx, recs)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/call")
		})
	}
}
