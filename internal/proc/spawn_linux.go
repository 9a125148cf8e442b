package proc

import (
	"context"
	"fmt"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// spawners is how many spawner threads start children. More than one, so
// that a start stuck in the kernel (an exec from a hung network or FUSE
// mount keeps the spawning thread inside clone until the exec completes)
// leaves the others free; each is one idle OS thread otherwise.
const spawners = 4

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
// a child that is still running. So every such child is forked on one of
// a few spawner goroutines that lock their threads and never return: those
// threads live exactly as long as Hearth.
//
// The cost is that a start waits for a free spawner, and a spawner is
// busy for the whole of cmd.Start: the Go runtime forks with vfork
// semantics, so the spawning thread stays suspended until the child has
// called exec (syscall.ForkLock is held only around the fork itself, and
// concurrent forks may share it). A start that hangs there — an exec from
// a hung mount — holds its spawner indefinitely; the others go on.
//
// ctx bounds the wait for a spawner: a request that no spawner has taken
// when ctx ends is withdrawn and startCmd returns ctx.Err(). Once a
// spawner has it, startCmd waits for that spawner whatever ctx does: until
// cmd.Start returns, the spawner reads cmd and the files the caller hands
// the child, and a caller that went on could close one of them under it
// (and a reused descriptor number would hand the child another file). The
// spawner skips a start whose ctx has ended; a child started as ctx ended
// is killed (its process group with it) and reaped, and startCmd returns
// ctx.Err(), so nothing runs that no caller owns.
//
// Limits: only the direct child gets the signal. Its own children (the
// rest of its process group, or anything that left it) are reparented
// and keep running after a SIGKILL of Hearth; Run's group kill and exit
// sweep cover them only while Hearth lives. The kernel also clears the
// setting when the child executes a set-user-ID, set-group-ID or
// file-capability program, which then outlives Hearth as well.
func startCmd(ctx context.Context, cmd *exec.Cmd) error {
	return spawn(&spawnReq{ctx: ctx, cmd: cmd})
}

// spawner is process-wide state by nature: the OS threads that fork every
// child, for the life of the process.
var spawner struct {
	once sync.Once
	reqs chan *spawnReq
}

// spawnReq is one start handed to the spawners; the spawner sets err and
// closes done.
type spawnReq struct {
	ctx   context.Context
	cmd   *exec.Cmd
	seams seams // fortest.go; zero in the program

	err  error
	done chan struct{}
}

// spawn hands r to a spawner and waits for it (startCmd).
func spawn(r *spawnReq) error {
	ctx, cmd := r.ctx, r.cmd
	if err := ctx.Err(); err != nil {
		return err
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	spawner.once.Do(func() {
		spawner.reqs = make(chan *spawnReq)
		for range spawners {
			go spawnLoop(spawner.reqs)
		}
	})
	r.done = make(chan struct{})
	select {
	case spawner.reqs <- r:
	case <-ctx.Done():
		return ctx.Err()
	}
	<-r.done
	if r.err != nil {
		return r.err
	}
	if err := ctx.Err(); err != nil {
		// Started as the caller gave up: the child has no owner. Reaped
		// off this goroutine, as Wait may take up to cmd.WaitDelay.
		go discard(cmd)
		return err
	}
	return nil
}

// spawnLoop owns one spawner thread. It locks the goroutine to its thread
// and never unlocks or returns, so the thread never exits while Hearth
// runs.
func spawnLoop(reqs <-chan *spawnReq) {
	runtime.LockOSThread()
	for r := range reqs {
		serve(r)
	}
}

// serve runs one request on the spawner thread.
func serve(r *spawnReq) {
	defer close(r.done)
	r.seams.reached("before")
	if err := r.ctx.Err(); err != nil {
		r.seams.reached("skipped")
		r.err = err
		return
	}
	r.err = safeStart(r.cmd)
	r.seams.reached("after")
}

// discard kills and reaps a child whose caller gave up while it was
// being started. The child leads its own process group when it was started with
// Setpgid (as Run and Tree start theirs), and it has had no time to leave
// it, so the group kill takes whatever it started as well.
func discard(cmd *exec.Cmd) {
	if a := cmd.SysProcAttr; a != nil && a.Setpgid && a.Pgid == 0 {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
}

// safeStart keeps a panic in Start from ending a spawner goroutine, which,
// locked, would take its thread and with it every child it started.
func safeStart(cmd *exec.Cmd) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("start process: panic: %v", r)
		}
	}()
	return cmd.Start()
}
