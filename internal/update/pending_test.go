//go:build !windows

package update

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// oldProgram writes a previous version that only notes it was started
// again, in a program folder, and returns its path and the note's.
func oldProgram(t *testing.T) (exe, note string, content []byte) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "Programs", "Hearth")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	exe = filepath.Join(dir, ProgramName())
	note = filepath.Join(t.TempDir(), "old-started")
	content = []byte("#!/bin/sh\ntouch " + note + "\n")
	if err := os.WriteFile(exe, content, 0o755); err != nil {
		t.Fatal(err)
	}
	return exe, note, content
}

func waitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestBrokenReleaseWithAutoInstallsOnce: with update.auto on and a
// release whose program does not start, there is exactly one install and
// one rollback: the version that comes back checks at start, is not
// offered the release that rolled back, and says why; a newer release is
// offered again.
func TestBrokenReleaseWithAutoInstallsOnce(t *testing.T) {
	r := newRelease(t)
	broken := []byte("#!/bin/sh\necho 'hearth-tray 1.4.0: cannot start' >&2\nexit 3\n")
	r.publish(t, "1.4.0", "1.0.0", map[string][]byte{ProgramName(): broken})
	exe, note, old := oldProgram(t)
	data := t.TempDir()
	var mu sync.Mutex
	var installs int
	var outcomes []Outcome
	handoff := func(p Plan) {
		mu.Lock()
		installs++
		mu.Unlock()
		o := Apply(context.Background(), p, Handoff{Exe: exe, DataDir: data, ConfigPath: filepath.Join(data, "config.json"), HealthWithin: 10 * time.Second})
		mu.Lock()
		outcomes = append(outcomes, o)
		mu.Unlock()
	}
	opts := Options{Version: "1.3.0", URL: r.url(), Key: r.vkey, Check: true, Auto: true, DataDir: data,
		QuietEvery: 10 * time.Millisecond, Quiet: func() bool { return true }, Handoff: handoff}
	// The first start installs the release at the first quiet moment, and
	// hands over (Hearth stops to hand over; the rollback starts the
	// previous version again).
	first := New(opts)
	ctx, cancel := context.WithCancel(context.Background())
	go first.Run(ctx)
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		done := len(outcomes)
		mu.Unlock()
		if done > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no install: %+v", first.State())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	// Each next start of the previous version checks at once, with
	// update.auto on and a quiet moment.
	for start := 1; start <= 2; start++ {
		s := New(opts)
		ctx, cancel := context.WithCancel(context.Background())
		go s.Run(ctx)
		deadline := time.Now().Add(20 * time.Second)
		for st := s.State(); st.Checked.IsZero() || st.Phase != PhaseIdle; st = s.State() {
			if time.Now().After(deadline) {
				t.Fatalf("start %d: never checked: %+v", start, st)
			}
			time.Sleep(10 * time.Millisecond)
		}
		// One more turn of Run after the check, so an install it would
		// start has started.
		s.wake <- struct{}{}
		s.wake <- struct{}{}
		cancel()
		st := s.State()
		if st.Offer != nil || st.CanInstall || st.Refused == nil || st.Refused.Version != "1.4.0" || !st.Refused.Started || !strings.Contains(st.Refused.Detail, "cannot start") {
			t.Fatalf("start %d: %+v (refused %+v)", start, st, st.Refused)
		}
		if err := s.Install(context.Background()); err == nil {
			t.Fatalf("start %d: the release that rolled back could be installed", start)
		}
	}
	mu.Lock()
	if installs != 1 || len(outcomes) != 1 || outcomes[0].Result != ResultRolledBack {
		t.Fatalf("installs %d, outcomes %+v", installs, outcomes)
	}
	mu.Unlock()
	if !bytes.Equal(readFile(t, exe), old) {
		t.Fatal("the previous program is not back")
	}
	waitFile(t, note)
	// A newer release is offered again.
	r.publish(t, "1.4.1", "1.0.0", map[string][]byte{ProgramName(): program})
	opts.Auto = false
	s := New(opts)
	s.Check(context.Background())
	if st := s.State(); st.Offer == nil || st.Offer.Version != "1.4.1" || st.Refused != nil {
		t.Fatalf("the newer release: %+v", st)
	}
}

// TestRollbackOutputIsTheNewProgramsOwn: the rollback's detail is the new
// program's own output, from a file of its own: a previous program still
// writing to the earlier output file (start.log) adds neither NUL bytes
// nor its own lines.
func TestRollbackOutputIsTheNewProgramsOwn(t *testing.T) {
	exe, _, _ := oldProgram(t)
	data := t.TempDir()
	marks := t.TempDir()
	if err := os.MkdirAll(Dir(data), 0o700); err != nil {
		t.Fatal(err)
	}
	// The running previous version's output, opened as a hand-over opened
	// it before, 39 bytes in.
	held, err := os.OpenFile(filepath.Join(Dir(data), "start.log"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	held.WriteString("hearth-tray 1.3.0 listening on 3000..\n")
	staged := filepath.Join(data, "staged-new")
	script := "#!/bin/sh\necho 'hearth-tray 1.4.0: cannot start' >&2\ntouch " + filepath.Join(marks, "started") +
		"\nwhile [ ! -f " + filepath.Join(marks, "written") + " ]; do sleep 0.02; done\nexit 3\n"
	if err := os.WriteFile(staged, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	go func() {
		waitFile(t, filepath.Join(marks, "started"))
		held.WriteString("hearth-tray 1.3.0: the old version's line\n")
		os.WriteFile(filepath.Join(marks, "written"), nil, 0o600)
	}()
	o := Apply(context.Background(), Plan{From: "1.3.0", To: "1.4.0", NewExe: staged}, Handoff{
		Exe: exe, DataDir: data, ConfigPath: filepath.Join(data, "config.json"), HealthWithin: 20 * time.Second,
	})
	if o.Result != ResultRolledBack || !strings.Contains(o.Detail, "the new version's output:\nhearth-tray 1.4.0: cannot start") {
		t.Fatalf("outcome: %+v", o)
	}
	if strings.ContainsRune(o.Detail, 0) || strings.Contains(o.Detail, "old version") {
		t.Fatalf("the detail holds another program's output: %q", o.Detail)
	}
}

// TestHandoverKilledDuringHealthWait: the Hearth watching a new version
// is killed during the health wait (a logoff, Task Manager) with the new
// version not yet healthy: the hand-over is on disk, and the next start
// of the program (the new version's file) puts the previous program back
// and starts it, and the outcome says what happened.
func TestHandoverKilledDuringHealthWait(t *testing.T) {
	exe, note, old := oldProgram(t)
	data := t.TempDir()
	marks := t.TempDir()
	newProg := []byte("#!/bin/sh\necho $$ > " + filepath.Join(marks, "new-pid") + "\nexec sleep 120\n")
	staged := filepath.Join(data, "staged-new")
	if err := os.WriteFile(staged, newProg, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	watch := exec.Command(self)
	watch.Env = append(os.Environ(), fakeRoleEnv+"=apply", "HEARTH_UPDATE_FAKE_EXE="+exe, "HEARTH_UPDATE_FAKE_DATA="+data, "HEARTH_UPDATE_FAKE_STAGED="+staged)
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	waitFile(t, filepath.Join(marks, "new-pid"))
	// Killed as a logoff kills: the watch, then the new version.
	watch.Process.Kill()
	watch.Wait()
	pid, err := strconv.Atoi(strings.TrimSpace(string(readFile(t, filepath.Join(marks, "new-pid")))))
	if err != nil {
		t.Fatal(err)
	}
	syscall.Kill(pid, syscall.SIGKILL)
	if !bytes.Equal(readFile(t, exe), newProg) {
		t.Fatal("the new program is not in place after the swap")
	}
	if _, err := os.Stat(pendingPath(data)); err != nil {
		t.Fatalf("no hand-over on disk: %v", err)
	}
	// The next start: the new version's file starts, unwatched.
	o, restarted, ok := Resume(context.Background(), Handoff{Exe: exe, DataDir: data, ConfigPath: filepath.Join(data, "config.json")}, "1.4.0")
	if !ok || !restarted || o.Result != ResultRolledBack || !strings.Contains(o.Plain, "stopped while it checked the new version 1.4.0") {
		t.Fatalf("resume: %+v restarted %v ok %v", o, restarted, ok)
	}
	if !bytes.Equal(readFile(t, exe), old) {
		t.Fatal("the previous program is not back")
	}
	waitFile(t, note)
	if saved, _, _ := ReadOutcome(data); saved.Result != ResultRolledBack {
		t.Fatalf("outcome.json: %+v", saved)
	}
	if _, err := os.Stat(pendingPath(data)); err == nil {
		t.Fatal("pending.json is still there")
	}
	if _, _, ok := Resume(context.Background(), Handoff{Exe: exe, DataDir: data}, "1.3.0"); ok {
		t.Fatal("resumed twice")
	}
}

// TestRepinChangesOneKey: the hand-over's re-pin of tunnel-client changes
// tunnel.client_sha256 in config.json and no other byte (no default of the
// running version written into the file).
func TestRepinChangesOneKey(t *testing.T) {
	exe, _, _ := oldProgram(t)
	data := t.TempDir()
	tc := filepath.Join(filepath.Dir(exe), TunnelClientName())
	if err := os.WriteFile(tc, []byte("old tc"), 0o755); err != nil {
		t.Fatal(err)
	}
	oldSum, newSum := strings.Repeat("ab", 32), strings.Repeat("cd", 32)
	cfg := filepath.Join(data, "config.json")
	before := `{
    "tunnel": {"client_path": ` + strconv.Quote(tc) + `,   "client_sha256": "` + oldSum + `"},
    "backup_keep": 3
}
`
	if err := os.WriteFile(cfg, []byte(before), 0o600); err != nil {
		t.Fatal(err)
	}
	newTC := filepath.Join(data, "staged-tc")
	os.WriteFile(newTC, []byte("new tc"), 0o755)
	newExe := filepath.Join(data, "staged-exe")
	os.WriteFile(newExe, []byte("#!/bin/sh\nexit 0\n"), 0o755)
	p := Plan{From: "1.3.0", To: "1.4.0", NewExe: newExe, NewTunnel: newTC, TunnelSHA256: newSum}
	h := Handoff{Exe: exe, DataDir: data, ConfigPath: cfg}
	sw := planSwap(p, h)
	if err := sw.do(p, h); err != nil {
		t.Fatal(err)
	}
	if got, want := string(readFile(t, cfg)), strings.Replace(before, oldSum, newSum, 1); got != want {
		t.Fatalf("config after the re-pin:\n%s\nwant:\n%s", got, want)
	}
	if err := sw.undo(); err != nil {
		t.Fatal(err)
	}
	if got := string(readFile(t, cfg)); got != before {
		t.Fatalf("config after the undo:\n%s", got)
	}
}

// TestWatchedStartIsLeftAlone: the new version started by the watching
// Hearth (it carries the attempt's id) does not roll its own hand-over
// back, does not pass the id on to what it starts, and once it serves
// (Confirm) the hand-over is over: the pending record and the leftovers
// of earlier updates go.
func TestWatchedStartIsLeftAlone(t *testing.T) {
	exe, _, _ := oldProgram(t)
	data := t.TempDir()
	leftover := previousName(exe) + ".1"
	os.WriteFile(leftover, []byte("an older version"), 0o755)
	os.MkdirAll(Dir(data), 0o700)
	if err := writeJSON(pendingPath(data), pending{ID: "abc", From: "1.3.0", To: "1.4.0", Swap: swapped{Exe: exe, ExeAside: previousName(exe)}}); err != nil {
		t.Fatal(err)
	}
	t.Setenv(attemptEnv, "abc")
	if _, _, ok := Resume(context.Background(), Handoff{Exe: exe, DataDir: data}, "1.4.0"); ok {
		t.Fatal("the watched start rolled itself back")
	}
	if v, set := os.LookupEnv(attemptEnv); set {
		t.Fatalf("%s=%s stays for the programs Hearth starts", attemptEnv, v)
	}
	Confirm(data, exe, "1.3.0") // another version: not its hand-over
	if _, err := os.Stat(pendingPath(data)); err != nil {
		t.Fatal("confirmed by another version")
	}
	Confirm(data, exe, "1.4.0")
	if _, err := os.Stat(pendingPath(data)); err == nil {
		t.Fatal("pending.json stays after the new version serves")
	}
	if _, err := os.Stat(leftover); err == nil {
		t.Fatal("the numbered previous program stays")
	}
}
