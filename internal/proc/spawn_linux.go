package proc

import (
	"fmt"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// startCmd starts cmd with a parent-death signal: if Hearth dies — even by
// SIGKILL, when no deferred cleanup, Cancel or exit sweep can run — the
// kernel sends the child SIGKILL (prctl PR_SET_PDEATHSIG, set by the Go
// runtime between fork and exec; it also kills the child at once if
// Hearth died before that point).
//
// The kernel's "parent" here is the thread that forked the child, not the
// process: the signal fires when that thread exits, even while Hearth
// lives on. Go ends an OS thread whenever a goroutine exits while locked
// to it (runtime.LockOSThread without UnlockOSThread), which any code in
// the process may do. Locking the calling goroutine only for the length
// of cmd.Start does not help: Start returns, the thread goes back to the
// pool, and a later goroutine that locks it and exits ends it — and kills
// a child that is still running. So every such child is forked on one
// spawner goroutine that locks its thread and never returns: that thread
// lives exactly as long as Hearth. The cost is that starts are serialized,
// which fork/exec's own ForkLock mostly does already.
//
// Limits: only the direct child gets the signal. Its own children (the
// rest of its process group, or anything that left it) are reparented
// and keep running after a SIGKILL of Hearth; Run's group kill and exit
// sweep cover them only while Hearth lives. The kernel also clears the
// setting when the child executes a set-user-ID, set-group-ID or
// file-capability program, which then outlives Hearth as well.
func startCmd(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	spawner.once.Do(func() {
		spawner.reqs = make(chan spawnReq)
		go spawnLoop(spawner.reqs)
	})
	done := make(chan error, 1)
	spawner.reqs <- spawnReq{cmd: cmd, done: done}
	return <-done
}

// spawner is process-wide state by nature: the one OS thread that forks
// every child, for the life of the process.
var spawner struct {
	once sync.Once
	reqs chan spawnReq
}

type spawnReq struct {
	cmd  *exec.Cmd
	done chan<- error
}

// spawnLoop owns the spawner thread. It locks the goroutine to its thread
// and never unlocks or returns, so the thread never exits while Hearth
// runs.
func spawnLoop(reqs <-chan spawnReq) {
	runtime.LockOSThread()
	for r := range reqs {
		r.done <- safeStart(r.cmd)
	}
}

// safeStart keeps a panic in Start from ending the spawner goroutine,
// which, locked, would take the thread and with it every running child.
func safeStart(cmd *exec.Cmd) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("start process: panic: %v", r)
		}
	}()
	return cmd.Start()
}
