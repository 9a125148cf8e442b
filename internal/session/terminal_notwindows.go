//go:build !windows

package session

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"

	"github.com/creack/pty"

	"github.com/hearth-dev/hearth/internal/proc"
)

// unixTerminal is a program on a pty, leading a session of its own (so
// the pty is its controlling terminal and Ctrl-C reaches its foreground
// job) in a process tree that internal/proc kills as a whole.
type unixTerminal struct {
	ptmx *os.File
	cmd  *exec.Cmd
	tree *proc.Tree
}

// available reports whether sessions can start here: a pty always can.
func available() error { return nil }

func startTerminal(ctx context.Context, s startSpec) (terminal, error) {
	env, err := proc.Environ(withTerm(s.Env))
	if err != nil {
		return nil, err
	}
	ptmx, tty, err := pty.Open()
	if err != nil {
		return nil, fmt.Errorf("open a pty: %w", err)
	}
	if err := pty.Setsize(ptmx, &pty.Winsize{Cols: s.Cols, Rows: s.Rows}); err != nil {
		ptmx.Close()
		tty.Close()
		return nil, fmt.Errorf("size the pty: %w", err)
	}
	cmd := exec.Command(s.Command, s.Args...)
	cmd.Dir, cmd.Env = s.Dir, env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	tree, err := proc.NewTree()
	if err != nil {
		ptmx.Close()
		tty.Close()
		return nil, err
	}
	// A new session rather than only a process group: the pty becomes the
	// program's controlling terminal (fd 0 in the child). Its session id
	// is its pid, and so is its process group's, which is what the tree
	// kills.
	attr := tree.SysProcAttr()
	attr.Setpgid, attr.Setsid, attr.Setctty, attr.Ctty = false, true, true, 0
	cmd.SysProcAttr = attr
	err = tree.StartContext(ctx, cmd)
	tty.Close() // the child holds its own copy
	if err != nil {
		ptmx.Close()
		tree.Close()
		return nil, err
	}
	return &unixTerminal{ptmx: ptmx, cmd: cmd, tree: tree}, nil
}

func (t *unixTerminal) Read(p []byte) (int, error)  { return t.ptmx.Read(p) }
func (t *unixTerminal) Write(p []byte) (int, error) { return t.ptmx.Write(p) }
func (t *unixTerminal) PID() int                    { return t.cmd.Process.Pid }

// Kill kills the program's tree and then everything else in its
// terminal session (a shell's background jobs lead process groups of
// their own).
func (t *unixTerminal) Kill() error {
	err := t.tree.Kill()
	if errors.Is(err, os.ErrProcessDone) {
		err = nil
	}
	return errors.Join(err, proc.KillSession(t.cmd.Process.Pid))
}

// Wait waits for the program; once it has exited, what is left of its
// terminal session is killed, as closing a terminal window ends its jobs,
// so that nothing holds the pty open and the output ends.
func (t *unixTerminal) Wait() int {
	_ = t.cmd.Wait()
	_ = proc.KillSession(t.cmd.Process.Pid)
	t.tree.Close()
	if t.cmd.ProcessState == nil {
		return -1
	}
	return t.cmd.ProcessState.ExitCode()
}

func (t *unixTerminal) Close() error { return t.ptmx.Close() }
