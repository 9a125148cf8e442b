package demo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/demo"
)

// TestMain lets this test binary be the demo's child program: the demo
// runs os.Executable(), which in a test is this binary.
func TestMain(m *testing.M) {
	if handled, err := demo.Child(os.Args[1:], os.Stdout); handled {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	// Under -race a test binary sleeps a second at exit (atexit_sleep_ms);
	// the demo's children are this binary, so skip that wait for them.
	if os.Getenv("GORACE") == "" {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	os.Exit(m.Run())
}

// privateTemp points the process's temporary directory at a fresh
// directory, so a test can see what the demo leaves behind there.
func privateTemp(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, k := range []string{"TMPDIR", "TMP", "TEMP"} {
		t.Setenv(k, dir)
	}
	return dir
}

func readReport(t *testing.T, path string) (demo.Report, []byte) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("report not written: %v", err)
	}
	var rep demo.Report
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		t.Fatalf("decode report: %v\n%s", err, raw)
	}
	return rep, raw
}

// machinePaths are paths of this machine that must not appear in a report.
func machinePaths(t *testing.T, extra ...string) []string {
	t.Helper()
	paths := append([]string{os.TempDir()}, extra...)
	if exe, err := os.Executable(); err == nil {
		paths = append(paths, exe, filepath.Dir(exe))
	}
	if wd, err := os.Getwd(); err == nil {
		paths = append(paths, wd)
	}
	if home, err := os.UserHomeDir(); err == nil && len(home) > 1 {
		paths = append(paths, home)
	}
	var out []string
	for _, p := range paths {
		out = append(out, p)
		if esc, err := json.Marshal(p); err == nil {
			out = append(out, strings.Trim(string(esc), `"`))
		}
	}
	return out
}

func TestDemoEveryStepHolds(t *testing.T) {
	outDir := t.TempDir()
	tmp := privateTemp(t)
	out := filepath.Join(outDir, "demo-report.json")
	var progress bytes.Buffer
	start := time.Now()
	err := demo.Run(context.Background(), demo.Options{Out: out, Version: "test", Stdout: &progress})
	elapsed := time.Since(start)
	t.Logf("demo took %v\n%s", elapsed, progress.String())
	if err != nil {
		t.Fatalf("demo: %v", err)
	}
	rep, raw := readReport(t, out)
	if !rep.OK || rep.Failure != "" {
		t.Fatalf("report not ok: %s", raw)
	}
	var names []string
	for _, s := range rep.Steps {
		names = append(names, s.Name)
		if !s.OK || s.Detail == "" {
			t.Errorf("step %s: ok %v, detail %q", s.Name, s.OK, s.Detail)
		}
	}
	if !slices.Equal(names, demo.StepNames()) {
		t.Fatalf("steps %v, want %v", names, demo.StepNames())
	}
	if n := len(rep.Steps); rep.Totals.Steps != n || rep.Totals.Passed != n || rep.Totals.Failed != 0 || rep.Totals.NotRun != 0 || rep.Totals.ToolCalls == 0 {
		t.Errorf("totals: %+v", rep.Totals)
	}
	if rep.HearthVersion != "test" || rep.GoVersion == "" || rep.OS == "" || rep.Protocol != "2026-07-28" {
		t.Errorf("report header: %s", raw)
	}
	for _, line := range demo.StepNames() {
		if !strings.Contains(progress.String(), line) {
			t.Errorf("no progress line for %s", line)
		}
	}

	// Evidence: a relative path beside the report, verified, complete.
	ev := rep.Evidence
	if ev == nil || ev.Bundle != demo.EvidenceName || filepath.IsAbs(ev.Bundle) || ev.Entries == 0 || ev.CheckpointSize != ev.Entries || ev.RootHash == "" {
		t.Fatalf("evidence: %+v", ev)
	}
	if _, err := os.Stat(filepath.Join(outDir, ev.Bundle)); err != nil {
		t.Fatalf("evidence bundle not beside the report: %v", err)
	}
	for _, s := range rep.Steps {
		if strings.Contains(s.Detail, "exported "+demo.EvidenceName) && !strings.Contains(s.Detail, "read as an MCP resource") {
			t.Errorf("the evidence step did not read the conversation's evidence over MCP: %s", s.Detail)
		}
	}
	for _, k := range []string{"estop", "reset", "queue_resume", "permit_approved"} {
		if ev.Kinds[k] == 0 {
			t.Errorf("ledger lacks %s: %v", k, ev.Kinds)
		}
	}

	// Relative paths only: no path of this machine appears in the report.
	for _, p := range machinePaths(t, outDir, tmp) {
		if bytes.Contains(raw, []byte(p)) {
			t.Errorf("report names the machine path %q", p)
		}
	}
	// The temporary data directory and fs root are gone.
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("the demo left %d entries in the temporary directory (first %s)", len(left), left[0].Name())
	}
}

// TestFailedStepIsNamed breaks one step on purpose: Run fails naming it,
// the report says so, later steps are not run, Hearth is stopped and the
// temporary directory removed.
func TestFailedStepIsNamed(t *testing.T) {
	const broken = "fs_patch_conflict_undo"
	if !slices.Contains(demo.StepNames(), broken) {
		t.Fatalf("no step %s in %v", broken, demo.StepNames())
	}
	outDir := t.TempDir()
	tmp := privateTemp(t)
	out := filepath.Join(outDir, "report.json")
	injected := errors.New("injected failure")
	var progress bytes.Buffer
	err := demo.Run(context.Background(), demo.Options{Out: out, Version: "test", Stdout: &progress,
		AfterStep: func(step string) error {
			if step == broken {
				return injected
			}
			return nil
		}})
	var se *demo.StepError
	if !errors.As(err, &se) || se.Step != broken || !strings.Contains(err.Error(), broken) || !strings.Contains(err.Error(), "injected failure") {
		t.Fatalf("want a StepError naming %s, got %v", broken, err)
	}
	if !strings.Contains(progress.String(), "FAIL") || !strings.Contains(progress.String(), broken) {
		t.Errorf("progress does not show the failure:\n%s", progress.String())
	}
	rep, raw := readReport(t, out)
	if rep.OK || !strings.Contains(rep.Failure, broken) {
		t.Fatalf("report must fail naming %s: %s", broken, raw)
	}
	seen := false
	for _, s := range rep.Steps {
		switch {
		case s.Name == broken:
			seen = true
			if s.OK || !strings.Contains(s.Detail, "injected failure") {
				t.Errorf("broken step reported as %+v", s)
			}
		case !seen && !s.OK:
			t.Errorf("step %s before the broken one failed: %+v", s.Name, s)
		case seen && (s.OK || !strings.Contains(s.Detail, "not run")):
			t.Errorf("step %s after the broken one: %+v", s.Name, s)
		}
	}
	if rep.Totals.Failed != 1 || rep.Totals.NotRun != len(demo.StepNames())-rep.Totals.Passed-1 {
		t.Errorf("totals: %+v", rep.Totals)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("the demo left %d entries in the temporary directory", len(left))
	}
}

// TestKeepLeavesTheDataDirectory: with Keep the temporary directory stays
// (here after an early failure), holding the database.
func TestKeepLeavesTheDataDirectory(t *testing.T) {
	tmp := privateTemp(t)
	out := filepath.Join(t.TempDir(), "report.json")
	err := demo.Run(context.Background(), demo.Options{Out: out, Keep: true, Version: "test",
		AfterStep: func(step string) error {
			if step == "host_info" {
				return errors.New("stop here")
			}
			return nil
		}})
	if err == nil || !strings.Contains(err.Error(), `"host_info"`) {
		t.Fatalf("want a failure naming host_info, got %v", err)
	}
	dbs, _ := filepath.Glob(filepath.Join(tmp, "hearth-demo-*", "data", "hearth.db"))
	if len(dbs) != 1 {
		t.Fatalf("kept data directory not found (%v)", dbs)
	}
}

func TestChildJobs(t *testing.T) {
	var out bytes.Buffer
	if handled, err := demo.Child([]string{demo.ChildArg, "lines", "3"}, &out); !handled || err != nil {
		t.Fatalf("lines: %v %v", handled, err)
	}
	if out.String() != "hearth demo line 00001 of 00003\nhearth demo line 00002 of 00003\nhearth demo line 00003 of 00003\n" {
		t.Fatalf("lines: %q", out.String())
	}
	file := filepath.Join(t.TempDir(), "f")
	for range 2 {
		if _, err := demo.Child([]string{demo.ChildArg, "append", file, "x"}, &out); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(file); string(b) != "x\nx\n" {
		t.Fatalf("append: %q", b)
	}
	if _, err := demo.Child([]string{demo.ChildArg, "fly"}, &out); err == nil {
		t.Fatal("an unknown job must fail")
	}
	if handled, _ := demo.Child([]string{"lines", "3"}, &out); handled {
		t.Fatal("without the switch the child role must not run")
	}
}
