package jobs_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/artifacts"
	"github.com/hearth-dev/hearth/internal/control"
	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/govern/governtest"
	"github.com/hearth-dev/hearth/internal/jobs"
	"github.com/hearth-dev/hearth/internal/proc"
	"github.com/hearth-dev/hearth/internal/session"
	"github.com/hearth-dev/hearth/internal/store"
	"github.com/hearth-dev/hearth/internal/store/storetest"
)

// oldJob is a row of the job queue before jobs became futures (schema
// version 13), as that queue's code wrote it.
type oldJob struct {
	id, command, args, env, state, onInterrupt, reason, outcome, result string
	attempts, interruptions, waiting                                    int
	exit                                                                *int
	runAt, created                                                      int64
	started, finished                                                   int64 // 0: NULL
	deps                                                                []string
}

// TestMigrationCarriesOldJobs builds a database with the schema of version
// 13, fills its queue as the old code would (terminal, running, queued,
// waiting on a dependency, parked for a permit, delayed), migrates it by
// opening it, and checks that task.get and task.list answer what the old
// queue answered for every job, and that the live ones carry on: the
// interrupted one is requeued and runs, its dependent then runs, the due
// one runs, the parked one still waits for its permit.
func TestMigrationCarriesOldJobs(t *testing.T) {
	needShell(t)
	ctx := context.Background()
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	path := filepath.Join(dir, "hearth.db")
	now := time.Now().UnixMilli()
	three, zero := 3, 0
	appendTo := func(label string) string {
		b, _ := json.Marshal([]string{"-c", `echo "$0" >> "$1"`, label, marker})
		return string(b)
	}
	old := []oldJob{
		{id: "job_donedonedonedonedone", command: "echo", args: `["hi"]`, env: `{"SECRET":"v","A":"b"}`, state: "completed", onInterrupt: "requeue",
			result: `{"exit_code":0,"stdout":"hi\n"}`, attempts: 1, exit: &zero, runAt: now - 9000, created: now - 9000, started: now - 8999, finished: now - 8998},
		{id: "job_failfailfailfailfail", command: "sh", args: `["-c","exit 3"]`, env: `{}`, state: "failed", onInterrupt: "requeue",
			reason: "exited with code 3", result: `{"exit_code":3}`, attempts: 2, interruptions: 1, exit: &three, runAt: now - 8000, created: now - 8000, started: now - 7999, finished: now - 7998},
		{id: "job_blkdblkdblkdblkdblkd", command: "true", args: `[]`, env: `{}`, state: "blocked", onInterrupt: "requeue",
			reason: "dependency job_failfailfailfailfail failed", runAt: now - 7000, created: now - 7000, finished: now - 7998, deps: []string{"job_failfailfailfailfail"}},
		{id: "job_unknunknunknunknunkn", command: "sleep", args: `["30"]`, env: `{}`, state: "blocked", onInterrupt: "block", outcome: "unknown",
			reason:   "Hearth stopped while attempt 1 was running; not replayed (on_interrupt: block). Re-read what it may have changed before resubmitting.",
			attempts: 1, interruptions: 1, runAt: now - 6000, created: now - 6000, started: now - 5999, finished: now - 5000},
		{id: "job_cancelcancelcancelca", command: "true", args: `[]`, env: `{}`, state: "cancelled", onInterrupt: "requeue",
			reason: "cancelled by task.cancel before it started", runAt: now + 3_600_000, created: now - 5000, finished: now - 4000},
		{id: "job_runnrunnrunnrunnrunn", command: "sh", args: appendTo("interrupted"), env: `{}`, state: "running", onInterrupt: "requeue",
			attempts: 1, runAt: now - 4000, created: now - 4000, started: now - 3999},
		{id: "job_waitwaitwaitwaitwait", command: "sh", args: appendTo("dependent"), env: `{}`, state: "queued", onInterrupt: "requeue",
			waiting: 1, runAt: now - 3000, created: now - 3000, deps: []string{"job_runnrunnrunnrunnrunn"}},
		{id: "job_dueduedueduedueduedu", command: "sh", args: appendTo("due"), env: `{"K":"secret"}`, state: "queued", onInterrupt: "block",
			runAt: now - 2000, created: now - 2000},
		{id: "job_parkparkparkparkpark", command: "sh", args: appendTo("parked"), env: `{}`, state: "queued", onInterrupt: "requeue",
			reason:  "waiting for operator permit pmt_oldoldoldoldoldoldold: the policy in force when it came due requires one",
			waiting: 1, runAt: now - 1500, created: now - 1500},
		{id: "job_denydenydenydenydeny", command: "sh", args: appendTo("denied"), env: `{}`, state: "queued", onInterrupt: "requeue",
			reason:  "waiting for operator permit pmt_denieddenieddeniedd: the policy in force when it came due requires one",
			waiting: 1, runAt: now - 1200, created: now - 1200},
		{id: "job_laterlaterlaterlater", command: "true", args: `[]`, env: `{}`, state: "queued", onInterrupt: "requeue",
			runAt: now + 3_600_000, created: now - 1000},
		// Approved just before the old queue stopped, not yet run; its
		// command line has characters Go's encoding escapes and SQLite's
		// does not, and its environment's names are not in sorted order.
		{id: "job_apprapprapprapprappr", command: "sh", args: approvedArgs(marker), env: `{"Z":"1","A":"2"}`, state: "queued", onInterrupt: "requeue",
			reason:  "waiting for operator permit pmt_approvedapprovedappr: the policy in force when it came due requires one",
			waiting: 1, runAt: now - 900, created: now - 900},
	}
	buildOldDatabase(t, path, old, now)

	// What the old queue answered: the job as its row said, with its
	// dependencies, environment names and no values.
	want := map[string]jobs.Job{}
	for _, o := range old {
		j := jobs.Job{ID: o.id, State: o.state, Command: o.command, OnInterrupt: o.onInterrupt, Attempts: o.attempts, Interruptions: o.interruptions,
			ExitCode: o.exit, Reason: o.reason, Outcome: o.outcome, TimeoutMS: 60000, Dependencies: []string{},
			RunAt: time.UnixMilli(o.runAt).UTC(), CreatedAt: time.UnixMilli(o.created).UTC()}
		if err := json.Unmarshal([]byte(o.args), &j.Args); err != nil {
			t.Fatal(err)
		}
		var env map[string]string
		if err := json.Unmarshal([]byte(o.env), &env); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"A", "K", "SECRET"} {
			if _, ok := env[k]; ok {
				j.EnvKeys = append(j.EnvKeys, k)
			}
		}
		if o.result != "" {
			j.Result = json.RawMessage(o.result)
		}
		if o.started != 0 {
			s := time.UnixMilli(o.started).UTC()
			j.StartedAt = &s
		}
		if o.finished != 0 {
			f := time.UnixMilli(o.finished).UTC()
			j.FinishedAt = &f
		}
		j.Dependencies = append(j.Dependencies, o.deps...)
		want[o.id] = j
	}

	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var leftover int
	if err := db.R.QueryRow(`SELECT COUNT(*) FROM job_deps`).Scan(&leftover); err == nil || !strings.Contains(err.Error(), "no such table") {
		t.Fatalf("job_deps survived the migration: %d rows (%v)", leftover, err)
	}
	e := &env{t: t, dir: dir, db: db, opts: envOpts{maxJobs: 4, maxFutures: 4}}
	e.start()

	answer := func(id string) jobs.Job {
		t.Helper()
		out := e.call(route, map[string]any{"operation": "get", "id": id})
		b, _ := json.Marshal(get(out, "result.job"))
		var j jobs.Job
		if err := json.Unmarshal(b, &j); err != nil || out["state"] != "completed" {
			t.Fatalf("task.get %s: %v", id, out)
		}
		return j
	}
	// Terminal, parked and delayed jobs read exactly as before.
	for _, id := range []string{"job_donedonedonedonedone", "job_failfailfailfailfail", "job_blkdblkdblkdblkdblkd", "job_unknunknunknunknunkn",
		"job_cancelcancelcancelca", "job_parkparkparkparkpark", "job_laterlaterlaterlater"} {
		got, _ := json.Marshal(answer(id))
		exp, _ := json.Marshal(want[id])
		if string(got) != string(exp) {
			t.Errorf("task.get %s after the migration:\n got  %s\n want %s", id, got, exp)
		}
	}
	// The live ones carry on.
	rq := e.wait(route, "job_runnrunnrunnrunnrunn")
	if rq.State != jobs.StateCompleted || rq.Attempts != 2 || rq.Interruptions != 1 {
		t.Fatalf("the interrupted job: %+v", rq)
	}
	for _, id := range []string{"job_waitwaitwaitwaitwait", "job_dueduedueduedueduedu"} {
		if j := e.wait(route, id); j.State != jobs.StateCompleted || j.Attempts != 1 {
			t.Fatalf("job %s after the migration: %+v", id, j)
		}
	}
	if dep := answer("job_waitwaitwaitwaitwait"); !reflect.DeepEqual(dep.Dependencies, []string{"job_runnrunnrunnrunnrunn"}) {
		t.Fatalf("dependencies of the dependent: %v", dep.Dependencies)
	}
	lines := map[string]int{}
	for _, l := range readLines(t, marker) {
		lines[l]++
	}
	if !reflect.DeepEqual(lines, map[string]int{"interrupted": 1, "dependent": 1, "due": 1}) {
		t.Fatalf("what ran after the migration: %v", lines)
	}
	if got := answer("job_parkparkparkparkpark"); got.State != jobs.StateQueued || got.Attempts != 0 {
		t.Fatalf("the parked job: %+v", got)
	}
	// The denial the old queue committed but had not carried out is
	// carried out by the start-up recovery of permit decisions: the job
	// ends blocked, saying so, and never runs.
	gov, ok := e.d.Gov.(*govern.Governor)
	if !ok {
		t.Fatalf("the engine's governor is a %T", e.d.Gov)
	}
	sessions, err := session.New(session.Options{DB: e.db, Ledger: gov.Ledger, Artifacts: &artifacts.Store{DB: e.db, Dir: t.TempDir()},
		MaxSessions: 1, BufferBytes: 4096, TranscriptBytes: 4096, IdleTimeout: time.Minute, MaxReadBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	op, err := control.New(gov, e.d, sessions, proc.NewStarted(), nil)
	if err != nil {
		t.Fatal(err)
	}
	// Under ask, only the old approval lets the approved job run: a run
	// whose input no longer matched it would park for a second permit.
	if err := (&govern.Decisions{G: gov}).SetPolicy(ctx, "test", "ask"); err != nil {
		t.Fatal(err)
	}
	if err := op.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	if j := e.wait(route, "job_denydenydenydenydeny"); j.State != jobs.StateBlocked || !strings.Contains(j.Reason, "denied") {
		t.Fatalf("the job whose permit was denied before the migration: %+v", j)
	}
	if n := readLines(t, marker); slices.Contains(n, "denied") {
		t.Fatalf("a denied job ran: %v", n)
	}
	// The approval is carried out once, under the permit the operator
	// gave: the run is not parked for a second one.
	if j := e.wait(route, "job_apprapprapprapprappr"); j.State != jobs.StateCompleted || j.Attempts != 1 {
		t.Fatalf("the job approved before the migration: %+v", j)
	}
	if n := readLines(t, marker); !slices.Contains(n, "approved:a&b<c>") {
		t.Fatalf("the approved job's run wrote %v", n)
	}
	if asked := governtest.PermitsOf(t, db, "job_apprapprapprapprappr"); asked != 1 {
		t.Fatalf("permits of the approved job after the migration: %d, want only the old one", asked)
	}
	// task.list lists every job, newest first, and nothing twice.
	out := e.call(route, map[string]any{"operation": "list", "limit": 50})
	items, _ := get(out, "result.items").([]any)
	if len(items) != len(old) {
		t.Fatalf("task.list after the migration: %d items, want %d: %v", len(items), len(old), out)
	}
	for i, it := range items {
		wantID := old[len(old)-1-i].id
		if get(it, "kind") != "job" || get(it, "id") != wantID {
			t.Fatalf("task.list item %d: %v, want job %s", i, it, wantID)
		}
	}
}

// buildOldDatabase creates path with the schema of version 13 and the
// rows the old queue would have written for jobs: jobs, job_deps, the
// running job's journaled command and the parked job's permit.
func buildOldDatabase(t *testing.T, path string, old []oldJob, now int64) {
	t.Helper()
	raw := storetest.AtVersion(t, path, 13)
	defer raw.Close()
	exec := raw.MustExec
	null := func(v int64) any {
		if v == 0 {
			return nil
		}
		return v
	}
	str := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	for _, o := range old {
		var exit any
		if o.exit != nil {
			exit = *o.exit
		}
		exec(`INSERT INTO jobs(id, route, command, args, cwd, env, timeout_ms, run_at, on_interrupt, state, waiting, attempts, interruptions,
			exit_code, result, reason, outcome, created_at, started_at, finished_at, command_id) VALUES (?,?,?,?,'',?,60000,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
			o.id, route, o.command, o.args, o.env, o.runAt, o.onInterrupt, o.state, o.waiting, o.attempts, o.interruptions,
			exit, str(o.result), o.reason, str(o.outcome), o.created, null(o.started), null(o.finished), "cmd_oldsubmit")
		for _, d := range o.deps {
			exec(`INSERT INTO job_deps(job_id, dep_id) VALUES (?,?)`, o.id, d)
		}
	}
	governtest.InsertCommand(t, raw, governtest.Command{ID: jobs.RunCommandID("job_runnrunnrunnrunnrunn", 1), Route: route, Primitive: "task.submit",
		InputSHA256: "x", FutureID: "job_runnrunnrunnrunnrunn", State: "running", CreatedAt: now - 3999})
	governtest.InsertPermits(t, raw, governtest.Permit{ID: "pmt_oldoldoldoldoldoldold", Route: route, Primitive: "task.submit", Input: "{}", InputSHA256: "x",
		FutureID: "job_parkparkparkparkpark", CommandID: jobs.RunCommandID("job_parkparkparkparkpark", 1), State: "pending",
		CreatedAt: now - 1400, ExpiresAt: now + 3_600_000},
		// Denied by the operator just before the old queue stopped, before
		// it blocked the job: the decision is carried out after the
		// migration.
		governtest.Permit{ID: "pmt_denieddenieddeniedd", Route: route, Primitive: "task.submit", Input: "{}", InputSHA256: "x",
			FutureID: "job_denydenydenydenydeny", CommandID: jobs.RunCommandID("job_denydenydenydenydeny", 1), State: "denied",
			CreatedAt: now - 1100, ExpiresAt: now + 3_600_000, DecidedAt: now - 1000})
	// The old code asked for the approved job's permit with the run's
	// input as Go encodes it (jobs' runInput).
	input, err := json.Marshal(map[string]any{"job": map[string]any{"command": "sh", "args": approvedArgList(old), "cwd": "",
		"env": map[string]string{"Z": "", "A": ""}, "timeout_ms": 60000}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(input), `\u0026`) {
		t.Fatalf("the approved job's input does not exercise Go's escaping: %s", input)
	}
	sum := sha256.Sum256(input)
	governtest.InsertPermits(t, raw, governtest.Permit{ID: "pmt_approvedapprovedappr", Route: route, Primitive: "task.submit", Input: string(input),
		InputSHA256: hex.EncodeToString(sum[:]), FutureID: "job_apprapprapprapprappr", CommandID: jobs.RunCommandID("job_apprapprapprapprappr", 1),
		State: "approved", CreatedAt: now - 850, ExpiresAt: now + 3_600_000, DecidedAt: now - 800})
	var n int
	if err := raw.QueryRow(`SELECT COUNT(*) FROM jobs`).Scan(&n); err != nil || n != len(old) {
		t.Fatal(fmt.Errorf("old database holds %d jobs (%v)", n, err))
	}
}

// approvedArgs is the approved old job's arguments: it appends a line
// with characters JSON encoders disagree on to marker.
func approvedArgs(marker string) string {
	b, _ := json.Marshal([]string{"-c", `echo "$0" >> "$1"`, "approved:a&b<c>", marker})
	return string(b)
}

func approvedArgList(old []oldJob) []string {
	for _, o := range old {
		if o.id == "job_apprapprapprapprappr" {
			var args []string
			_ = json.Unmarshal([]byte(o.args), &args)
			return args
		}
	}
	return nil
}
