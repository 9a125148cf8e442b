package selftest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// ChildEnv marks a process started as one of the selftest's fixture
// children; its arguments say which.
const ChildEnv = "HEARTH_SELFTEST_CHILD"

// Child runs the fixture child this process was started as, if it was
// (ChildEnv set): "fixture RUNID" shows the fixture windows and answers
// commands on stdin; "hold FILE" holds FILE open the way an editor or a
// scanner does until its input ends. main calls it first, and so does the
// TestMain of a package whose tests run the selftest.
func Child(args []string, stdin io.Reader, stdout io.Writer) (handled bool, err error) {
	if os.Getenv(ChildEnv) != "1" {
		return false, nil
	}
	if len(args) != 2 {
		return true, fmt.Errorf("selftest child: want fixture RUNID or hold FILE, got %q", args)
	}
	switch args[0] {
	case "fixture":
		return true, runFixtureChild(args[1], stdin, stdout)
	case "hold":
		return true, runHoldChild(args[1], stdin, stdout)
	}
	return true, fmt.Errorf("selftest child: unknown job %q", args[0])
}

// runFixtureChild shows the fixture and answers its commands.
func runFixtureChild(id string, stdin io.Reader, stdout io.Writer) error {
	enc := json.NewEncoder(stdout)
	w, err := openFixture(NewFixture(id))
	if err != nil {
		enc.Encode(Ready{Error: err.Error()})
		return err
	}
	defer w.Close()
	if err := enc.Encode(Ready{HWND: w.HWND(), PanelHWND: w.PanelHWND(), PID: os.Getpid()}); err != nil {
		return err
	}
	sc := bufio.NewScanner(stdin)
	for sc.Scan() {
		switch strings.TrimSpace(sc.Text()) {
		case CmdState:
			if err := enc.Encode(w.State()); err != nil {
				return err
			}
		case CmdQuit:
			return nil
		default:
			enc.Encode(map[string]string{"error": "unknown command"})
		}
	}
	return nil
}

// childProc is a running fixture child: its stdin (closing it ends the
// child) and its stdout, line by line.
type childProc struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines *bufio.Scanner
	mu    sync.Mutex
	// done is closed when the child has exited.
	done chan struct{}
}

// startChild starts exe as the child job args.
func startChild(exe string, args ...string) (*childProc, error) {
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), ChildEnv+"=1")
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the fixture child: %w", err)
	}
	c := &childProc{cmd: cmd, in: in, lines: bufio.NewScanner(out), done: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

// childWait bounds a wait for one line of a child.
const childWait = 60 * time.Second

// line reads the child's next line, or fails when it ends or takes longer
// than childWait.
func (c *childProc) line() ([]byte, error) {
	type answer struct {
		b  []byte
		ok bool
	}
	ch := make(chan answer, 1)
	go func() {
		ok := c.lines.Scan()
		ch <- answer{append([]byte(nil), c.lines.Bytes()...), ok}
	}()
	select {
	case a := <-ch:
		if !a.ok {
			return nil, errors.New("the fixture child ended without answering")
		}
		return a.b, nil
	case <-time.After(childWait):
		return nil, fmt.Errorf("the fixture child did not answer within %s", childWait)
	}
}

// ask sends cmd and reads the answer line.
func (c *childProc) ask(cmd string) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := io.WriteString(c.in, cmd+"\n"); err != nil {
		return nil, fmt.Errorf("tell the fixture child %q: %w", cmd, err)
	}
	return c.line()
}

// stop closes the child's input and waits for it to end, killing it when
// it does not. It may be called again once the child has ended.
func (c *childProc) stop() error {
	c.in.Close()
	select {
	case <-c.done:
		return nil
	case <-time.After(30 * time.Second):
		c.cmd.Process.Kill()
		<-c.done
		return errors.New("the fixture child did not end when its input closed; killed it")
	}
}

// fixtureProc is the running fixture window child.
type fixtureProc struct {
	*childProc
	ready Ready
	model Fixture
	// stateOf, when set, answers state instead of the child (the tests'
	// fake desktop).
	stateOf func() (State, error)
}

// startFixture starts the fixture child and waits for its windows.
func (r *run) startFixture(ctx context.Context) (*fixtureProc, error) {
	c, err := startChild(r.exe, "fixture", r.id)
	if err != nil {
		return nil, err
	}
	r.onFinish("the fixture window", c.stop)
	line, err := c.line()
	if err != nil {
		return nil, err
	}
	ready, err := ParseReady(line)
	if err != nil {
		return nil, err
	}
	return &fixtureProc{childProc: c, ready: ready, model: NewFixture(r.id)}, nil
}

// state asks the fixture for its state.
func (f *fixtureProc) state() (State, error) {
	if f.stateOf != nil {
		return f.stateOf()
	}
	b, err := f.ask(CmdState)
	if err != nil {
		return State{}, err
	}
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return State{}, fmt.Errorf("the fixture's state answer: %.120q", b)
	}
	return s, nil
}
