package dispatch

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/artifacts"
	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/store"
)

const testRoute = "r:deps"

type depsFixture struct {
	db      *store.DB
	reg     *primitive.Registry
	release chan struct{}
	counted atomic.Int64
}

func newDepsFixture(t *testing.T) *depsFixture {
	t.Helper()
	db := openTestDB(t)
	f := &depsFixture{db: db, release: make(chan struct{})}
	echo := func(_ context.Context, _ *primitive.Call, in json.RawMessage) (any, error) {
		var m map[string]any
		err := json.Unmarshal(in, &m)
		return m, err
	}
	fields := []primitive.Field{
		{Name: "text", Type: primitive.TString},
		{Name: "n", Type: primitive.TInteger},
		{Name: "list", Type: primitive.TArray, Items: &primitive.Field{Type: primitive.TString}},
	}
	var err error
	f.reg, err = primitive.NewRegistry(
		&primitive.Spec{Tool: "t", Operation: "echo", Risk: primitive.RiskRead, Fields: fields, Run: echo},
		&primitive.Spec{Tool: "t", Operation: "fail", Risk: primitive.RiskRead, Run: func(context.Context, *primitive.Call, json.RawMessage) (any, error) {
			return nil, primitive.Failed("boom", "it failed")
		}},
		&primitive.Spec{Tool: "t", Operation: "block", Risk: primitive.RiskRead, Run: func(ctx context.Context, _ *primitive.Call, _ json.RawMessage) (any, error) {
			select {
			case <-f.release:
				return map[string]any{"released": true}, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}},
		&primitive.Spec{Tool: "t", Operation: "count", Risk: primitive.RiskRead, Run: func(context.Context, *primitive.Call, json.RawMessage) (any, error) {
			return f.counted.Add(1), nil
		}},
	)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *depsFixture) start(t *testing.T, slots int) *Dispatcher {
	t.Helper()
	d, err := New(Options{DB: f.db, Registry: f.reg, Gov: testGovernor(t, f.db), MaxFutures: slots, Budget: 100 * time.Millisecond, MaxResultBytes: 1 << 20, MaxArrivals: 100, MaxArrivalBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return d
}

func (f *depsFixture) spec(name string) *primitive.Spec {
	s, _ := f.reg.Lookup("t." + name)
	return s
}

func enqueue(t *testing.T, d *Dispatcher, prim, input string, deps ...string) string {
	t.Helper()
	s, _ := d.Registry.Lookup("t." + prim)
	id, err := d.Enqueue(context.Background(), Request{Route: testRoute, Spec: s, Input: json.RawMessage(input)}, deps)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// settle waits for a future to settle and returns its envelope.
func settle(t *testing.T, d *Dispatcher, id string) (Future, map[string]any) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		f, err := d.GetFuture(context.Background(), testRoute, id)
		if err != nil {
			t.Fatal(err)
		}
		if Settled(f.State) {
			var env map[string]any
			if err := json.Unmarshal(f.Result, &env); err != nil {
				t.Fatalf("future %s result %s: %v", id, f.Result, err)
			}
			return f, env
		}
		if time.Now().After(deadline) {
			t.Fatalf("future %s still %s", id, f.State)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func errCode(env map[string]any) string {
	e, _ := env["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

func TestEnqueueResolvesReferences(t *testing.T) {
	f := newDepsFixture(t)
	d := f.start(t, 4)
	defer d.Stop()
	a := enqueue(t, d, "echo", `{"text":"hello world","n":7}`)
	b := enqueue(t, d, "echo", `{"text":{"$future":"`+a+`","$path":"result.text"},"list":["x",{"$future":"`+a+`","$path":"result.text"}],"n":{"$future":"`+a+`","$path":"result.n"}}`)
	fb, env := settle(t, d, b)
	if fb.State != "completed" {
		t.Fatalf("b: %v", env)
	}
	res := env["result"].(map[string]any)
	if res["text"] != "hello world" || res["n"] != float64(7) || res["list"].([]any)[1] != "hello world" || len(res["list"].([]any)) != 2 {
		t.Fatalf("resolved input: %v", res)
	}
	var deps int
	f.db.R.QueryRow(`SELECT COUNT(*) FROM future_deps WHERE future_id = ? AND dep_id = ?`, b, a).Scan(&deps)
	if deps != 1 {
		t.Fatal("a reference must record the dependency")
	}
	var input string
	f.db.R.QueryRow(`SELECT input FROM futures WHERE id = ?`, b).Scan(&input)
	if strings.Contains(input, "$future") {
		t.Fatalf("the stored input must be the resolved one that ran: %s", input)
	}
}

func TestEnqueueDependencyOutcomes(t *testing.T) {
	f := newDepsFixture(t)
	d := f.start(t, 4)
	defer d.Stop()
	failed := enqueue(t, d, "fail", `{}`)
	dep := enqueue(t, d, "echo", `{"text":"x"}`, failed)
	trans := enqueue(t, d, "echo", `{"text":"y"}`, dep)
	ok := enqueue(t, d, "echo", `{"text":"z","n":3}`)
	typeErr := enqueue(t, d, "echo", `{"text":{"$future":"`+ok+`","$path":"result.n"}}`)
	missing := enqueue(t, d, "echo", `{"text":{"$future":"`+ok+`","$path":"result.nothing"}}`)
	unknown := enqueue(t, d, "echo", `{}`, "fut_aaaaaaaaaaaaaaaaaaaa")
	index := enqueue(t, d, "echo", `{"text":{"$future":0,"$path":"result.text"}}`)
	malformed := enqueue(t, d, "echo", `{"text":{"$future":"`+ok+`"}}`)

	for _, c := range []struct {
		id, state, code, msg string
	}{
		{dep, "blocked", "dependency_failed", failed},
		{trans, "blocked", "dependency_failed", dep},
		{typeErr, "failed", "invalid_input", `"text": must be a string`},
		{missing, "blocked", "missing_path", "result.nothing"},
		{unknown, "blocked", "unknown_dependency", "fut_aaaaaaaaaaaaaaaaaaaa"},
		{index, "blocked", "bad_reference", "index"},
		{malformed, "blocked", "bad_reference", "$path"},
	} {
		fut, env := settle(t, d, c.id)
		msg, _ := env["error"].(map[string]any)["message"].(string)
		if fut.State != c.state || errCode(env) != c.code || !strings.Contains(msg, c.msg) {
			t.Errorf("%s: state %s, envelope %v; want %s/%s naming %q", c.id, fut.State, env, c.state, c.code, c.msg)
		}
	}
	// Every settled future has exactly one arrival.
	rows, err := f.db.R.Query(`SELECT future_id, COUNT(*) FROM arrivals GROUP BY future_id HAVING COUNT(*) <> 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var n int
		rows.Scan(&id, &n)
		t.Errorf("future %s has %d arrivals", id, n)
	}
}

func TestEnqueueForeignDependencyIsBlocked(t *testing.T) {
	f := newDepsFixture(t)
	d := f.start(t, 4)
	defer d.Stop()
	other, err := d.Enqueue(context.Background(), Request{Route: "r:other", Spec: f.spec("echo"), Input: json.RawMessage(`{}`)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	id := enqueue(t, d, "echo", `{"text":{"$future":"`+other+`","$path":"result.text"}}`)
	fut, env := settle(t, d, id)
	if fut.State != "blocked" || errCode(env) != "unknown_dependency" {
		t.Fatalf("cross-conversation reference: %v", env)
	}
}

// TestCancelledDependencyReleasesDependent: a dependency cancelled while
// queued (no completion) still settles its dependents.
func TestCancelledDependencyReleasesDependent(t *testing.T) {
	f := newDepsFixture(t)
	d := f.start(t, 1)
	defer d.Stop()
	blocker := enqueue(t, d, "block", `{}`)
	deadline := time.Now().Add(5 * time.Second)
	for {
		fut, _ := d.GetFuture(context.Background(), testRoute, blocker)
		if fut.State == "running" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("blocker never ran")
		}
		time.Sleep(5 * time.Millisecond)
	}
	queued := enqueue(t, d, "echo", `{"text":"q"}`)
	waiting := enqueue(t, d, "echo", `{"text":{"$future":"`+queued+`","$path":"result.text"}}`)
	if _, err := d.CancelQueued(context.Background(), testRoute, queued); err != nil {
		t.Fatal(err)
	}
	fut, env := settle(t, d, waiting)
	if fut.State != "blocked" || errCode(env) != "dependency_failed" {
		t.Fatalf("dependent of a cancelled call: %v", env)
	}
	close(f.release)
	settle(t, d, blocker)
}

// TestRecoverSettlesAndReleases: after a stop with work running, queued and
// waiting, a new dispatcher blocks the interrupted call (and its
// dependents), runs the queued one and then its dependents, and releases a
// waiting future whose dependencies had already settled.
func TestRecoverSettlesAndReleases(t *testing.T) {
	f := newDepsFixture(t)
	d := f.start(t, 1)
	running := enqueue(t, d, "block", `{}`)
	deadline := time.Now().Add(5 * time.Second)
	for {
		fut, _ := d.GetFuture(context.Background(), testRoute, running)
		if fut.State == "running" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("never ran")
		}
		time.Sleep(5 * time.Millisecond)
	}
	onRunning := enqueue(t, d, "echo", `{"text":"x"}`, running)
	queued := enqueue(t, d, "echo", `{"text":"queued"}`)
	onQueued := enqueue(t, d, "echo", `{"text":{"$future":"`+queued+`","$path":"result.text"}}`)
	done := enqueue(t, d, "count", `{}`, running) // stays waiting
	d.Stop()
	// A shutdown records the running call as stopped (Hearth stopped it);
	// a crash records nothing: the database is put back as a crash would
	// have left it, the call running and its arrival never queued.
	for _, q := range []string{`UPDATE futures SET state = 'running', result = NULL, finished_at = NULL WHERE id = ?`, `DELETE FROM arrivals WHERE future_id = ?`} {
		if _, err := f.db.W.Exec(q, running); err != nil {
			t.Fatal(err)
		}
	}

	// A waiting future whose dependency had settled before the crash.
	finished, orphan := "fut_finishedfinished2222", "fut_orphanorphanorphan22"
	now := time.Now().UnixMilli()
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO futures(id, route, primitive, input, input_sha256, state, detached, created_at, result) VALUES (?,?,?,?,?,?,1,?,?)`,
			[]any{finished, testRoute, "t.echo", `{}`, "x", "completed", now, `{"state":"completed","result":{"text":"f"}}`}},
		{`INSERT INTO futures(id, route, primitive, input, input_sha256, state, detached, created_at) VALUES (?,?,?,?,?,?,1,?)`,
			[]any{orphan, testRoute, "t.echo", `{"text":{"$future":"` + finished + `","$path":"result.text"}}`, "x", "waiting", now}},
		{`INSERT INTO future_deps(future_id, dep_id) VALUES (?,?)`, []any{orphan, finished}},
	} {
		if _, err := f.db.W.Exec(q.sql, q.args...); err != nil {
			t.Fatal(err)
		}
	}

	for _, id := range []string{onRunning, onQueued, done} {
		var st string
		f.db.R.QueryRow(`SELECT state FROM futures WHERE id = ?`, id).Scan(&st)
		if st != StateWaiting {
			t.Fatalf("%s is %s before the restart", id, st)
		}
	}
	d2 := f.start(t, 2)
	defer d2.Stop()
	if fut, env := settle(t, d2, running); fut.State != "blocked" || errCode(env) != "unknown" {
		t.Errorf("interrupted: %v", env)
	}
	if fut, env := settle(t, d2, onRunning); fut.State != "blocked" || errCode(env) != "dependency_failed" {
		t.Errorf("dependent of the interrupted call: %v", env)
	}
	if fut, _ := settle(t, d2, queued); fut.State != "completed" {
		t.Errorf("queued: %s", fut.State)
	}
	if fut, env := settle(t, d2, onQueued); fut.State != "completed" || env["result"].(map[string]any)["text"] != "queued" {
		t.Errorf("dependent of the queued call: %v", env)
	}
	if fut, env := settle(t, d2, orphan); fut.State != "completed" || env["result"].(map[string]any)["text"] != "f" {
		t.Errorf("waiting future with settled dependencies: %v", env)
	}
	if f.counted.Load() != 0 {
		t.Error("a dependent of an interrupted call ran")
	}
}

// TestConcurrentDependenciesReleaseOnce: a future whose dependencies settle
// at the same moment runs exactly once.
func TestConcurrentDependenciesReleaseOnce(t *testing.T) {
	f := newDepsFixture(t)
	d := f.start(t, 8)
	defer d.Stop()
	var ids []string
	for range 30 {
		a := enqueue(t, d, "echo", `{"text":"a"}`)
		b := enqueue(t, d, "echo", `{"text":"b"}`)
		c := enqueue(t, d, "echo", `{"text":"c"}`)
		ids = append(ids, enqueue(t, d, "count", `{}`, a, b, c))
	}
	for _, id := range ids {
		if fut, env := settle(t, d, id); fut.State != "completed" {
			t.Fatalf("%s: %v", id, env)
		}
	}
	if n := f.counted.Load(); n != 30 {
		t.Fatalf("dependents ran %d times, want 30", n)
	}
}

func TestMapRefsAndLookup(t *testing.T) {
	v, err := DecodeJSON([]byte(`{"a":[1,{"$future":2,"$path":"result.x"}],"b":{"c":{"$future":"fut_x","$path":"y.0"}},"n":12345678901234567890}`))
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	out, err := MapRefs(v, "", func(at string, r Ref) (any, error) {
		seen = append(seen, at)
		return "R", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(out)
	if string(b) != `{"a":[1,"R"],"b":{"c":"R"},"n":12345678901234567890}` || strings.Join(seen, ",") != "a[1],b.c" {
		t.Fatalf("MapRefs: %s %v", b, seen)
	}
	if _, err := MapRefs(map[string]any{"x": map[string]any{"$path": "a"}}, "", nil); err == nil || !strings.Contains(err.Error(), "x:") {
		t.Fatalf("malformed reference: %v", err)
	}
	env, _ := DecodeJSON([]byte(`{"result":{"list":[{"p":"v"}]}}`))
	if got, ok := Lookup(env, "result.list.0.p"); !ok || got != "v" {
		t.Fatalf("Lookup: %v %v", got, ok)
	}
	if _, ok := Lookup(env, "result.list.1.p"); ok {
		t.Fatal("Lookup past the end")
	}
}

// TestReferenceIntoSpilledResult: a dependency whose result spilled to an
// artifact is read back to resolve the reference.
func TestReferenceIntoSpilledResult(t *testing.T) {
	f := newDepsFixture(t)
	d, err := New(Options{DB: f.db, Registry: f.reg, Gov: testGovernor(t, f.db), MaxFutures: 2, Budget: 100 * time.Millisecond, MaxResultBytes: 256, MaxArrivals: 100, MaxArrivalBytes: 1 << 20,
		Artifacts: &artifacts.Store{DB: f.db, Dir: filepath.Join(t.TempDir(), "artifacts")}})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer d.Stop()
	big := strings.Repeat("x", 1000) + "-end"
	a := enqueue(t, d, "echo", `{"text":"`+big+`"}`)
	if _, env := settle(t, d, a); env["artifact"] == nil {
		t.Fatalf("the dependency's result did not spill: %v", env)
	}
	b := enqueue(t, d, "echo", `{"text":{"$future":"`+a+`","$path":"result.text"}}`)
	fb, env := settle(t, d, b)
	if fb.State != "completed" {
		t.Fatalf("dependent of a spilled result: %v", env)
	}
	var input string
	f.db.R.QueryRow(`SELECT input FROM futures WHERE id = ?`, b).Scan(&input)
	if !strings.Contains(input, "-end") {
		t.Fatalf("resolved from the spilled envelope: %s", input)
	}
}
