//go:build !windows

package proc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// maxWalks bounds how often a tree kill re-reads the process table looking
// for descendants forked while it was stopping the ones it already knew.
// Each walk stops everything it finds, and a stopped process cannot fork,
// so even a fork loop runs out of new children within a few walks.
const maxWalks = 10

// group is the Unix handle on a child's process tree. The child leads a
// new process group (Setpgid), so one kill(-pgid) reaches every
// descendant that did not deliberately leave the group.
type group struct {
	pid int
	// swept delivers whether the exit watcher killed the group's leftovers
	// as soon as the leader exited; nil where no watcher runs.
	swept <-chan bool
}

func newGroup() (*group, error) { return &group{}, nil }

func (g *group) sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// started arranges for the group's leftovers to be killed the moment the
// leader exits. Doing it then, rather than after exec.Cmd.Wait, matters:
// Wait also waits for the output pipes, which a leftover background
// process keeps open, so sweeping only after Wait would make every such
// command take the full PipeGrace.
func (g *group) started(cmd *exec.Cmd) error {
	g.pid = cmd.Process.Pid
	g.swept = watchExit(g.pid, func() { _ = syscall.Kill(-g.pid, syscall.SIGKILL) })
	return nil
}

// kill is exec.Cmd.Cancel: it kills the whole tree of the running child.
// The group is stopped first so that nothing in it can fork while the
// process table is walked for descendants that left the group (setsid);
// then the group and those descendants are killed.
func (g *group) kill(p *os.Process) error {
	if err := syscall.Kill(-p.Pid, syscall.SIGSTOP); err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return os.ErrProcessDone
		}
		return fmt.Errorf("stop process group %d: %w", p.Pid, err)
	}
	stopped := map[int]bool{p.Pid: true}
	// The walk is best effort: the group kill below is the guarantee, the
	// walk only adds processes that left the group while still descending
	// from the child.
	_ = stopDescendants(stopped)
	err := syscall.Kill(-p.Pid, syscall.SIGKILL)
	for pid := range stopped {
		if pid != p.Pid {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}

// close sweeps the group if the exit watcher did not. The leader has been
// reaped by then, so in principle its pid could have been reused as a new
// group id; the kernel does not reuse a pid while a group of that id has
// members, and the window between reaping and this kill is microseconds,
// so the risk is accepted where no watcher exists.
func (g *group) close() {
	if g.pid == 0 {
		return
	}
	if g.swept != nil && <-g.swept {
		return
	}
	_ = syscall.Kill(-g.pid, syscall.SIGKILL)
}

// exitCode is the status the child exited with; ProcessState already
// reports -1 for a process that died of a signal, which covers our kill.
func exitCode(state *os.ProcessState, killed bool) int {
	if state == nil {
		return -1
	}
	return state.ExitCode()
}

// decodeLegacy is Decode's fallback off Windows, where there is no system
// code page to consult: Latin-1, named as such.
func decodeLegacy(b []byte) (string, string) {
	return latin1(b), "latin-1"
}

// Kill sends SIGKILL to pid and, when tree is set, to every descendant of
// it. It applies no policy of its own. A tree is killed in two phases:
// each process found is first stopped, so none can fork a child the walk
// would miss or be reaped and reparented mid-walk, and only then is
// everything killed. Hearth's own pid is never stopped (that would freeze
// the caller) and, if it is in the tree, is killed last.
func Kill(pid int, tree bool) error {
	if pid <= 0 {
		// kill(2) gives 0 and negative pids group meanings; never pass them.
		return fmt.Errorf("kill process %d: invalid pid", pid)
	}
	if !tree {
		return signal(pid, syscall.SIGKILL)
	}
	self := os.Getpid()
	if pid != self {
		if err := signal(pid, syscall.SIGSTOP); err != nil {
			return err
		}
	}
	stopped := map[int]bool{pid: true}
	walkErr := stopDescendants(stopped)
	var errs []error
	for p := range stopped {
		if p == self {
			continue
		}
		// A process that exited meanwhile is not a failure.
		if err := signal(p, syscall.SIGKILL); err != nil && !errors.Is(err, ErrNotFound) {
			errs = append(errs, err)
		}
	}
	if walkErr != nil {
		errs = append(errs, fmt.Errorf("find descendants of %d: %w", pid, walkErr))
	}
	if stopped[self] {
		errs = append(errs, signal(self, syscall.SIGKILL))
	}
	return errors.Join(errs...)
}

// stopDescendants adds to stopped every descendant of the processes in it,
// sending each new one SIGSTOP (except Hearth itself), and walks again
// until a walk finds nothing new.
func stopDescendants(stopped map[int]bool) error {
	self := os.Getpid()
	for range maxWalks {
		parents, err := parentMap()
		if err != nil {
			return err
		}
		children := make(map[int][]int, len(parents))
		for pid, ppid := range parents {
			children[ppid] = append(children[ppid], pid)
		}
		queue := make([]int, 0, len(stopped))
		for pid := range stopped {
			queue = append(queue, pid)
		}
		found := false
		for len(queue) > 0 {
			p := queue[0]
			queue = queue[1:]
			for _, c := range children[p] {
				if stopped[c] {
					continue
				}
				if c != self {
					_ = syscall.Kill(c, syscall.SIGSTOP)
				}
				stopped[c] = true
				found = true
				queue = append(queue, c)
			}
		}
		if !found {
			return nil
		}
	}
	return nil
}

func signal(pid int, sig syscall.Signal) error {
	if err := syscall.Kill(pid, sig); err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("signal process %d: %w", pid, ErrNotFound)
		}
		return fmt.Errorf("signal process %d: %w", pid, err)
	}
	return nil
}
