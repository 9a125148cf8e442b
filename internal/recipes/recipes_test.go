package recipes_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// trusted runs exec without permits and lets a call answer inline for up
// to 30 s, so a recipe of several processes on a loaded machine is not
// detached into a future before the test reads its result.
func trusted(c *config.Config) {
	c.Policy.Mode = config.ModeTrusted
	c.DispatchInlineBudgetMS = 30_000
}

func recipe(c *hearthtest.Client, op string, args map[string]any) *hearthtest.Result {
	m := map[string]any{"operation": op}
	for k, v := range args {
		m[k] = v
	}
	return c.Call("recipe", m)
}

func execStep(command string, args ...any) map[string]any {
	input := map[string]any{"command": command}
	if len(args) > 0 {
		input["args"] = args
	}
	return map[string]any{"primitive": "machine.exec", "input": input}
}

// needsPOSIX skips a test that runs POSIX programs (sh, echo, printf)
// through machine.exec.
func needsPOSIX(t *testing.T) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("runs POSIX programs")
	}
}

func errMsg(r *hearthtest.Result) string { s, _ := r.Get("error.message").(string); return s }

// TestSubstitutionCannotInject: a parameter value replaces text inside one
// string. It stays one argv element whatever it contains, cannot add a
// field or choose the primitive, and placeholders are refused where they
// could do more (keys, primitive names, typed fields).
func TestSubstitutionCannotInject(t *testing.T) {
	needsPOSIX(t)
	in := hearthtest.Start(t, trusted)
	c := hearthtest.Connect(t, in.URL, "inject")
	r := recipe(c, "create", map[string]any{"name": "echo-one", "description": "print one argument",
		"steps": []any{execStep("printf", "[%s]|", "pre-${value}", "end")}})
	if r.IsError || r.Get("result.params.0") != "value" {
		t.Fatalf("create: %s", r.Raw)
	}
	hostile := `a b "c" 'd' $(id) ; --flag","bogus":"x ${other} \"`
	r = recipe(c, "run", map[string]any{"name": "echo-one", "params": map[string]any{"value": hostile}})
	if r.IsError {
		t.Fatalf("run: %s", r.Raw)
	}
	if out := r.Get("result.steps.0.result.stdout.text"); out != "[pre-"+hostile+"]|[end]|" {
		t.Fatalf("the value must stay one argument, verbatim: %q %s", out, r.Raw)
	}
	if args := r.Get("result.steps.0.result.args").([]any); len(args) != 3 {
		t.Fatalf("argv has %d elements: %v", len(args), args)
	}

	cases := []struct {
		name  string
		steps []any
		want  []string
	}{
		{"placeholder as primitive", []any{map[string]any{"primitive": "${p}", "input": map[string]any{}}}, []string{"steps[0].primitive"}},
		{"placeholder in a key", []any{map[string]any{"primitive": "machine.exec", "input": map[string]any{"command": "env", "env": map[string]any{"${k}": "v"}}}}, []string{"steps[0].input.env.${k}", "keys"}},
		{"placeholder in an integer field", []any{map[string]any{"primitive": "machine.exec", "input": map[string]any{"command": "true", "timeout_ms": "${t}"}}}, []string{"steps[0].input", `"timeout_ms"`, "integer"}},
		{"unknown field", []any{map[string]any{"primitive": "machine.exec", "input": map[string]any{"command": "true", "shell": true}}}, []string{"steps[0].input", `"shell"`}},
		{"malformed placeholder", []any{execStep("echo", "${not closed")}, []string{"steps[0].input.args[0]", "unterminated"}},
		{"bad parameter name", []any{execStep("echo", "${1x}")}, []string{"steps[0].input.args[0]", "${1x}"}},
		{"not a step primitive", []any{map[string]any{"primitive": "machine.process_kill", "input": map[string]any{"pid": 1}}}, []string{"steps[0].primitive"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := recipe(c, "create", map[string]any{"name": "bad", "steps": tc.steps})
			if !r.IsError || r.Get("error.code") != "invalid_input" {
				t.Fatalf("accepted: %s", r.Raw)
			}
			for _, w := range tc.want {
				if !strings.Contains(errMsg(r), w) {
					t.Errorf("message %q lacks %q", errMsg(r), w)
				}
			}
		})
	}

	// An escaped placeholder is literal text; missing and unknown
	// parameters are named.
	r = recipe(c, "create", map[string]any{"name": "literal", "steps": []any{execStep("printf", "%s", "$${HOME}-${x}")}})
	if r.IsError {
		t.Fatalf("create literal: %s", r.Raw)
	}
	r = recipe(c, "run", map[string]any{"name": "literal", "params": map[string]any{"x": "${y}"}})
	if out := r.Get("result.steps.0.result.stdout.text"); out != "${HOME}-${y}" {
		t.Fatalf("literal and non-recursive substitution: %q (%s)", out, r.Raw)
	}
	r = recipe(c, "run", map[string]any{"name": "literal"})
	if !r.IsError || !strings.Contains(errMsg(r), `parameter "x" is missing`) || !strings.Contains(errMsg(r), "steps[0].input.args[1]") {
		t.Fatalf("missing parameter: %s", r.Raw)
	}
	r = recipe(c, "run", map[string]any{"name": "literal", "params": map[string]any{"x": "1", "command": "rm"}})
	if !r.IsError || !strings.Contains(errMsg(r), `"params.command"`) {
		t.Fatalf("unknown parameter: %s", r.Raw)
	}
	r = recipe(c, "create", map[string]any{"name": "literal", "steps": []any{execStep("true")}})
	if !r.IsError || r.State() != "conflict" {
		t.Fatalf("duplicate name: %s", r.Raw)
	}
}

// TestRunStopsTracesAndCounts: steps run in order and stop at the first
// failure (a non-zero exit counts); each run is traced and counted.
func TestRunStopsTracesAndCounts(t *testing.T) {
	needsPOSIX(t)
	in := hearthtest.Start(t, func(c *config.Config) { trusted(c); c.RecipeMaxSteps = 3 })
	c := hearthtest.Connect(t, in.URL, "runs")
	r := recipe(c, "create", map[string]any{"name": "too-long", "steps": []any{execStep("true"), execStep("true"), execStep("true"), execStep("true")}})
	if !r.IsError || !strings.Contains(errMsg(r), `"steps"`) || !strings.Contains(errMsg(r), "at most 3") {
		t.Fatalf("recipe_max_steps: %s", r.Raw)
	}
	r = recipe(c, "create", map[string]any{"name": "check", "description": "fails when asked",
		"steps": []any{execStep("echo", "one"), execStep("test", "${code}", "=", "0"), execStep("echo", "three")}})
	if r.IsError {
		t.Fatalf("create: %s", r.Raw)
	}
	ok := recipe(c, "run", map[string]any{"name": "check", "params": map[string]any{"code": "0"}})
	if ok.IsError || ok.Get("result.state") != "completed" || len(ok.Get("result.steps").([]any)) != 3 ||
		ok.Get("result.steps.2.result.stdout.text") != "three\n" {
		t.Fatalf("successful run: %s", ok.Raw)
	}
	bad := recipe(c, "run", map[string]any{"name": "check", "params": map[string]any{"code": "3"}})
	if !bad.IsError || bad.State() != "failed" || bad.Get("error.code") != "step_failed" || bad.Get("error.details.failed_step") != float64(1) {
		t.Fatalf("failing run: %s", bad.Raw)
	}
	if steps := bad.Get("error.details.steps").([]any); len(steps) != 2 || hearthtest.Get(steps[1], "error_code") != "exit_status" {
		t.Fatalf("the run must stop at step 1: %v", steps)
	}

	st := recipe(c, "stats", map[string]any{"name": "check"})
	if st.Get("result.runs") != float64(2) || st.Get("result.completed") != float64(1) || st.Get("result.failed") != float64(1) ||
		st.Get("result.failures_by_step.1") != float64(1) || st.Get("result.last_state") != "failed" {
		t.Fatalf("stats: %s", st.Raw)
	}
	trace := st.Get("result.recent_runs.0.trace").([]any)
	sha := regexp.MustCompile(`^[0-9a-f]{64}$`)
	for i, s := range trace {
		if !sha.MatchString(hearthtest.Get(s, "input_sha256").(string)) || hearthtest.Get(s, "started_at") == nil || hearthtest.Get(s, "duration_ms") == nil {
			t.Fatalf("trace step %d: %v", i, s)
		}
	}
	if hearthtest.Get(trace[1], "state") != "failed" || hearthtest.Get(trace[0], "state") != "completed" {
		t.Fatalf("trace states: %v", trace)
	}
	// The two runs of step 1 had different inputs (code 0 and 3).
	okTrace := st.Get("result.recent_runs.1.trace").([]any)
	if hearthtest.Get(okTrace[1], "input_sha256") == hearthtest.Get(trace[1], "input_sha256") {
		t.Fatal("input digests do not reflect the substituted input")
	}
	all := recipe(c, "stats", nil)
	if all.Get("result.recipes.0.name") != "check" || all.Get("result.recipes.0.runs") != float64(2) {
		t.Fatalf("stats of all: %s", all.Raw)
	}
	l := recipe(c, "list", nil)
	if l.Get("result.recipes.0.runs") != float64(2) || l.Get("result.recipes.0.steps.1") != "machine.exec" {
		t.Fatalf("list: %s", l.Raw)
	}
	g := recipe(c, "get", map[string]any{"name": "check"})
	if g.Get("result.steps.1.input.args.0") != "${code}" {
		t.Fatalf("get keeps the template: %s", g.Raw)
	}
	ev := c.Call("run", map[string]any{"operation": "events", "entity_id": g.Get("result.id")})
	if n := len(ev.Get("result.events").([]any)); n != 3 {
		t.Fatalf("events (created + 2 runs): %s", ev.Raw)
	}
	if d := recipe(c, "delete", map[string]any{"name": "check"}); d.IsError {
		t.Fatalf("delete: %s", d.Raw)
	}
	if g := recipe(c, "get", map[string]any{"name": "check"}); g.Get("error.code") != "not_found" {
		t.Fatalf("get after delete: %s", g.Raw)
	}
}

// TestRecipeStepsAreGoverned: each step goes through governance as its
// own call. In ask mode an exec step is parked for the operator's permit
// and the recipe waits for it, then continues with exactly that input's
// result; in read-only mode the recipe is refused.
func TestRecipeStepsAreGoverned(t *testing.T) {
	needsPOSIX(t)
	in := hearthtest.Start(t, nil)
	c := hearthtest.Connect(t, in.URL, "gov")
	if r := recipe(c, "create", map[string]any{"name": "g", "steps": []any{execStep("echo", "${x}"), execStep("echo", "second")}}); r.IsError {
		t.Fatalf("create: %s", r.Raw)
	}
	r := recipe(c, "run", map[string]any{"name": "g", "params": map[string]any{"x": "approved"}, "detach": true})
	fid, _ := r.Get("future_id").(string)
	if r.State() != "pending" || fid == "" {
		t.Fatalf("detached recipe.run: %s", r.Raw)
	}
	ctx := t.Context()
	approved := 0
	var env map[string]any
	arrivals := r.Arrivals()
	for i := 0; env == nil && i < 1000; i++ {
		for _, a := range arrivals {
			if a["future_id"] == fid {
				env, _ = a["envelope"].(map[string]any)
			}
		}
		ps, err := in.App.Operator.Permits(ctx, "pending")
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			if p.Primitive != "machine.exec" {
				t.Fatalf("unexpected permit for %s", p.Primitive)
			}
			if err := in.App.Operator.Approve(ctx, p.ID, "tester", nil); err != nil {
				t.Fatal(err)
			}
			approved++
		}
		arrivals = c.Call("artifact", map[string]any{"operation": "list"}).Arrivals()
		time.Sleep(10 * time.Millisecond)
	}
	if approved != 2 || hearthtest.Get(env, "state") != "completed" ||
		hearthtest.Get(env, "result.steps.0.result.stdout.text") != "approved\n" || hearthtest.Get(env, "result.steps.1.result.stdout.text") != "second\n" {
		t.Fatalf("recipe after %d approvals: %v", approved, env)
	}
	if hearthtest.Get(env, "result.steps.0.future_id") == nil {
		t.Fatalf("a parked step names its future: %v", env)
	}
	if err := in.App.Operator.SetPolicy(ctx, "tester", config.ModeReadOnly); err != nil {
		t.Fatal(err)
	}
	r = recipe(c, "run", map[string]any{"name": "g", "params": map[string]any{"x": "1"}})
	if !r.IsError || r.State() != "blocked" {
		t.Fatalf("recipe.run in read-only mode: %s", r.Raw)
	}
}

// TestSuggestFindsRepeatedPattern: a sequence repeated three times is
// suggested with its count; nothing is created.
func TestSuggestFindsRepeatedPattern(t *testing.T) {
	needsPOSIX(t)
	in := hearthtest.Start(t, trusted)
	c := hearthtest.Connect(t, in.URL, "suggest")
	for i := 0; i < 3; i++ {
		c.Call("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{"build"}})
		c.Call("artifact", map[string]any{"operation": "list"})
		c.Call("task", map[string]any{"operation": "submit", "job": map[string]any{"command": "true"}})
		c.Call("run", map[string]any{"operation": "list"}) // noise between repetitions
	}
	// Another conversation's calls are not this one's history.
	o := hearthtest.Connect(t, in.URL, "other")
	for i := 0; i < 3; i++ {
		o.Call("machine", map[string]any{"operation": "process_list"})
		o.Call("machine", map[string]any{"operation": "host_info"})
	}
	r := recipe(c, "suggest", nil)
	pats := r.Get("result.patterns").([]any)
	if len(pats) == 0 {
		t.Fatalf("no pattern: %s", r.Raw)
	}
	found := false
	for _, p := range pats {
		prims := strings.Join(toStrings(hearthtest.Get(p, "primitives")), ",")
		if strings.Contains(prims, "machine.process_list") {
			t.Fatalf("another conversation's history leaked: %s", r.Raw)
		}
		if prims == "machine.exec,artifact.list,task.submit,run.list" && hearthtest.Get(p, "count") == float64(3) {
			found = true
		}
	}
	if !found {
		t.Fatalf("the 3× pattern is not suggested: %s", r.Raw)
	}
	r = recipe(c, "suggest", map[string]any{"threshold": 4})
	if n := len(r.Get("result.patterns").([]any)); n != 0 {
		t.Fatalf("threshold 4: %s", r.Raw)
	}
	if l := recipe(c, "list", nil); len(l.Get("result.recipes").([]any)) != 0 {
		t.Fatalf("suggest created a recipe: %s", l.Raw)
	}
}

func toStrings(v any) []string {
	var out []string
	for _, e := range v.([]any) {
		out = append(out, e.(string))
	}
	return out
}

// TestRecipeRunAsScatterKind: recipe.run is a scatter kind, with its
// parameters from another call's result.
func TestRecipeRunAsScatterKind(t *testing.T) {
	needsPOSIX(t)
	in := hearthtest.Start(t, trusted)
	c := hearthtest.Connect(t, in.URL, "scatter-recipe")
	if r := recipe(c, "create", map[string]any{"name": "say", "steps": []any{execStep("echo", "hearth ${v}")}}); r.IsError {
		t.Fatalf("create: %s", r.Raw)
	}
	r := c.Call("run", map[string]any{"operation": "scatter", "calls": []any{
		map[string]any{"kind": "machine.host_info"},
		map[string]any{"kind": "recipe.run", "name": "say", "params": map[string]any{"v": map[string]any{"$future": 0, "$path": "result.hearth"}}},
	}})
	if r.IsError {
		t.Fatalf("scatter: %s", r.Raw)
	}
	id := r.Get("result.futures.1.future_id").(string)
	var env map[string]any
	arrivals := r.Arrivals()
	for i := 0; env == nil && i < 200; i++ {
		for _, a := range arrivals {
			if a["future_id"] == id {
				env, _ = a["envelope"].(map[string]any)
			}
		}
		arrivals = c.Call("machine", map[string]any{"operation": "host_info"}).Arrivals()
	}
	if hearthtest.Get(env, "result.steps.0.result.stdout.text") != "hearth test\n" {
		t.Fatalf("recipe.run in a scatter: %v", env)
	}
}

// TestPlaceholdersNeverBecomeCode: a parameter value is never code. A
// placeholder is refused (naming the field and saying why) in the command
// and where an interpreter reads code: after sh/bash -c (also mid-string),
// in any argument of cmd, after powershell -Command, in task.submit jobs.
// It stays allowed as a plain argument: to a program that is not an
// interpreter, after an interpreter's script file, and after sh -c code,
// where it is "$1". A recipe stored without this check is refused when it
// runs, before any step starts.
func TestPlaceholdersNeverBecomeCode(t *testing.T) {
	needsPOSIX(t)
	in := hearthtest.Start(t, trusted)
	c := hearthtest.Connect(t, in.URL, "code")
	job := func(command string, args ...any) map[string]any {
		return map[string]any{"primitive": "task.submit", "input": map[string]any{"job": map[string]any{"command": command, "args": args}}}
	}
	for _, tc := range []struct {
		name  string
		step  map[string]any
		field string
		why   string
	}{
		{"sh -c", execStep("sh", "-c", "exit ${code}"), "steps[0].input.args[1]", "sh runs this argument as shell code"},
		{"sh -c placeholder code", execStep("sh", "-c", "${code}"), "steps[0].input.args[1]", "its shell code (with -c)"},
		{"bash -c mid-string", execStep("bash", "-c", "echo start; rm -f ${file}; echo end"), "steps[0].input.args[1]", "shell code"},
		{"bash option", execStep("bash", "${opt}", "echo hi"), "steps[0].input.args[0]", "one of its options"},
		{"cmd /c", execStep("cmd.exe", "/c", "echo ${x}"), "steps[0].input.args[1]", "cmd.exe parses its whole command line"},
		{"powershell -Command", execStep("powershell", "-NoProfile", "-Command", "Write-Output", "${x}"), "steps[0].input.args[3]", "PowerShell code"},
		{"python -c", execStep("python3", "-c", "print('${x}')"), "steps[0].input.args[1]", "python runs the argument after -c as code"},
		{"node -e", execStep("node", "-e", "${x}"), "steps[0].input.args[1]", "as code"},
		{"templated command", execStep("${prog}", "--version"), "steps[0].input.command", "may not choose the program"},
		{"templated interpreter path", execStep("/usr/bin/${shell}", "-c", "true"), "steps[0].input.command", "may not choose the program"},
		{"script path", execStep("sh", "${script}"), "steps[0].input.args[0]", "otherwise as its script"},
		{"task.submit job", job("sh", "-c", "sleep ${n}"), "steps[0].input.job.args[1]", "shell code"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := recipe(c, "create", map[string]any{"name": "bad", "steps": []any{tc.step}})
			if !r.IsError || r.Get("error.code") != "invalid_input" {
				t.Fatalf("accepted: %s", r.Raw)
			}
			if m := errMsg(r); !strings.Contains(m, `field "`+tc.field+`"`) || !strings.Contains(m, tc.why) || !strings.Contains(m, "could run as code") {
				t.Fatalf("message %q must name %s and say %q", m, tc.field, tc.why)
			}
		})
	}

	// Allowed: the value is one argv element the program reads as data.
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	hostile := "$(touch " + marker + "); touch " + marker + " `touch " + marker + "`"
	script := filepath.Join(dir, "show.sh")
	if err := os.WriteFile(script, []byte(`printf '[%s]' "$1"`), 0o644); err != nil {
		t.Fatal(err)
	}
	allowed := []any{
		execStep("printf", "[%s]", "${x}"),
		execStep("sh", script, "${x}"),
		execStep("sh", "-c", `printf '[%s]' "$1"`, "sh", "${x}"),
	}
	want := []string{"[" + hostile + "]", "[" + hostile + "]", "[" + hostile + "]"}
	if py, err := exec.LookPath("python3"); err == nil {
		pyScript := filepath.Join(dir, "show.py")
		if err := os.WriteFile(pyScript, []byte("import sys\nprint('[%s]' % sys.argv[1], end='')\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		allowed = append(allowed, execStep(py, pyScript, "${x}"))
		want = append(want, "["+hostile+"]")
	}
	r := recipe(c, "create", map[string]any{"name": "data", "steps": allowed})
	if r.IsError {
		t.Fatalf("create with data placeholders: %s", r.Raw)
	}
	r = recipe(c, "run", map[string]any{"name": "data", "params": map[string]any{"x": hostile}})
	if r.IsError {
		t.Fatalf("run: %s", r.Raw)
	}
	for i, w := range want {
		if out := r.Get(fmt.Sprintf("result.steps.%d.result.stdout.text", i)); out != w {
			t.Errorf("step %d printed %q, want %q (%s)", i, out, w, r.Raw)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a parameter value ran as a command")
	}

	// A recipe stored without the check (as by an older Hearth) is refused
	// at run time, before its first step runs.
	first := filepath.Join(dir, "first-step-ran")
	steps := `[{"primitive":"machine.exec","input":{"command":"touch","args":["` + first + `"]}},` +
		`{"primitive":"machine.exec","input":{"command":"sh","args":["-c","exit ${code}"]}}]`
	if _, err := in.App.DB.W.ExecContext(t.Context(), `INSERT INTO recipes(id, name, description, steps, params, route, created_at) VALUES (?,?,?,?,?,?,?)`,
		"rcp_legacy", "legacy", "", steps, `["code"]`, "", time.Now().UnixMilli()); err != nil {
		t.Fatal(err)
	}
	r = recipe(c, "run", map[string]any{"name": "legacy", "params": map[string]any{"code": "0; touch " + marker}})
	if !r.IsError || r.Get("error.code") != "invalid_input" || !strings.Contains(errMsg(r), `recipe.run: field "steps[1].input.args[1]"`) {
		t.Fatalf("stored shell placeholder at run time: %s", r.Raw)
	}
	for _, f := range []string{first, marker} {
		if _, err := os.Stat(f); err == nil {
			t.Fatalf("%s exists: a step ran", filepath.Base(f))
		}
	}
}
