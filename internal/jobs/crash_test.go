//go:build linux

package jobs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// writeConfig prepares a data directory for a child serve process.
func writeConfig(t testing.TB, home string, maxJobs int) {
	t.Helper()
	c := config.Default()
	c.Roots = []string{home}
	c.MCPAddr, c.PanelAddr = "127.0.0.1:0", "127.0.0.1:0"
	c.MaxConcurrentJobs = maxJobs
	// Exec needs no operator permit in trusted mode; permits are not what
	// these tests are about.
	c.Policy.Mode = config.ModeTrusted
	if err := config.Write(filepath.Join(home, "config.json"), c); err != nil {
		t.Fatal(err)
	}
}

// crashJob is one job of the crash test with what the test knows about it.
type crashJob struct {
	label   string
	body    string // shell run between the S and E marker lines
	fails   bool
	block   bool // on_interrupt: block
	delayMS int
	deps    []int
}

func (c crashJob) spec(marker string) map[string]any {
	j := sh(`echo "S $0" >> "$1"; `+c.body+`; rc=$?; echo "E $0" >> "$1"; exit $rc`, c.label, marker)
	if c.block {
		j["on_interrupt"] = "block"
	}
	if c.delayMS > 0 {
		j["delay_ms"] = c.delayMS
	}
	if len(c.deps) > 0 {
		deps := make([]any, len(c.deps))
		for i, d := range c.deps {
			deps[i] = d
		}
		j["dependencies"] = deps
	}
	return j
}

func crashPlan() []crashJob {
	var p []crashJob
	add := func(c crashJob) { c.label = "j" + strconv.Itoa(len(p)); p = append(p, c) }
	// 0–3: long-running, certainly running when Hearth is killed.
	add(crashJob{body: "sleep 4"})
	add(crashJob{body: "sleep 4"})
	add(crashJob{body: "sleep 4", block: true})
	add(crashJob{body: "sleep 4", block: true})
	// 4–5: depend on the interrupted block jobs.
	add(crashJob{body: "true", deps: []int{2}})
	add(crashJob{body: "true", deps: []int{3}})
	// 6–125: quick independent jobs, a few failing.
	for i := range 120 {
		if i%40 == 39 {
			add(crashJob{body: "false", fails: true})
		} else {
			add(crashJob{body: "true"})
		}
	}
	// 126–145: delayed, some due before the kill and some after the restart.
	for i := range 20 {
		add(crashJob{body: "true", delayMS: 300 + i*250})
	}
	// 146–185: ten chains of four; the first three chains start with a
	// failing job, so the rest of those chains is blocked.
	for c := range 10 {
		head := len(p)
		if c < 3 {
			add(crashJob{body: "false", fails: true})
		} else {
			add(crashJob{body: "true"})
		}
		for k := 1; k < 4; k++ {
			add(crashJob{body: "true", deps: []int{head + k - 1}})
		}
	}
	// 186–199: half-second jobs depending on quick ones; some run across
	// the kill.
	for i := range 14 {
		add(crashJob{body: "sleep 0.5", block: i%2 == 1, deps: []int{6 + i}})
	}
	return p
}

// TestCrashRecoveryChildProcess submits 200 jobs to a real serve process,
// SIGKILLs it mid-run, restarts it on the same data directory and checks
// every job's terminal state against the rules: nothing lost, nothing run
// twice unless it was interrupted and requeued (attempts say so), jobs with
// on_interrupt "block" that were interrupted are blocked with outcome
// unknown, and failed or blocked dependencies block their dependents.
func TestCrashRecoveryChildProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs Hearth as a child process")
	}
	needShell(t)
	home := t.TempDir()
	writeConfig(t, home, 8)
	marker := filepath.Join(t.TempDir(), "marker")
	plan := crashPlan()
	specs := make([]any, len(plan))
	for i, c := range plan {
		specs[i] = c.spec(marker)
	}

	p1 := hearthtest.StartProcess(t, home)
	c1 := hearthtest.Connect(t, p1.URL, "crash-test")
	r := c1.Call("task", map[string]any{"operation": "submit", "jobs": specs})
	if r.State() != "completed" {
		t.Fatalf("submit: %s", r.Text)
	}
	var ids []string
	for _, id := range r.Get("result.ids").([]any) {
		ids = append(ids, id.(string))
	}
	if len(ids) != len(plan) {
		t.Fatalf("submitted %d ids for %d jobs", len(ids), len(plan))
	}
	time.Sleep(1500 * time.Millisecond)
	before := scanMarker(t, marker)
	p1.Kill()
	t.Logf("killed serve after 1.5 s; %d jobs had started", len(before))

	p2 := hearthtest.StartProcess(t, home)
	c2 := hearthtest.Connect(t, p2.URL, "crash-test")
	final := make([]map[string]any, len(ids))
	for i, id := range ids {
		// task.wait returns on each change of state (queued → running
		// too), so wait again until the job has ended.
		for {
			w := c2.Call("task", map[string]any{"operation": "wait", "id": id, "timeout_ms": 60000})
			job, _ := w.Get("result.job").(map[string]any)
			if job == nil || w.Get("result.timed_out") != false {
				t.Fatalf("job %d (%s) not terminal after restart: %s", i, id, w.Text)
			}
			if st, _ := job["state"].(string); dispatch.Settled(st) {
				final[i] = job
				break
			}
		}
	}
	runs := scanMarker(t, marker)

	num := func(m map[string]any, k string) int { f, _ := m[k].(float64); return int(f) }
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	tally := map[string]int{}
	interrupted, requeuedRuns := 0, 0
	for i, c := range plan {
		j := final[i]
		state, attempts, intr := str(j, "state"), num(j, "attempts"), num(j, "interruptions")
		tally[state]++
		starts := runs[c.label]
		if intr > 0 {
			interrupted++
		}
		// The expected state follows from the dependencies' final states
		// and from whether this job was interrupted.
		var badDeps []string
		for _, d := range c.deps {
			if str(final[d], "state") != "completed" {
				badDeps = append(badDeps, ids[d])
			}
		}
		want := "completed"
		switch {
		case len(badDeps) > 0:
			want = "blocked"
		case c.block && intr > 0:
			want = "blocked"
		case c.fails:
			want = "failed"
		}
		if state != want {
			t.Errorf("job %d %s: state %s, want %s (attempts %d, interruptions %d, reason %q)", i, c.label, state, want, attempts, intr, str(j, "reason"))
			continue
		}
		switch {
		case len(badDeps) > 0:
			if attempts != 0 || starts != 0 {
				t.Errorf("job %d blocked by a dependency yet started (attempts %d, runs %d)", i, attempts, starts)
			}
			named := false
			for _, d := range badDeps {
				named = named || strings.Contains(str(j, "reason"), d)
			}
			if !named {
				t.Errorf("job %d: reason %q names none of %v", i, str(j, "reason"), badDeps)
			}
		case c.block && intr > 0:
			if str(j, "outcome") != "unknown" || intr != attempts || starts > attempts {
				t.Errorf("job %d interrupted with on_interrupt block: outcome %q, attempts %d, interruptions %d, runs %d", i, str(j, "outcome"), attempts, intr, starts)
			}
		default:
			// One finished attempt plus one per interruption. A run the
			// kill caught between claiming and starting the process left
			// no marker, hence attempts-1 ≤ runs ≤ attempts.
			if attempts != intr+1 || starts > attempts || starts < attempts-1 || (intr == 0 && starts != 1) {
				t.Errorf("job %d %s: attempts %d, interruptions %d, runs %d", i, state, attempts, intr, starts)
			}
			if intr > 0 {
				requeuedRuns += starts - 1
			}
		}
		if c.delayMS > 0 && starts > 0 {
			runAt, _ := time.Parse(time.RFC3339Nano, str(j, "run_at"))
			started, _ := time.Parse(time.RFC3339Nano, str(j, "started_at"))
			if started.Before(runAt) {
				t.Errorf("delayed job %d started %v before run_at %v", i, started, runAt)
			}
		}
	}
	for i := range 4 {
		if num(final[i], "interruptions") == 0 {
			t.Errorf("long job %d was not interrupted by the kill", i)
		}
	}
	// Nothing lost: the conversation lists exactly the submitted jobs.
	l := c2.Call("task", map[string]any{"operation": "list", "limit": 200})
	items, _ := l.Get("result.items").([]any)
	listed := map[string]bool{}
	for _, it := range items {
		listed[hearthtest.Get(it, "id").(string)] = true
	}
	for _, id := range ids {
		if !listed[id] {
			t.Errorf("job %s missing from list", id)
		}
	}
	if len(items) != len(ids) {
		t.Errorf("list has %d items, submitted %d", len(items), len(ids))
	}
	t.Logf("final states %v; %d jobs interrupted, %d extra runs of requeued jobs", tally, interrupted, requeuedRuns)
	if err := p2.Interrupt(t); err != nil {
		t.Errorf("clean shutdown after recovery: %v\n%s", err, p2.Stderr.String())
	}
}

// TestIdleCPU measures the CPU time a serve process holding 1000 jobs
// delayed by an hour uses over five seconds. The scheduler sleeps on one
// timer, so it should be close to nothing; the bound asserted is generous
// (a quarter of a CPU-second) so that only a polling loop fails it.
func TestIdleCPU(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs Hearth as a child process")
	}
	needShell(t)
	home := t.TempDir()
	writeConfig(t, home, 4)
	p := hearthtest.StartProcess(t, home)
	c := hearthtest.Connect(t, p.URL, "idle-test")
	specs := make([]any, 1000)
	for i := range specs {
		specs[i] = map[string]any{"command": "true", "delay_ms": 3_600_000}
	}
	if r := c.Call("task", map[string]any{"operation": "submit", "jobs": specs}); r.State() != "completed" {
		t.Fatalf("submit: %s", r.Text)
	}
	time.Sleep(time.Second) // let start-up and the submit settle
	pid := p.Cmd.Process.Pid
	t0 := cpuTicks(t, pid)
	const window = 5 * time.Second
	time.Sleep(window)
	used := cpuTicks(t, pid) - t0
	// USER_HZ is 100 on every Linux configuration Go supports.
	cpu := time.Duration(used) * 10 * time.Millisecond
	t.Logf("serve with 1000 jobs delayed 1h: %v CPU over %v (%d ticks)", cpu, window, used)
	if cpu > 250*time.Millisecond {
		t.Errorf("idle queue used %v CPU in %v", cpu, window)
	}
}

// cpuTicks returns utime+stime of pid from /proc/<pid>/stat.
func cpuTicks(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// The command name may contain spaces; fields resume after ") ".
	s := string(b)
	rest := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	// rest[0] is field 3 (state); utime and stime are fields 14 and 15.
	ut, _ := strconv.ParseInt(rest[11], 10, 64)
	st, _ := strconv.ParseInt(rest[12], 10, 64)
	return ut + st
}
