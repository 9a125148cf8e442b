package jobs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/artifacts"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/jobs"
	"github.com/hearth-dev/hearth/internal/jsonx"
	"github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/internal/machine"
	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/risk"
	"github.com/hearth-dev/hearth/internal/startup/startuptest"
	"github.com/hearth-dev/hearth/internal/store"
)

// env is a queue on a real database with real process execution and a
// real dispatcher (mailbox, futures).
type env struct {
	t    *testing.T
	dir  string
	db   *store.DB
	d    *dispatch.Dispatcher
	q    *jobs.Queue
	reg  *primitive.Registry
	max  int
	opts envOpts
}

type envOpts struct {
	maxJobs    int
	maxFutures int
	// extra primitives registered beside the task tool.
	extra []*primitive.Spec
}

func needShell(t testing.TB) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("these tests drive POSIX sh")
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh on PATH")
	}
}

func newEnv(t *testing.T, o envOpts) *env {
	t.Helper()
	needShell(t)
	if o.maxJobs == 0 {
		o.maxJobs = 4
	}
	if o.maxFutures == 0 {
		o.maxFutures = 4
	}
	e := &env{t: t, dir: t.TempDir(), opts: o}
	db, err := store.Open(context.Background(), filepath.Join(e.dir, "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	e.db = db
	t.Cleanup(func() { db.Close() })
	e.start()
	return e
}

// start builds a dispatcher and queue on e.db, as a fresh Hearth process
// would, and starts them (recovering what a previous one left).
func (e *env) start() { e.startWith(nil) }

// startWith is start with a chance to set queue fields before Start.
func (e *env) startWith(edit func(*jobs.Queue)) {
	t := e.t
	arts := &artifacts.Store{DB: e.db, Dir: filepath.Join(e.dir, "artifacts")}
	m := machine.New(e.opts.maxJobs)
	m.Artifacts = arts
	m.MaxOutputBytes = 1024
	m.MaxCaptureBytes = 1 << 20
	m.DefaultTimeout = time.Minute
	m.MaxTimeout = time.Hour
	e.q = &jobs.Queue{DB: e.db, Exec: m.Exec, MaxConcurrent: e.opts.maxJobs,
		DefaultTimeout: time.Minute, MaxTimeout: time.Hour}
	reg, err := primitive.NewRegistry(append(e.q.Specs(), e.opts.extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	e.reg = reg
	if edit != nil {
		edit(e.q)
	}
	class, err := e.q.EngineClass()
	if err != nil {
		t.Fatal(err)
	}
	e.d, err = dispatch.New(dispatch.Options{DB: e.db, Registry: reg, Artifacts: arts, Gov: e.governor(), MaxFutures: e.opts.maxFutures, Budget: 100 * time.Millisecond,
		MaxResultBytes: 64 << 10, MaxArrivals: 1000, MaxArrivalBytes: 4 << 20, Classes: []dispatch.Class{class}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.d.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	d := e.d
	t.Cleanup(d.Stop)
}

// governor is the real governor over e.db (trusted: these tests exercise
// the queue, not the operator's approval), with the ledger key kept across
// restarts.
func (e *env) governor() *govern.Governor {
	e.t.Helper()
	skey, _, err := ledger.LoadOrCreateKey(ledger.FileKeyStore{Path: filepath.Join(e.dir, "ledger.key")})
	if err != nil {
		e.t.Fatal(err)
	}
	l, err := ledger.Open(e.db, skey)
	if err != nil {
		e.t.Fatal(err)
	}
	futures, err := dispatch.NewFutureReader(e.db)
	if err != nil {
		e.t.Fatal(err)
	}
	g, err := govern.New(govern.Options{DB: e.db, Ledger: l, Futures: futures, Startup: startuptest.Index(e.t), DefaultMode: config.ModeTrusted, PermitTTL: time.Minute, InlineBudget: 100 * time.Millisecond,
		// The test primitives' rows beside the one table.
		Rows: risk.Rows.With(risk.Table{
			"t.block": risk.KindRead, "t.c": risk.KindRead, "t.count": risk.KindRead, "t.echo": risk.KindRead,
			"t.engine": risk.KindRead, "t.fail": risk.KindRead, "t.picky": risk.KindRead, "t.quick": risk.KindRead,
			"t.r": risk.KindRead, "t.probe": risk.KindRecords, "t.probe_kill": risk.KindKill, "t.w": risk.KindRecords,
			"test.block": risk.KindRecords,
		})})
	if err != nil {
		e.t.Fatal(err)
	}
	return g
}

// restart stops the queue (killing running jobs and leaving them running
// in the database, as a crash would) and starts a new one.
func (e *env) restart() {
	e.d.Stop()
	e.start()
}

// call runs one task operation for route through strict decoding and the
// dispatcher, as the MCP facade does, and returns the decoded envelope.
func (e *env) call(route string, args map[string]any) map[string]any {
	e.t.Helper()
	raw, _ := json.Marshal(args)
	spec, input, detach, err := e.reg.Decode("task", raw)
	var env *dispatch.Envelope
	if err != nil {
		env = dispatch.ErrorEnvelope("task", primitive.Failed("invalid_input", "%s", err.Error()))
	} else {
		env = e.d.Call(context.Background(), dispatch.Request{Route: route, Spec: spec, Input: input, Detach: detach})
	}
	b, err := json.Marshal(env)
	if err != nil {
		e.t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		e.t.Fatal(err)
	}
	return out
}

// submit submits jobs[] for route and returns their ids.
func (e *env) submit(route string, js ...map[string]any) []string {
	e.t.Helper()
	arr := make([]any, len(js))
	for i, j := range js {
		arr[i] = j
	}
	out := e.call(route, map[string]any{"operation": "submit", "jobs": arr})
	if out["state"] != "completed" {
		e.t.Fatalf("submit: %v", out)
	}
	var ids []string
	for _, id := range get(out, "result.ids").([]any) {
		ids = append(ids, id.(string))
	}
	return ids
}

// wait waits (in process) for a job to be terminal. Queue.Wait returns on
// every change of state, so it waits again while the job is queued or
// running.
func (e *env) wait(route, id string) *jobs.Job {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		j, timedOut, err := e.q.Wait(context.Background(), e.d, route, id, time.Until(deadline))
		if err != nil {
			e.t.Fatalf("wait %s: %v", id, err)
		}
		if timedOut {
			e.t.Fatalf("job %s still %s after 30s", id, j.State)
		}
		if dispatch.Settled(j.State) {
			return j
		}
	}
}

// waitState waits until job id is in state (e.g. running).
func (e *env) waitState(route, id, state string) *jobs.Job {
	e.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		j, err := e.q.Get(context.Background(), route, id)
		if err != nil {
			e.t.Fatal(err)
		}
		if j.State == state {
			return j
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("job %s is %s, never %s", id, j.State, state)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// arrivals drains route's mailbox (as distinct requests do) and returns
// the arrivals' envelopes keyed by id.
func (e *env) arrivals(route string) map[string]map[string]any {
	e.t.Helper()
	out := map[string]map[string]any{}
	for i := 0; ; i++ {
		arr, err := e.d.Deliver(context.Background(), route, fmt.Sprintf("fp-%d-%d", time.Now().UnixNano(), i))
		if err != nil {
			e.t.Fatal(err)
		}
		if len(arr) == 0 {
			return out
		}
		for _, a := range arr {
			var m map[string]any
			if err := json.Unmarshal(a.Envelope, &m); err != nil {
				e.t.Fatal(err)
			}
			out[a.FutureID] = m
		}
	}
}

func (e *env) countJobs() int {
	var n int
	if err := e.db.R.QueryRow(`SELECT COUNT(*) FROM jobs`).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// sh is a job running a POSIX shell script with positional arguments.
func sh(script string, args ...string) map[string]any {
	a := append([]any{"-c", script}, anySlice(args)...)
	return map[string]any{"command": "sh", "args": a}
}

func anySlice(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func with(j map[string]any, kv ...any) map[string]any {
	for i := 0; i < len(kv); i += 2 {
		j[kv[i].(string)] = kv[i+1]
	}
	return j
}

// get walks a dotted path in decoded JSON.
func get(v any, path string) any { return jsonx.GetPath(v, path) }

// dispatchRequest is a detached call of spec with input {"n": n}.
func dispatchRequest(route string, spec *primitive.Spec, n int) dispatch.Request {
	input, _ := json.Marshal(map[string]any{"n": n})
	return dispatch.Request{Route: route, Spec: spec, Input: input, Detach: true}
}
