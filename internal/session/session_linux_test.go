package session

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/primitive"
)

// TestPythonREPL talks to a real python3 -i: a prompt, an expression, a
// Ctrl-C that interrupts a loop, an exit code, and the transcript kept.
func TestPythonREPL(t *testing.T) {
	e := newEnv(t, nil)
	s := e.start("python3", "-q", "-i")
	e.readUntil(s.SessionID, 0, ">>> ")
	sent := e.send(s.SessionID, "print(6*7)", "Enter")
	r := e.readUntil(s.SessionID, sent.Offset, "42")
	if !strings.Contains(r.Text, "print(6*7)") {
		t.Errorf("the pty echoes what was typed: %q", r.Text)
	}
	sent = e.send(s.SessionID, "while True: pass", "Enter", "Enter")
	time.Sleep(200 * time.Millisecond)
	e.send(s.SessionID, "", "Ctrl-C")
	e.readUntil(s.SessionID, sent.Offset, "KeyboardInterrupt")
	sent = e.send(s.SessionID, "import sys; sys.exit(3)", "Enter")
	off := sent.Offset
	var last *ReadResult
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		r, err := e.m.Read(context.Background(), convA, ReadInput{SessionID: s.SessionID, Offset: &off, WaitMS: 1000})
		if err != nil {
			t.Fatal(err)
		}
		off, last = r.NextOffset, r
		if r.Exited {
			break
		}
	}
	if !last.Exited || *last.ExitCode != 3 {
		t.Fatalf("after sys.exit(3): exited %v code %v", last.Exited, last.ExitCode)
	}
	if _, err := e.m.Send(context.Background(), convA, s.SessionID, "1", nil); err == nil {
		t.Fatal("a send to an exited program succeeded")
	} else {
		wantFailure(t, err, "exited")
	}
	c, err := e.m.Close(context.Background(), convA, s.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if c.Killed || c.ExitCode != 3 || c.Transcript == nil {
		t.Fatalf("close: %+v", c)
	}
	chunk, err := e.m.o.Artifacts.ReadRange(context.Background(), c.Transcript.ID, 0, 1<<20, "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(chunk.Data, "42") || !strings.Contains(chunk.Data, "KeyboardInterrupt") {
		t.Fatalf("transcript: %q", chunk.Data)
	}
	if es := e.closedEntries(); len(es) != 1 || es[0]["reason"] != ReasonClosed || es[0]["transcript"] != c.Transcript.ID {
		t.Fatalf("ledger: %v", es)
	}
}

// TestShellSessionReadsFromOffsets runs sh: each send returns the offset
// its answer starts at, and a read without offset goes on where the last
// one stopped.
func TestShellSessionReadsFromOffsets(t *testing.T) {
	e := newEnv(t, nil)
	s := e.start("sh")
	sent := e.send(s.SessionID, "echo hello-$((1+2))", "Enter")
	r := e.readUntil(s.SessionID, sent.Offset, "hello-3\n")
	sent2 := e.send(s.SessionID, "echo second", "Enter")
	if sent2.Offset < r.NextOffset {
		t.Fatalf("second send at offset %d, before the first read's end %d", sent2.Offset, r.NextOffset)
	}
	r2, err := e.m.Read(context.Background(), convA, ReadInput{SessionID: s.SessionID, WaitMS: 20_000, Until: "second\n"})
	if err != nil {
		t.Fatal(err)
	}
	if r2.Offset != r.NextOffset || strings.Contains(r2.Text, "hello-3") || !strings.Contains(r2.Text, "second") {
		t.Fatalf("read on from %d: offset %d text %q", r.NextOffset, r2.Offset, r2.Text)
	}
	// Another conversation cannot see or drive it.
	other := &primitive.Call{Route: "route-b"}
	if _, err := e.m.Send(context.Background(), other, s.SessionID, "echo intruder", []string{"Enter"}); err == nil {
		t.Fatal("another conversation typed into the session")
	} else {
		wantFailure(t, err, "not_found")
	}
	if l := e.m.List(other); len(l) != 0 {
		t.Fatalf("another conversation lists %v", l)
	}
	if l := e.m.List(convA); len(l) != 1 || l[0].SessionID != s.SessionID || l[0].PID != s.PID {
		t.Fatalf("list: %+v", l)
	}
}

// TestMaxSessions: the max_sessions+1st start is refused until one closes.
func TestMaxSessions(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.MaxSessions = 2 })
	a := e.start("sh")
	e.start("sh")
	_, err := e.m.StartSession(context.Background(), convA, StartInput{Command: "sh"})
	wantFailure(t, err, "too_many_sessions")
	if _, err := e.m.Close(context.Background(), convA, a.SessionID); err != nil {
		t.Fatal(err)
	}
	e.start("sh")
}

// TestOutputRingIsBounded: a program that writes more than
// session_buffer_bytes leaves only the newest bytes, and a read from an
// offset the ring dropped says how much is gone.
func TestOutputRingIsBounded(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.BufferBytes = 4096 })
	s := e.start("sh")
	sent := e.send(s.SessionID, "i=0; while [ $i -lt 400 ]; do echo line-$i-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx; i=$((i+1)); done; echo DONE", "Enter")
	e.readUntil(s.SessionID, sent.Offset, "line-399")
	zero := int64(0)
	r, err := e.m.Read(context.Background(), convA, ReadInput{SessionID: s.SessionID, Offset: &zero})
	if err != nil {
		t.Fatal(err)
	}
	if r.Lost == 0 || r.Offset == 0 || !strings.Contains(r.LostNote, "session_buffer_bytes") {
		t.Fatalf("a read from 0 after %d bytes: offset %d lost %d note %q", r.NextOffset, r.Offset, r.Lost, r.LostNote)
	}
	if strings.Contains(r.Text, "line-0-") {
		t.Fatal("the ring still holds the first line")
	}
}

// TestReadWaitIsBounded: wait_ms beyond MaxWait is refused, and a read of
// a quiet session returns after wait_ms.
func TestReadWaitIsBounded(t *testing.T) {
	e := newEnv(t, nil)
	s := e.start("sh")
	_, err := e.m.Read(context.Background(), convA, ReadInput{SessionID: s.SessionID, WaitMS: MaxWait.Milliseconds() + 1})
	wantFailure(t, err, "invalid_input")
	e.send(s.SessionID, `echo RE""ADY`, "Enter")
	e.readUntil(s.SessionID, 0, "READY")
	time.Sleep(100 * time.Millisecond)
	e.readUntil(s.SessionID, 0, "READY") // the cursor now past the prompt
	begin := time.Now()
	r, err := e.m.Read(context.Background(), convA, ReadInput{SessionID: s.SessionID, WaitMS: 300})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(begin); d < 250*time.Millisecond || d > 10*time.Second || r.Text != "" {
		t.Fatalf("a quiet read took %s and read %q", d, r.Text)
	}
}

// TestIdleSessionIsClosed: a session without send or read for the idle
// timeout is closed, its tree killed, and the ledger says why.
func TestIdleSessionIsClosed(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.IdleTimeout = 300 * time.Millisecond })
	s := e.start("sh")
	for deadline := time.Now().Add(10 * time.Second); e.m.Count() > 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the idle session is still open")
		}
	}
	assertGone(t, s.PID)
	e.waitClosedEntries(1)
	if es := e.closedEntries(); len(es) != 1 || es[0]["reason"] != ReasonIdle {
		t.Fatalf("ledger: %v", es)
	}
}

// TestTranscriptIsBounded: the transcript keeps its first
// TranscriptBytes and says it was cut.
func TestTranscriptIsBounded(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.TranscriptBytes = 200 })
	s := e.start("sh")
	sent := e.send(s.SessionID, "i=0; while [ $i -lt 50 ]; do echo line-$i; i=$((i+1)); done", "Enter")
	e.readUntil(s.SessionID, sent.Offset, "line-49")
	c, err := e.m.Close(context.Background(), convA, s.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if c.Transcript == nil || c.Transcript.Size > 200 || !c.Transcript.Truncated {
		t.Fatalf("transcript: %+v", c.Transcript)
	}
}

// TestCloseAllKillsTheWholeTree: a background child of the shell dies with
// it (what the e-stop and Hearth's exit do).
func TestCloseAllKillsTheWholeTree(t *testing.T) {
	e := newEnv(t, nil)
	s := e.start("sh")
	// The quotes keep the typed line (which the pty echoes) from matching.
	sent := e.send(s.SessionID, `sleep 1000 & echo PI""D:$!:`, "Enter")
	sleep := e.readPID(s.SessionID, sent.Offset)
	if !alive(sleep) {
		t.Fatal("the background sleep is not running")
	}
	if n := e.m.CloseAll(context.Background(), ReasonEStop); n != 1 {
		t.Fatalf("closed %d sessions", n)
	}
	assertGone(t, s.PID, sleep)
	if es := e.closedEntries(); len(es) != 1 || es[0]["reason"] != ReasonEStop || es[0]["killed"] != true {
		t.Fatalf("ledger: %v", es)
	}
}

// TestStopClosesSessionsAndTheNextStartRecordsTheLeftovers: Hearth's exit
// kills every session; a session a crashed Hearth left recorded open is
// recorded closed at the next start.
func TestStopClosesSessionsAndTheNextStartRecordsTheLeftovers(t *testing.T) {
	e := newEnv(t, nil)
	s := e.start("python3", "-q", "-i")
	e.m.Stop()
	assertGone(t, s.PID)
	if _, err := e.m.StartSession(context.Background(), convA, StartInput{Command: "sh"}); err == nil {
		t.Fatal("a stopped manager started a session")
	}
	// A crash leaves the record behind.
	if _, err := e.db.W.Exec(`INSERT INTO settings(key, value) VALUES (?, ?)`, settingPrefix+"ses_left", `{"route":"route-a","pid":1}`); err != nil {
		t.Fatal(err)
	}
	e.manager(nil)
	es := e.closedEntries()
	if len(es) != 2 || es[0]["reason"] != ReasonExit || es[1]["reason"] != ReasonRestarted || es[1]["session_id"] != "ses_left" {
		t.Fatalf("ledger: %v", es)
	}
	var n int
	if err := e.db.R.QueryRow(`SELECT count(*) FROM settings WHERE key LIKE 'session_open:%'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d open records left (%v)", n, err)
	}
}

func TestStartRefusesBadInputNamingTheField(t *testing.T) {
	e := newEnv(t, nil)
	cases := []struct {
		in   StartInput
		want string
	}{
		{StartInput{Command: " "}, `"command"`},
		{StartInput{Command: "sh", Args: []string{"a\x00"}}, `"args[0]"`},
		{StartInput{Command: "sh", Cwd: filepath.Join(t.TempDir(), "missing")}, `"cwd"`},
	}
	for _, c := range cases {
		_, err := e.m.StartSession(context.Background(), convA, c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want it to name %s", c.in, err, c.want)
		}
	}
	_, err := e.m.StartSession(context.Background(), convA, StartInput{Command: "no-such-program-hearth"})
	wantFailure(t, err, "program_not_found")
	if e.m.Count() != 0 {
		t.Fatal("a failed start holds a slot")
	}
}

// readPID reads from offset until a line "PID:<n>:" and returns n.
func (e *testEnv) readPID(id string, offset int64) int {
	e.t.Helper()
	re := regexp.MustCompile(`PID:(\d+):`)
	text := ""
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		r, err := e.m.Read(context.Background(), convA, ReadInput{SessionID: id, Offset: &offset, WaitMS: 1000})
		if err != nil {
			e.t.Fatal(err)
		}
		text, offset = text+r.Text, r.NextOffset
		if m := re.FindStringSubmatch(text); m != nil {
			pid, _ := strconv.Atoi(m[1])
			return pid
		}
	}
	e.t.Fatalf("no pid in %q", text)
	return 0
}

// waitClosedEntries waits (bounded) until the ledger holds n
// session_closed entries: a session leaves the list before its close is
// journaled.
func (e *testEnv) waitClosedEntries(n int) {
	e.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); len(e.closedEntries()) < n; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			e.t.Fatalf("the ledger has %d session_closed entries, want %d", len(e.closedEntries()), n)
		}
	}
}

// alive reports whether pid runs and is not a zombie.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}

func assertGone(t *testing.T, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Fatalf("process %d still runs", pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// TestShellExitEndsTheSessionWithItsJobs: a shell with job control puts a
// background job in a process group of its own; when the shell exits,
// the job dies with it (it is in the terminal's session), so the output
// ends and the exit is reported.
func TestShellExitEndsTheSessionWithItsJobs(t *testing.T) {
	e := newEnv(t, nil)
	s := e.start("sh")
	sent := e.send(s.SessionID, `sleep 1000 & echo PI""D:$!:`, "Enter")
	sleep := e.readPID(s.SessionID, sent.Offset)
	sent = e.send(s.SessionID, "exit 4", "Enter")
	off := sent.Offset
	for deadline := time.Now().Add(20 * time.Second); ; {
		r, err := e.m.Read(context.Background(), convA, ReadInput{SessionID: s.SessionID, Offset: &off, WaitMS: 1000})
		if err != nil {
			t.Fatal(err)
		}
		off = r.NextOffset
		if r.Exited {
			if *r.ExitCode != 4 {
				t.Fatalf("exit code %d", *r.ExitCode)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the shell's exit was never reported")
		}
	}
	assertGone(t, s.PID, sleep)
}

// TestSendIsBounded: one send's text is at most maxText bytes, and a send
// to a program that reads nothing answers input_blocked after sendWait
// instead of hanging (a second send meanwhile is refused at once); closing
// the session still works.
func TestSendIsBounded(t *testing.T) {
	e := newEnv(t, nil)
	s := e.start("sleep", "100")
	_, err := e.m.Send(context.Background(), convA, s.SessionID, strings.Repeat("x", maxText+1), nil)
	wantFailure(t, err, "invalid_input")
	// The terminal takes some input unread (its buffers); sends go on
	// until they are full.
	var d time.Duration
	for i := 0; ; i++ {
		if i == 64 {
			t.Fatal("4 MiB sent to a program that reads nothing, and no send was blocked")
		}
		begin := time.Now()
		// Whole lines: a line longer than the terminal's line buffer
		// is cut, not waited for.
		_, err = e.m.Send(context.Background(), convA, s.SessionID, strings.Repeat("x\n", maxText/2), nil)
		if d = time.Since(begin); err != nil {
			break
		}
	}
	wantFailure(t, err, "input_blocked")
	if d < sendWait-time.Second || d > sendWait+10*time.Second {
		t.Fatalf("the blocked send answered after %s", d)
	}
	_, err = e.m.Send(context.Background(), convA, s.SessionID, "more", nil)
	wantFailure(t, err, "input_blocked")
	if _, err := e.m.Close(context.Background(), convA, s.SessionID); err != nil {
		t.Fatal(err)
	}
	assertGone(t, s.PID)
}

// BenchmarkShellRoundTrip measures one line typed into sh and its answer
// read back (send, then a read waiting until the answer appears).
func BenchmarkShellRoundTrip(b *testing.B) {
	e := newEnv(b, nil)
	info, err := e.m.StartSession(context.Background(), convA, StartInput{Command: "sh"})
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; b.Loop(); i++ {
		want := fmt.Sprintf("R%d\n", i)
		sent, err := e.m.Send(context.Background(), convA, info.SessionID, fmt.Sprintf(`echo R""%d`, i), []string{"Enter"})
		if err != nil {
			b.Fatal(err)
		}
		off := sent.Offset
		r, err := e.m.Read(context.Background(), convA, ReadInput{SessionID: info.SessionID, Offset: &off, WaitMS: 10_000, Until: want})
		if err != nil || !strings.Contains(r.Text, want) {
			b.Fatalf("read %q: %v", r.Text, err)
		}
	}
}

// TestCloseAllDuringAStartKillsItsProgram: a session_start under way when
// the e-stop's CloseAll runs (held, through the test seam, after its
// program started and before its session is added) does not add the
// session: its program and the program's child are killed, it is not
// listed, the call is answered cancelled and the ledger records it closed
// by the e-stop.
func TestCloseAllDuringAStartKillsItsProgram(t *testing.T) {
	e := newEnv(t, nil)
	started, release := make(chan *Session), make(chan struct{})
	e.m.seams.started = func(s *Session) {
		started <- s
		<-release
	}
	type answer struct {
		info *Info
		err  error
	}
	done := make(chan answer, 1)
	go func() {
		info, err := e.m.StartSession(context.Background(), convA, StartInput{Command: "sh",
			Args: []string{"-c", `echo SH:$$:; sleep 60 & echo SLEEP:$!:; wait`}})
		done <- answer{info, err}
	}()
	var s *Session
	select {
	case s = <-started:
	case <-time.After(20 * time.Second):
		t.Fatal("the start did not reach the seam")
	}
	// The program's own word for its pids, read from its terminal.
	re := regexp.MustCompile(`SH:(\d+):\s+SLEEP:(\d+):`)
	c := s.out.wait(context.Background(), 0, 4096, 20*time.Second, func(c chunk) bool { return re.Match(c.data) })
	m := re.FindSubmatch(c.data)
	if m == nil {
		close(release)
		t.Fatalf("no pids in %q", c.data)
	}
	shPID, _ := strconv.Atoi(string(m[1]))
	sleepPID, _ := strconv.Atoi(string(m[2]))
	if shPID != s.pid || !alive(shPID) || !alive(sleepPID) {
		close(release)
		t.Fatalf("sh %d (session pid %d, alive %v), sleep %d (alive %v)", shPID, s.pid, alive(shPID), sleepPID, alive(sleepPID))
	}
	if n := e.m.CloseAll(context.Background(), ReasonEStop); n != 0 {
		t.Errorf("CloseAll closed %d sessions, want 0 (the start is not done)", n)
	}
	close(release)
	var a answer
	select {
	case a = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the start did not answer")
	}
	wantFailure(t, a.err, "cancelled")
	if pe := primitive.AsError(a.err); pe.State != primitive.StateCancelled || !strings.Contains(pe.Message, "emergency stop") {
		t.Errorf("answer: state %s, %q", pe.State, pe.Message)
	}
	if a.info != nil {
		t.Errorf("the start answered a session: %+v", a.info)
	}
	assertGone(t, shPID, sleepPID)
	if l := e.m.List(convA); len(l) != 0 || e.m.Count() != 0 {
		t.Fatalf("listed after the e-stop: %+v (count %d)", l, e.m.Count())
	}
	if es := e.closedEntries(); len(es) != 1 || es[0]["session_id"] != s.id || es[0]["reason"] != ReasonEStop || es[0]["killed"] != true {
		t.Fatalf("ledger: %v", es)
	}
	// The manager still starts sessions afterwards (the e-stop's latch,
	// not the manager, refuses them) and Stop still closes them.
	e.m.seams.started = nil
	after := e.start("sh")
	e.m.Stop()
	assertGone(t, after.PID)
}
