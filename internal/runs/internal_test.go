package runs

import (
	"context"
	"database/sql"
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
	ev.Observe(dispatch.WithNested(ctx), &primitive.Spec{Tool: "t", Operation: "nested"}, "r:one")
	ev.Observe(ctx, spec, dispatch.AnonymousPrefix+"req")
	h, err := ev.History(ctx, "r:one", 5000)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != HistoryKeep {
		t.Fatalf("history holds %d calls, want %d", len(h), HistoryKeep)
	}
	if last := h[len(h)-1]; last != "t.x" {
		t.Fatalf("a nested call recorded: the newest is %s", last)
	}
	var n int
	if err := db.R.QueryRow(`SELECT COUNT(*) FROM call_history WHERE route <> 'r:one'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("an anonymous call recorded (%d rows, %v)", n, err)
	}
}

// TestRecordKeepsOrderAcrossRows: one batch larger than a history row
// holds, of two interleaved routes, is recorded in call order for each,
// and each route's history stays bounded.
func TestRecordKeepsOrderAcrossRows(t *testing.T) {
	ev, db := newTestEvents(t)
	ctx := context.Background()
	var recs []callRec
	want := map[string][]string{}
	for i := range 3*maxRowCalls + 7 {
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
		if len(all) < HistoryKeep || len(all) >= HistoryKeep+maxRowCalls {
			t.Fatalf("%s holds %d calls, want %d and less than a row more", route, len(all), HistoryKeep)
		}
	}
	// A batch is a row per route and maxRowCalls calls (here 5 rows for
	// 199 calls), not a row a call.
	var rows, most, calls int
	if err := db.R.QueryRow(`SELECT COUNT(*), MAX(calls), SUM(calls) FROM call_history`).Scan(&rows, &most, &calls); err != nil {
		t.Fatal(err)
	}
	if most != maxRowCalls || rows*30 > calls {
		t.Fatalf("%d rows of %d calls, the largest of %d: want rows of up to %d calls", rows, calls, most, maxRowCalls)
	}
}

// TestHistoryReadsPartOfARow: a history shorter than the rows it reads
// takes the newest calls of the oldest row it needs.
func TestHistoryReadsPartOfARow(t *testing.T) {
	ev, _ := newTestEvents(t)
	ctx := context.Background()
	var all []string
	for batch := range 3 {
		var recs []callRec
		for i := range 10 {
			sig := fmt.Sprintf("t.b%di%d", batch, i)
			recs = append(recs, callRec{at: int64(i), route: "r:one", sig: sig})
			all = append(all, sig)
		}
		ev.record(ctx, recs)
	}
	for _, n := range []int{0, 1, 9, 10, 11, 25, 30, 31, 1000} {
		h, err := ev.History(ctx, "r:one", n)
		if err != nil {
			t.Fatal(err)
		}
		if want := all[max(0, len(all)-n):]; !slices.Equal(h, want) && !(len(h) == 0 && len(want) == 0) {
			t.Errorf("History(%d) = %v, want %v", n, h, want)
		}
	}
	if h, _ := ev.History(ctx, "r:other", 10); len(h) != 0 {
		t.Errorf("another route's history: %v", h)
	}
}

// TestEventListUsesTheEntityIndex: List reads one entity's events through
// events_entity, not by a scan of every event.
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
// as rows of calls (layout=rows) beside the row per call in events that
// it replaced (layout=row_per_call: the same statements, on a table as
// migration 0015 left it):
//
//	go test -run '^$' -bench RecordCalls -count 6 ./internal/runs/ | benchstat -col /layout -
func BenchmarkRecordCalls(b *testing.B) {
	const batch = 128
	recs := make([]callRec, batch)
	for i := range recs {
		recs[i] = callRec{at: int64(i), route: []string{"r:a", "r:b"}[i%2], sig: "fs.stat"}
	}
	for _, layout := range []string{"rows", "row_per_call"} {
		b.Run("layout="+layout, func(b *testing.B) {
			ev, db := newTestEvents(b)
			ctx := context.Background()
			write := func() { ev.record(ctx, recs) }
			if layout == "row_per_call" {
				if _, err := db.W.Exec(`CREATE TABLE calls_then (seq INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL,
					route TEXT NOT NULL DEFAULT '', kind TEXT NOT NULL, entity_id TEXT NOT NULL DEFAULT '', data TEXT NOT NULL DEFAULT '{}') STRICT;
					CREATE INDEX calls_then_entity ON calls_then(entity_id, seq) WHERE kind <> 'call';
					CREATE INDEX calls_then_route_kind ON calls_then(route, kind, seq)`); err != nil {
					b.Fatal(err)
				}
				insert := `INSERT INTO calls_then(at, route, kind, entity_id) VALUES ` + strings.TrimSuffix(strings.Repeat(`(?,?,'call',?),`, batch), ",")
				write = func() { recordRowPerCall(b, db, insert, recs) }
			}
			for range 2 * HistoryKeep / batch { // a full history first
				write()
			}
			b.ResetTimer()
			for b.Loop() {
				write()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/call")
		})
	}
}

// recordRowPerCall is the baseline's write: one INSERT of every call, and
// a trim of a route after each 64th of its calls.
func recordRowPerCall(b *testing.B, db *store.DB, insert string, recs []callRec) {
	ctx := context.Background()
	err := db.InTx(ctx, func(tx *sql.Tx) error {
		args := make([]any, 0, 3*len(recs))
		for _, r := range recs {
			args = append(args, r.at, r.route, r.sig)
		}
		res, err := db.TxExec(ctx, tx, insert, args...)
		if err != nil {
			return err
		}
		last, err := res.LastInsertId()
		if err != nil {
			return err
		}
		var trim []string
		for i, r := range recs {
			if (last-int64(len(recs)-1-i))%64 == 0 && !slices.Contains(trim, r.route) {
				trim = append(trim, r.route)
			}
		}
		for _, route := range trim {
			if _, err := db.TxExec(ctx, tx, `DELETE FROM calls_then WHERE kind = 'call' AND route = ? AND seq <= (
				SELECT seq FROM calls_then WHERE kind = 'call' AND route = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)`, route, route, HistoryKeep); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}
