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
// a hung mount — holds its spawner indefinitely; the others go on. ctx
// bounds the caller's part: while the request waits for a spawner, and
// while a spawner works on it, ctx ending makes startCmd return
// ctx.Err(). A request abandoned before a spawner reaches it is never
// started; a child whose start completes after its caller gave up is
// killed (its process group with it) and reaped by the spawner side, so
// nothing runs that no caller owns.
//
// Limits: only the direct child gets the signal. Its own children (the
// rest of its process group, or anything that left it) are reparented
// and keep running after a SIGKILL of Hearth; Run's group kill and exit
// sweep cover them only while Hearth lives. The kernel also clears the
// setting when the child executes a set-user-ID, set-group-ID or
// file-capability program, which then outlives Hearth as well.
func startCmd(ctx context.Context, cmd *exec.Cmd) error {
	return spawn(ctx, cmd, nil)
}

// spawner is process-wide state by nature: the OS threads that fork every
// child, for the life of the process.
var spawner struct {
	once sync.Once
	reqs chan *spawnReq
}

// spawnReq is one start handed to the spawners. Exactly one of the caller
// and the spawner decides the outcome, under mu: the spawner by setting
// done (the caller then takes err), the caller by setting abandoned (the
// spawner then skips the start, or undoes it).
type spawnReq struct {
	cmd *exec.Cmd
	// hook, when set (tests only), runs on the spawner thread with the
	// stage reached: "before" cmd.Start, then "after" it or "skipped"
	// when the caller had already given up.
	hook func(stage string)

	mu        sync.Mutex
	abandoned bool
	err       error
	done      chan struct{} // closed once err is set
}

// spawn is startCmd with a test hook.
func spawn(ctx context.Context, cmd *exec.Cmd, hook func(stage string)) error {
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
	r := &spawnReq{cmd: cmd, hook: hook, done: make(chan struct{})}
	select {
	case spawner.reqs <- r:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	select {
	case <-r.done:
		// The spawner finished first; its outcome stands.
		return r.err
	default:
	}
	r.abandoned = true
	return ctx.Err()
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
	if r.hook != nil {
		safeHook(r.hook, "before")
	}
	r.mu.Lock()
	gone := r.abandoned
	r.mu.Unlock()
	if gone {
		if r.hook != nil {
			safeHook(r.hook, "skipped")
		}
		return
	}
	err := safeStart(r.cmd)
	if r.hook != nil {
		safeHook(r.hook, "after")
	}
	r.mu.Lock()
	gone = r.abandoned
	if !gone {
		r.err = err
		close(r.done)
	}
	r.mu.Unlock()
	if gone && err == nil {
		// Off the spawner thread: Wait may take up to cmd.WaitDelay.
		go discard(r.cmd)
	}
}

// discard kills and reaps a child whose caller stopped waiting for its
// start. The child leads its own process group when it was started with
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

// safeHook runs a test hook with the same protection.
func safeHook(hook func(string), stage string) {
	defer func() { _ = recover() }()
	hook(stage)
}
