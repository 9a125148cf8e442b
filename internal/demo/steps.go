package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/jsonx"
	"github.com/hearth-dev/hearth/internal/ledger"
)

// Bounds the demo sets and checks.
const (
	// spillLimit is the demo's max_output_bytes: small, so a modest output
	// spills to an artifact.
	spillLimit = 1024
	// spillLines is how many lines the spilling exec prints (32 bytes each).
	spillLines = 2000
	// rangeLimit is the size of each artifact.range read.
	rangeLimit = 8192
	// jobDelay keeps the dependent job queued while Hearth restarts.
	jobDelay = 2 * time.Second
)

// step is one named step of the demonstration.
type step struct {
	name string
	run  func(d *demo, ctx context.Context) (string, error)
}

// allSteps are docs/DESIGN.md, "The demo" in order. Each returns a one-line detail for the
// report, or an error saying what did not hold.
func allSteps() []step {
	return []step{
		{"discover_tools", (*demo).discoverTools},
		{"host_info", (*demo).hostInfo},
		{"operator_allow_rule", (*demo).allowRule},
		{"exec_spill_range", (*demo).execSpill},
		{"fs_patch_conflict_undo", (*demo).fsPatchUndo},
		{"scatter_future_ref", (*demo).scatter},
		{"jobs_across_restart", (*demo).jobsAcrossRestart},
		{"detached_arrival", (*demo).detached},
		{"recipe_run", (*demo).recipe},
		{"permit_approved", (*demo).permit},
		{"estop_reset_resume", (*demo).estop},
		{"command_id_replay", (*demo).replay},
		{"evidence_export_verify", (*demo).evidenceStep},
	}
}

// exec is machine.exec of the demo program in its child role.
func (d *demo) exec(cwd string, args ...string) map[string]any {
	m := map[string]any{"operation": "exec", "command": d.exe, "args": childArgs(args...)}
	if cwd != "" {
		m["cwd"] = cwd
	}
	return m
}

// job is one task.submit job running the demo program.
func (d *demo) job(args ...string) map[string]any {
	return map[string]any{"command": d.exe, "args": childArgs(args...), "cwd": d.root}
}

// expect fails with what the call answered unless cond holds.
func expect(cond bool, r *result, format string, a ...any) error {
	if cond {
		return nil
	}
	msg := fmt.Sprintf(format, a...)
	if r != nil {
		msg += ": " + r.Brief()
	}
	return errors.New(msg)
}

// completed calls and settles, and fails unless the outcome is completed.
func (d *demo) completed(ctx context.Context, what, tool string, args, meta map[string]any) (map[string]any, error) {
	r, err := d.c.call(ctx, tool, args, meta)
	if err != nil {
		return nil, err
	}
	env, err := d.c.settle(ctx, r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if jsonx.GetPath(env, "state") != "completed" {
		b, _ := json.Marshal(env)
		return nil, fmt.Errorf("%s: state %v, want completed: %.400s", what, jsonx.GetPath(env, "state"), b)
	}
	return env, nil
}

// readFile reads a file under the fs root through fs.read.
func (d *demo) readFile(ctx context.Context, path string) (string, error) {
	env, err := d.completed(ctx, "fs.read "+filepath.Base(path), "fs", map[string]any{"operation": "read", "path": path, "limit": 1 << 16}, nil)
	if err != nil {
		return "", err
	}
	s, _ := jsonx.GetPath(env, "result.data").(string)
	return s, nil
}

func (d *demo) discoverTools(ctx context.Context) (string, error) {
	if err := d.start(ctx); err != nil {
		return "", err
	}
	init := d.c.session.InitializeResult()
	if init == nil || init.ProtocolVersion != protocolVersion {
		got := ""
		if init != nil {
			got = init.ProtocolVersion
		}
		return "", fmt.Errorf("negotiated protocol %q, want %s (server/discover)", got, protocolVersion)
	}
	d.protocol = init.ProtocolVersion
	server := "Hearth"
	if init.ServerInfo != nil {
		server = init.ServerInfo.Name + " " + init.ServerInfo.Version
	}
	res, err := d.c.session.ListTools(ctx, nil)
	if err != nil {
		return "", fmt.Errorf("tools/list: %w", err)
	}
	var names []string
	for _, t := range res.Tools {
		names = append(names, t.Name)
	}
	sort.Strings(names)
	var missing []string
	for _, want := range []string{"machine", "fs", "task", "artifact", "run", "recipe"} {
		if !slices.Contains(names, want) {
			missing = append(missing, want)
		}
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("tools/list lacks %s (has %s)", strings.Join(missing, ", "), strings.Join(names, ", "))
	}
	ui := ""
	if !slices.Contains(names, "ui") {
		ui = " (ui is not served by this build)"
	}
	return fmt.Sprintf("%s answered server/discover with protocol %s; tools/list: %s%s", server, d.protocol, strings.Join(names, ", "), ui), nil
}

func (d *demo) hostInfo(ctx context.Context) (string, error) {
	r, err := d.c.hostInfo(ctx)
	if err != nil {
		return "", err
	}
	checks := []struct {
		path string
		want any
	}{
		{"state", "completed"},
		{"result.os", runtime.GOOS},
		{"result.hearth", d.opts.Version},
		{"result.policy_mode", config.ModeAsk},
		{"result.estop", false},
		{"result.limits.max_output_bytes", float64(spillLimit)},
	}
	for _, c := range checks {
		if got := r.Get(c.path); got != c.want {
			return "", expect(false, r, "host_info %s = %v, want %v", c.path, got, c.want)
		}
	}
	var unavailable []string
	for _, u := range r.Get("result.unavailable").([]any) {
		unavailable = append(unavailable, fmt.Sprint(u))
	}
	if len(unavailable) == 0 {
		unavailable = []string{"none"}
	}
	return fmt.Sprintf("%s/%s, Hearth %s, policy %s, e-stop released, max_output_bytes %d, unavailable: %s",
		r.Get("result.os"), r.Get("result.arch"), d.opts.Version, config.ModeAsk, spillLimit, strings.Join(unavailable, "; ")), nil
}

// globEscape makes a program path match only itself as an allow-rule
// pattern. Windows paths cannot be escaped (\ is the separator there), and
// their metacharacters are rare; the rule then matches a little more.
func globEscape(p string) string {
	if runtime.GOOS == "windows" {
		return p
	}
	var b strings.Builder
	for _, r := range p {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// The demo program's calls that run under the operator's rules, and the
// names and words in them: a rule covers exactly the call its card showed
// (the demo program has no row in the argument table), so there is a rule
// for each call, as an operator who chose "Always allow" on each card
// would have.
const (
	jobsLogName       = "jobs.log"
	replayCounterName = "replay-counter.txt"
	greeted           = "the operator"
	detachedText      = "detached hello"
	afterResetText    = "working again"
)

// ruledCalls are the demo program's arguments (after ChildArg) in the
// calls its rules cover.
func (d *demo) ruledCalls() [][]string {
	return [][]string{
		{"lines", fmt.Sprint(spillLines)},
		{"append", filepath.Join(d.root, jobsLogName), "parent"},
		{"append", filepath.Join(d.root, jobsLogName), "dependent"},
		{"sleep-echo", "300", detachedText},
		{"echo", "hello, " + greeted},
		{"echo", afterResetText},
		{"append", filepath.Join(d.root, replayCounterName), "ran"},
	}
}

// allowRule is the operator's standing decisions that let the demo
// program's calls run under the fs root without a permit; anything else
// the model runs in ask mode still waits for one (see the permit step).
func (d *demo) allowRule(ctx context.Context) (string, error) {
	var ids []string
	for _, args := range d.ruledCalls() {
		rule, err := d.app().Operator.AddRule(ctx, operator, globEscape(d.exe), d.root, childArgs(args...)...)
		if err != nil {
			return "", fmt.Errorf("operator AddRule: %w", err)
		}
		if rule.Interpreter {
			return "", fmt.Errorf("the demo program was flagged as a general interpreter")
		}
		ids = append(ids, rule.ID)
	}
	return fmt.Sprintf("operator rules %s: the demo program may make these %d calls, each exactly, with cwd under <fs-root>; any other call, or elsewhere, still asks",
		strings.Join(ids, ", "), len(ids)), nil
}

func (d *demo) execSpill(ctx context.Context) (string, error) {
	want := childLines(spillLines)
	env, err := d.completed(ctx, "exec", "machine", d.exec(d.root, "lines", fmt.Sprint(spillLines)), nil)
	if err != nil {
		return "", err
	}
	id, _ := jsonx.GetPath(env, "result.stdout.artifact.id").(string)
	preview, _ := jsonx.GetPath(env, "result.stdout.preview").(string)
	switch {
	case jsonx.GetPath(env, "result.exit_code") != float64(0):
		return "", fmt.Errorf("exit code %v", jsonx.GetPath(env, "result.exit_code"))
	case id == "":
		return "", fmt.Errorf("output of %d bytes did not spill to an artifact (max_output_bytes %d)", len(want), spillLimit)
	case jsonx.GetPath(env, "result.stdout.text") != nil:
		return "", fmt.Errorf("spilled output also returned inline")
	case len(preview) > spillLimit || !strings.HasPrefix(want, preview):
		return "", fmt.Errorf("preview of %d bytes is not a prefix of the output within %d bytes", len(preview), spillLimit)
	case jsonx.GetPath(env, "result.stdout.bytes") != float64(len(want)):
		return "", fmt.Errorf("stdout.bytes = %v, want %d", jsonx.GetPath(env, "result.stdout.bytes"), len(want))
	}
	var got strings.Builder
	ranges := 0
	for offset := 0; ; ranges++ {
		if ranges > len(want)/rangeLimit+2 {
			return "", fmt.Errorf("artifact range did not reach eof after %d reads", ranges)
		}
		// On a slow machine a read may outlast the inline budget and
		// answer pending; completed settles it from its arrival.
		env, err := d.completed(ctx, fmt.Sprintf("artifact.range at %d", offset), "artifact",
			map[string]any{"operation": "range", "id": id, "offset": offset, "limit": rangeLimit}, nil)
		if err != nil {
			return "", err
		}
		data, _ := jsonx.GetPath(env, "result.data").(string)
		got.WriteString(data)
		if jsonx.GetPath(env, "result.eof") == true {
			ranges++
			break
		}
		next, ok := jsonx.GetPath(env, "result.next_offset").(float64)
		if !ok || int(next) <= offset {
			b, _ := json.Marshal(env)
			return "", fmt.Errorf("artifact.range at %d: no progress: %.400s", offset, b)
		}
		offset = int(next)
	}
	if got.String() != want {
		return "", fmt.Errorf("artifact read back by range differs from what the child printed (%d bytes, want %d)", got.Len(), len(want))
	}
	return fmt.Sprintf("stdout %d bytes > max_output_bytes %d: preview %d bytes + artifact %s; read back in %d ranges of ≤%d bytes, identical",
		len(want), spillLimit, len(preview), id, ranges, rangeLimit), nil
}

func (d *demo) fsPatchUndo(ctx context.Context) (string, error) {
	file := filepath.Join(d.root, "notes.txt")
	const original = "first line\nsecond line\n"
	w, err := d.completed(ctx, "fs.write", "fs", map[string]any{"operation": "write", "path": file, "data": original, "expected_sha256": nil}, nil)
	if err != nil {
		return "", err
	}
	p, err := d.completed(ctx, "fs.patch", "fs", map[string]any{"operation": "patch", "path": file,
		"replacements": []any{map[string]any{"old": "first", "new": "1st"}}}, nil)
	if err != nil {
		return "", err
	}
	receipt, _ := jsonx.GetPath(p, "result.receipt_id").(string)
	if got, err := d.readFile(ctx, file); err != nil || got != "1st line\nsecond line\n" {
		return "", fmt.Errorf("after patch the file reads %q (%v)", got, err)
	}
	r, err := d.c.call(ctx, "fs", map[string]any{"operation": "patch", "path": file,
		"replacements": []any{map[string]any{"old": "line", "new": "row"}}}, nil)
	if err != nil {
		return "", err
	}
	if r.State() != "conflict" || !r.IsError || r.Get("error.details.matches") != float64(2) {
		return "", expect(false, r, "a patch whose old text occurs twice must be a conflict naming 2 matches")
	}
	if got, err := d.readFile(ctx, file); err != nil || got != "1st line\nsecond line\n" {
		return "", fmt.Errorf("the conflicting patch changed the file: %q (%v)", got, err)
	}
	if _, err := d.completed(ctx, "fs.undo", "fs", map[string]any{"operation": "undo", "receipt_id": receipt}, nil); err != nil {
		return "", err
	}
	if got, err := d.readFile(ctx, file); err != nil || got != original {
		return "", fmt.Errorf("after undo the file reads %q, want %q (%v)", got, original, err)
	}
	return fmt.Sprintf("write (receipt %s) → patch first→1st (receipt %s) → patch of \"line\" (2 matches) refused as conflict, file untouched → undo %s: original content restored",
		jsonx.GetPath(w, "result.receipt_id"), receipt, receipt), nil
}

func (d *demo) scatter(ctx context.Context) (string, error) {
	file := filepath.Join(d.root, "scatter.txt")
	const content = "read through a $future reference\n"
	if _, err := d.completed(ctx, "fs.write", "fs", map[string]any{"operation": "write", "path": file, "data": content}, nil); err != nil {
		return "", err
	}
	r, err := d.c.call(ctx, "run", map[string]any{"operation": "scatter", "calls": []any{
		map[string]any{"kind": "fs.stat", "path": file},
		map[string]any{"kind": "fs.read", "path": map[string]any{"$future": 0, "$path": "result.path"}},
	}}, nil)
	if err != nil {
		return "", err
	}
	futures, _ := r.Get("result.futures").([]any)
	if r.IsError || len(futures) != 2 {
		return "", expect(false, r, "run.scatter must answer two futures")
	}
	var envs []map[string]any
	var ids []string
	for _, f := range futures {
		id, _ := jsonx.GetPath(f, "future_id").(string)
		env, err := d.c.await(ctx, id, 30*time.Second)
		if err != nil {
			return "", err
		}
		ids, envs = append(ids, id), append(envs, env)
	}
	if jsonx.GetPath(envs[0], "state") != "completed" || jsonx.GetPath(envs[1], "state") != "completed" {
		return "", fmt.Errorf("scatter results: stat %v, read %v", jsonx.GetPath(envs[0], "state"), jsonx.GetPath(envs[1], "state"))
	}
	if got := jsonx.GetPath(envs[1], "result.data"); got != content {
		return "", fmt.Errorf("fs.read through the reference returned %q, want %q", got, content)
	}
	return fmt.Sprintf("run.scatter [fs.stat, fs.read {\"$future\":0,\"$path\":\"result.path\"}] → futures %s, %s; both arrived, the read returned the stat'ed file's %d bytes",
		ids[0], ids[1], len(content)), nil
}

// jobTimes reads a job through task.get.
func (d *demo) jobTimes(ctx context.Context, id string) (state string, started, finished time.Time, attempts int, err error) {
	r, err := d.c.call(ctx, "task", map[string]any{"operation": "get", "id": id}, nil)
	if err != nil {
		return "", time.Time{}, time.Time{}, 0, err
	}
	if r.IsError {
		return "", time.Time{}, time.Time{}, 0, expect(false, r, "task.get %s", id)
	}
	state = r.Str("result.job.state")
	started, _ = time.Parse(time.RFC3339Nano, r.Str("result.job.started_at"))
	finished, _ = time.Parse(time.RFC3339Nano, r.Str("result.job.finished_at"))
	a, _ := r.Get("result.job.attempts").(float64)
	return state, started, finished, int(a), nil
}

func (d *demo) jobsAcrossRestart(ctx context.Context) (string, error) {
	log := filepath.Join(d.root, jobsLogName)
	parent := d.job("append", log, "parent")
	dependent := d.job("append", log, "dependent")
	dependent["dependencies"] = []any{0}
	dependent["delay_ms"] = jobDelay.Milliseconds()
	env, err := d.completed(ctx, "task.submit of two jobs", "task", map[string]any{"operation": "submit", "jobs": []any{parent, dependent}}, nil)
	if err != nil {
		return "", err
	}
	ids, _ := jsonx.GetPath(env, "result.ids").([]any)
	if len(ids) != 2 {
		return "", fmt.Errorf("task.submit of two jobs answered %d ids", len(ids))
	}
	p, dep := ids[0].(string), ids[1].(string)
	w, err := d.c.call(ctx, "task", map[string]any{"operation": "wait", "id": p, "timeout_ms": 20000}, nil)
	for i := 0; err == nil && i < 2 && (w.Str("result.job.state") == "queued" || w.Str("result.job.state") == "running"); i++ {
		// task.wait also returns when the job starts; wait again for its end.
		w, err = d.c.call(ctx, "task", map[string]any{"operation": "wait", "id": p, "timeout_ms": 20000}, nil)
	}
	if err != nil {
		return "", err
	}
	if w.Str("result.job.state") != "completed" {
		return "", expect(false, w, "parent job %s", p)
	}
	st, _, _, _, err := d.jobTimes(ctx, dep)
	if err != nil {
		return "", err
	}
	if st != "queued" {
		return "", fmt.Errorf("the dependent job is %s before the restart, want queued (delay_ms %d)", st, jobDelay.Milliseconds())
	}
	oldURL := d.app().MCPURL()
	t0 := time.Now()
	if err := d.stop(); err != nil {
		return "", fmt.Errorf("stop Hearth: %w", err)
	}
	if err := d.start(ctx); err != nil {
		return "", fmt.Errorf("restart Hearth: %w", err)
	}
	restart := time.Since(t0)
	env, err = d.c.await(ctx, dep, 30*time.Second)
	if err != nil {
		return "", fmt.Errorf("after the restart: %w", err)
	}
	if jsonx.GetPath(env, "state") != "completed" {
		b, _ := json.Marshal(env)
		return "", fmt.Errorf("dependent job after the restart: %.300s", b)
	}
	if _, err := d.c.await(ctx, p, 10*time.Second); err != nil {
		return "", fmt.Errorf("parent job's result: %w", err)
	}
	ps, _, pf, _, err := d.jobTimes(ctx, p)
	if err != nil {
		return "", err
	}
	ds, dstart, _, attempts, err := d.jobTimes(ctx, dep)
	if err != nil {
		return "", err
	}
	if ps != "completed" || ds != "completed" || attempts != 1 {
		return "", fmt.Errorf("jobs: parent %s, dependent %s after %d attempts", ps, ds, attempts)
	}
	if pf.IsZero() || dstart.IsZero() || dstart.Before(pf) {
		return "", fmt.Errorf("the dependent started %v, before its parent finished %v", dstart, pf)
	}
	if got, err := d.readFile(ctx, log); err != nil || got != "parent\ndependent\n" {
		return "", fmt.Errorf("jobs.log reads %q, want parent then dependent (%v)", got, err)
	}
	moved := ""
	if d.app().MCPURL() != oldURL {
		moved = " on a new port"
	}
	return fmt.Sprintf("jobs %s → %s (index dependency, delay_ms %d); parent done, Hearth stopped cleanly with the dependent queued and restarted on the same data directory%s in %d ms; the client reconnected; the dependent ran once, %d ms after its parent finished; both results arrived",
		p, dep, jobDelay.Milliseconds(), moved, restart.Milliseconds(), dstart.Sub(pf).Milliseconds()), nil
}

func (d *demo) detached(ctx context.Context) (string, error) {
	args := d.exec(d.root, "sleep-echo", "300", detachedText)
	args["detach"] = true
	t0 := time.Now()
	r, err := d.c.call(ctx, "machine", args, nil)
	if err != nil {
		return "", err
	}
	id := r.Str("future_id")
	if r.State() != "pending" || id == "" {
		return "", expect(false, r, "detach:true must answer pending with a future_id")
	}
	answered := time.Since(t0)
	deadline := time.Now().Add(20 * time.Second)
	later := 0
	for {
		if env, ok := d.c.arrivals[id]; ok {
			if jsonx.GetPath(env, "state") != "completed" || jsonx.GetPath(env, "result.stdout.text") != detachedText+"\n" {
				b, _ := json.Marshal(env)
				return "", fmt.Errorf("detached result: %.300s", b)
			}
			break
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("the detached result %s did not arrive within 20 s", id)
		}
		time.Sleep(50 * time.Millisecond)
		if _, err := d.c.hostInfo(ctx); err != nil {
			return "", err
		}
		later++
	}
	return fmt.Sprintf("detach:true answered pending (%s) in %d ms; the result arrived %d ms later on a later call (host_info #%d), completed",
		id, answered.Milliseconds(), time.Since(t0).Milliseconds(), later), nil
}

func (d *demo) recipe(ctx context.Context) (string, error) {
	note := filepath.Join(d.root, "recipe-note.txt")
	steps := []any{
		map[string]any{"primitive": "machine.exec", "input": map[string]any{
			"command": d.exe, "args": []any{ChildArg, "echo", "hello, ${who}"}, "cwd": d.root}},
		map[string]any{"primitive": "fs.write", "input": map[string]any{"path": note, "data": "greeted ${who}\n"}},
	}
	r, err := d.c.call(ctx, "recipe", map[string]any{"operation": "create", "name": "demo-greet", "description": "greet someone and leave a note", "steps": steps}, nil)
	if err != nil {
		return "", err
	}
	if r.IsError || r.Get("result.params.0") != "who" {
		return "", expect(false, r, "recipe.create must find the parameter who")
	}
	env, err := d.completed(ctx, "recipe.run", "recipe", map[string]any{"operation": "run", "name": "demo-greet", "params": map[string]any{"who": greeted}}, nil)
	if err != nil {
		return "", err
	}
	if jsonx.GetPath(env, "result.state") != "completed" || jsonx.GetPath(env, "result.steps.0.result.stdout.text") != "hello, the operator\n" {
		b, _ := json.Marshal(env)
		return "", fmt.Errorf("recipe run: %.400s", b)
	}
	if got, err := d.readFile(ctx, note); err != nil || got != "greeted the operator\n" {
		return "", fmt.Errorf("the recipe's note reads %q (%v)", got, err)
	}
	return "recipe demo-greet (machine.exec, fs.write) created with parameter who; run with who=\"the operator\": both steps completed, each governed as its own call", nil
}

func (d *demo) permit(ctx context.Context) (string, error) {
	const text = "approved by the operator"
	r, err := d.c.call(ctx, "machine", d.exec("", "echo", text), nil) // no cwd: outside the allow-rule
	if err != nil {
		return "", err
	}
	pid, fid := r.Str("permit_id"), r.Str("future_id")
	if r.State() != "pending" || pid == "" || fid == "" {
		return "", expect(false, r, "an exec outside the allow-rule must wait for a permit in ask mode")
	}
	op := d.app().Operator
	pending, err := op.Permits(ctx, "pending")
	if err != nil {
		return "", fmt.Errorf("operator Permits: %w", err)
	}
	i := slices.IndexFunc(pending, func(p govern.Permit) bool { return p.ID == pid })
	if i < 0 || pending[i].Primitive != "machine.exec" || !strings.Contains(pending[i].Input, text) {
		return "", fmt.Errorf("the operator does not see permit %s with the exact input", pid)
	}
	if err := op.Approve(ctx, pid, operator, nil); err != nil {
		return "", fmt.Errorf("operator Approve: %w", err)
	}
	env, err := d.c.await(ctx, fid, 30*time.Second)
	if err != nil {
		return "", err
	}
	if jsonx.GetPath(env, "state") != "completed" || jsonx.GetPath(env, "result.stdout.text") != text+"\n" {
		b, _ := json.Marshal(env)
		return "", fmt.Errorf("approved exec: %.300s", b)
	}
	return fmt.Sprintf("exec outside the allow-rule answered pending with permit %s; the operator saw its exact input (sha256 %.12s…) and approved it once; the result arrived in the conversation, completed",
		pid, pending[i].Digest), nil
}

func (d *demo) estop(ctx context.Context) (string, error) {
	r, err := d.c.call(ctx, "machine", map[string]any{"operation": "estop", "reason": "demo: the model pulls the emergency stop"}, nil)
	if err != nil {
		return "", err
	}
	if r.State() != "completed" {
		return "", expect(false, r, "machine.estop")
	}
	marker := filepath.Join(d.root, "estop-marker.txt")
	r, err = d.c.call(ctx, "machine", d.exec(d.root, "append", marker, "ran under the e-stop"), nil)
	if err != nil {
		return "", err
	}
	if r.State() != "blocked" || r.Get("error.code") != "estop" {
		return "", expect(false, r, "an exec under the e-stop must be blocked with code estop")
	}
	st, err := d.completed(ctx, "fs.stat", "fs", map[string]any{"operation": "stat", "path": marker}, nil)
	if err != nil {
		return "", err
	}
	if jsonx.GetPath(st, "result.exists") != false {
		return "", fmt.Errorf("the refused exec ran: its marker file exists")
	}
	h, err := d.c.hostInfo(ctx)
	if err != nil {
		return "", err
	}
	if h.Get("result.estop") != true {
		return "", expect(false, h, "host_info must disclose the latched e-stop")
	}
	op, gov := d.app().Operator, d.app().Gov
	if err := op.Reset(ctx, operator); err != nil {
		return "", fmt.Errorf("operator Reset: %w", err)
	}
	if held, err := gov.QueueHeld(ctx); err != nil || !held {
		return "", fmt.Errorf("after the reset the queue must stay held until resumed (held %v, %v)", held, err)
	}
	if err := op.ResumeQueue(ctx, operator); err != nil {
		return "", fmt.Errorf("operator ResumeQueue: %w", err)
	}
	if held, err := gov.QueueHeld(ctx); err != nil || held {
		return "", fmt.Errorf("the queue is still held after the resume (%v)", err)
	}
	env, err := d.completed(ctx, "exec after the reset", "machine", d.exec(d.root, "echo", afterResetText), nil)
	if err != nil {
		return "", err
	}
	if jsonx.GetPath(env, "result.stdout.text") != afterResetText+"\n" {
		b, _ := json.Marshal(env)
		return "", fmt.Errorf("exec after the reset: %.300s", b)
	}
	return "machine.estop by the model latched; an exec was refused (blocked, code estop) and did not run; host_info disclosed the latch; operator reset (queue stayed held) → operator resume → an exec completed again", nil
}

func (d *demo) replay(ctx context.Context) (string, error) {
	counter := filepath.Join(d.root, replayCounterName)
	meta := map[string]any{"hearth/command_id": "demo-replay-1"}
	first, err := d.completed(ctx, "first exec", "machine", d.exec(d.root, "append", counter, "ran"), meta)
	if err != nil {
		return "", err
	}
	if got, err := d.readFile(ctx, counter); err != nil || got != "ran\n" {
		return "", fmt.Errorf("after the first call the counter reads %q (%v)", got, err)
	}
	r, err := d.c.call(ctx, "machine", d.exec(d.root, "append", counter, "ran"), meta)
	if err != nil {
		return "", err
	}
	if r.State() != "completed" || r.Get("replayed") != true || r.Get("result.pid") != jsonx.GetPath(first, "result.pid") {
		return "", expect(false, r, "the same command id and input must return the stored outcome, replayed")
	}
	other, err := d.c.call(ctx, "machine", d.exec(d.root, "append", counter, "other"), meta)
	if err != nil {
		return "", err
	}
	if other.State() != "conflict" {
		return "", expect(false, other, "the same command id with another input must be a conflict")
	}
	if got, err := d.readFile(ctx, counter); err != nil || got != "ran\n" {
		return "", fmt.Errorf("the replay ran again: the counter reads %q (%v)", got, err)
	}
	return "command id demo-replay-1 ran once (counter file: 1 line); the repeat with the same input returned the stored outcome (replayed:true, same pid) without running; another input under that id was a conflict; the counter still has 1 line", nil
}

func (d *demo) evidenceStep(ctx context.Context) (string, error) {
	a := d.app()
	path := filepath.Join(d.outDir, EvidenceName)
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return "", fmt.Errorf("create the bundle: %w", err)
	}
	if err := a.Ledger.Export(ctx, f, 0); err != nil {
		f.Close()
		os.Remove(tmp)
		return "", err
	}
	if err := errors.Join(f.Sync(), f.Close()); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("write the bundle: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", fmt.Errorf("write the bundle: %w", err)
	}
	// Offline: the file alone and the key the demo expects; no database.
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	rep, err := ledger.VerifyBundle(bytes.NewReader(raw), ledger.ExpectKey(a.Ledger.PublicKey()))
	if err != nil {
		return "", fmt.Errorf("offline verification of the bundle: %w", err)
	}
	kinds, err := bundleKinds(raw)
	if err != nil {
		return "", err
	}
	var missing []string
	for _, k := range []string{"intent", "outcome", "rule_added", "permit_requested", "permit_approved", "estop", "reset", "queue_resume"} {
		if kinds[k] == 0 {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("the verified ledger lacks entries of kind %s", strings.Join(missing, ", "))
	}
	d.evidence = &Evidence{Bundle: EvidenceName, Entries: rep.Entries, CheckpointSize: rep.CheckpointSize, RootHash: rep.RootHash,
		Origin: rep.Origin, PublicKey: rep.PublicKey, InclusionProofs: rep.InclusionProofs, Kinds: kinds}
	own, parts, err := d.conversationEvidence(ctx)
	if err != nil {
		return "", fmt.Errorf("the conversation's evidence over MCP: %w", err)
	}
	return fmt.Sprintf("exported %s and verified it offline (no database): %d entries hash-chained, checkpoint %d signed by %s, root %s, %d inclusion proofs; it records the permit, e-stop, reset and resume; "+
		"the conversation's own evidence, read as an MCP resource in %d part(s), verified offline too: %d entries, each proven included",
		EvidenceName, rep.Entries, rep.CheckpointSize, rep.Origin, rep.RootHash, rep.InclusionProofs, parts, own), nil
}

// bundleKinds counts the entry kinds of a bundle already verified.
func bundleKinds(raw []byte) (map[string]int, error) {
	var b struct {
		Entries []string `json:"entries"`
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		return nil, fmt.Errorf("read the bundle's entries: %w", err)
	}
	kinds := map[string]int{}
	for _, e := range b.Entries {
		var k struct {
			Kind string `json:"kind"`
		}
		if err := json.Unmarshal([]byte(e), &k); err != nil {
			return nil, fmt.Errorf("read a bundle entry: %w", err)
		}
		kinds[k.Kind]++
	}
	return kinds, nil
}
