package proc

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// Tree holds the process tree of one long-lived child that the caller
// starts and waits for itself with os/exec (a supervised service rather
// than a bounded command, which is Run's job). It is the same containment
// Run uses: on Windows a Job Object created with kill-on-close, so the tree
// dies with Hearth even when Hearth crashes; on Unix a process group of
// its own. In both, whatever the child left running is killed the moment
// it exits.
//
// Use: t := NewTree(); cmd.SysProcAttr = t.SysProcAttr(); t.StartContext(ctx, cmd);
// then cmd.Cancel may call t.Interrupt (graceful) or t.Kill (the whole
// tree); after cmd.Wait, t.Close. (cmd.Start followed by t.Started works
// too, without Start's parent-death signal on Linux.)
type Tree struct {
	g *group
	// shared reports that the child shares Hearth's console (Windows), which
	// decides how Interrupt reaches it.
	shared bool

	// mu guards proc and pending: exec.Cmd.Cancel may call Interrupt or
	// Kill from its own goroutine as soon as cmd.Start returns, before
	// Started has run.
	mu      sync.Mutex
	proc    *os.Process
	pending bool // Interrupt or Kill came before Started
	closed  bool
}

// NewTree prepares the containment for one child.
func NewTree() (*Tree, error) {
	g, err := newGroup()
	if err != nil {
		return nil, err
	}
	return &Tree{g: g}, nil
}

// SysProcAttr is the exec.Cmd.SysProcAttr the child must be started with.
// On Windows the child never gets a console window of its own: it shares
// Hearth's console when Hearth has one (serve in a terminal) and otherwise
// gets a hidden one; either way it leads a console process group of its
// own, so Interrupt can address it alone.
func (t *Tree) SysProcAttr() *syscall.SysProcAttr {
	attr := t.g.sysProcAttr()
	t.shared = t.adjust(attr)
	return attr
}

// Start is StartContext without a bound on the wait to start.
func (t *Tree) Start(cmd *exec.Cmd) error {
	return t.StartContext(context.Background(), cmd)
}

// StartContext starts cmd the way Run starts its child — on Linux with a
// parent-death signal, from a thread that lives as long as Hearth (see
// startCmd), so the child does not outlive a Hearth killed outright — and
// then calls Started. ctx bounds only the start: if it ends while the
// start is still waiting for a spawner thread (Linux) or under way there,
// StartContext returns ctx.Err() and no child is left running. Otherwise
// an error is cmd.Start's.
func (t *Tree) StartContext(ctx context.Context, cmd *exec.Cmd) error {
	if err := startCmd(ctx, cmd); err != nil {
		return err
	}
	return t.Started(cmd)
}

// Started puts the freshly started child into the tree; call it right
// after cmd.Start. On error the child has been killed and waited for. A
// stop requested before Started (Interrupt or Kill) kills the tree here,
// and cmd.Wait then reports the kill.
func (t *Tree) Started(cmd *exec.Cmd) error {
	if err := t.g.started(cmd); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Close()
		return err
	}
	t.mu.Lock()
	t.proc = cmd.Process
	pending := t.pending
	t.mu.Unlock()
	if pending {
		// The caller is stopping anyway; its cmd.Wait sees the child die.
		_ = t.g.kill(cmd.Process)
	}
	return nil
}

// started returns the leader once Started has run; otherwise it records
// that a stop is pending and returns nil.
func (t *Tree) started() *os.Process {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.proc == nil {
		t.pending = true
	}
	return t.proc
}

// Interrupt asks the child to stop: SIGTERM to its process group on Unix,
// CTRL_BREAK_EVENT to its console process group on Windows (which a Go
// program sees as os.Interrupt). A child that has already exited gives
// os.ErrProcessDone.
func (t *Tree) Interrupt() error {
	p := t.started()
	if p == nil {
		return nil
	}
	return t.interrupt(p.Pid)
}

// Kill kills every process of the tree at once.
func (t *Tree) Kill() error {
	p := t.started()
	if p == nil {
		return nil
	}
	return t.g.kill(p)
}

// Close releases the tree once cmd.Wait has returned (or cmd.Start
// failed); on Windows closing the Job Object ends anything still in it.
// Calling it again does nothing.
func (t *Tree) Close() {
	t.mu.Lock()
	closed := t.closed
	t.closed = true
	t.mu.Unlock()
	if !closed {
		t.g.close()
	}
}

// Environ returns Hearth's environment with extra added, an extra entry
// replacing an inherited one of the same name (case-insensitively on
// Windows). It is how a secret reaches one child's environment only.
func Environ(extra map[string]string) ([]string, error) {
	env, err := mergeEnv(os.Environ(), extra, runtime.GOOS == "windows")
	if err != nil {
		return nil, err
	}
	if env == nil {
		env = os.Environ()
	}
	return env, nil
}
