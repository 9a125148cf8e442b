package proc

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// KillAdopted kills every process this one adopted as the child subreaper
// (peeruser.AdoptOrphans), each with its descendants: a program Hearth
// ran that left its parent — with setsid -f, a double fork or nohup after
// its parent exited — is re-parented to Hearth, outside the process
// group and terminal session the tree kills reach. A child this process
// started itself (it holds a pidfd for it, as Go does for every child
// until Wait) is left alone: it is a running call's or Hearth's own, and
// is stopped by its owner. Each process is held by a pidfd of its own
// before it is judged and signalled through it (killAdoptedTree), so a
// pid that ended and was reused meanwhile — by a tunnel-client restart —
// is never signalled. Only a process that started by the tick of
// cutoff is taken (with everything it started since): a later sweep of a
// stop that the operator reset meanwhile must not kill what ran after the
// reset. Each walk kills what it finds; it stops when a walk takes none,
// after maxWalks at most. It reports how many processes it killed. Where this process cannot tell its own children from adopted
// ones (Go holds no pidfds for its children here), it kills nothing and
// says so.
func KillAdopted(cutoff time.Time) (int, error) {
	if !pidfdsWork() {
		return 0, errors.New("kill adopted processes: Go holds no pidfds for its children on this system, so Hearth cannot tell which of its children it adopted")
	}
	self := os.Getpid()
	killed := 0
	var errs []error
	for range maxWalks {
		adopted, err := Adopted()
		if err != nil {
			return killed, err
		}
		before := bootTicks(cutoff)
		took := false
		for _, pid := range adopted {
			n, ok, err := killAdoptedTree(pid, self, before)
			killed += n
			took = took || ok
			if err != nil {
				errs = append(errs, err)
			}
		}
		if !took {
			break
		}
	}
	return killed, errors.Join(errs...)
}

// killAdoptedTree kills pid, if it is still a live child of self that
// self did not start and that started by the boot-clock tick before,
// and its descendants, the way Kill kills a tree (stopped first, so none
// forks a child the walk would miss, then killed), but each process
// through a pidfd opened before it is judged: its parent and start are
// read after the pidfd holds it, and a signal through the pidfd reaches
// that process or none, never one that took its pid. ok says whether it
// took pid.
func killAdoptedTree(pid, self int, before int64) (n int, ok bool, err error) {
	held, hold := treeHolder()
	defer closeHeld(held)
	if pid == self || !hold(pid, func(pp int) bool { return pp == self && startedBefore(pid, before) }) {
		return 0, false, nil
	}
	n, err = killHeldTree(self, held, hold)
	return n, true, err
}

// userHZ is the unit of a process's start time in /proc/<pid>/stat (the
// kernel's USER_HZ, 100 on every architecture Go runs Linux on).
const userHZ = 100

// bootTicks is t on the clock of a process's start time: USER_HZ ticks of
// CLOCK_BOOTTIME (time since boot, suspend included), measured from now.
func bootTicks(t time.Time) int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return math.MaxInt64 // no clock to compare with: every process counts as before
	}
	return (ts.Nano() - time.Since(t).Nanoseconds()) / (int64(time.Second) / userHZ)
}

// startedBefore reports whether pid started by the boot-clock tick before
// (its stat's starttime, field 22): within that 10 ms tick counts as
// before, so a program that started just ahead of the cutoff is taken at
// once, and only one that starts in the same tick after it is taken with
// it. A start that cannot be read counts as before: the e-stop errs on the
// side of killing what was adopted.
func startedBefore(pid int, before int64) bool {
	_, fields, err := statFields(pid)
	if err != nil || len(fields) < 20 {
		return true
	}
	start, err := strconv.ParseInt(fields[19], 10, 64)
	return err != nil || start <= before
}

// treeHolder returns the pidfds of a tree kill (pid → its pidfd) and
// hold, which opens a pidfd for p and keeps it, p stopped, if p is live,
// its parent passes parentOK and this process holds no other pidfd for p
// (it did not start p).
func treeHolder() (map[int]int, func(p int, parentOK func(int) bool) bool) {
	held := map[int]int{}
	hold := func(p int, parentOK func(int) bool) bool {
		fd, err := unix.PidfdOpen(p, 0)
		if err != nil {
			return false
		}
		ppid, live := liveParent(p)
		if !live || !parentOK(ppid) || PidfdHeld(p, fd) || unix.PidfdSendSignal(fd, unix.SIGSTOP, nil, 0) != nil {
			unix.Close(fd)
			return false
		}
		held[p] = fd
		return true
	}
	return held, hold
}

func closeHeld(held map[int]int) {
	for _, fd := range held {
		unix.Close(fd)
	}
}

// killHeldTree is the rest of a tree kill once its root is held (stopped,
// its pidfd in held): the descendants of what held holds are held and
// stopped too, walk after walk, then all are killed through their pidfds.
func killHeldTree(self int, held map[int]int, hold func(p int, parentOK func(int) bool) bool) (int, error) {
	var walkErr error
	for range maxWalks {
		parents, err := parentMap()
		if err != nil {
			walkErr = err
			break
		}
		found := false
		for c, pp := range parents {
			if _, ok := held[pp]; !ok || c == self {
				continue
			}
			if _, ok := held[c]; ok {
				continue
			}
			if hold(c, func(now int) bool { _, ok := held[now]; return ok }) {
				found = true
			}
		}
		if !found {
			break
		}
	}
	killed := 0
	var errs []error
	for p, fd := range held {
		switch err := unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0); {
		case err == nil:
			killed++
		case !errors.Is(err, unix.ESRCH):
			errs = append(errs, fmt.Errorf("kill process %d: %w", p, err))
		}
	}
	if walkErr != nil {
		errs = append(errs, fmt.Errorf("find the descendants of %v: %w", slices.Sorted(maps.Keys(held)), walkErr))
	}
	return killed, errors.Join(errs...)
}

// Adopted lists the live children of this process that it did not start
// itself: the processes it adopted as the child subreaper. Zombies are
// left out (they hold nothing, and the reaper collects them).
func Adopted() ([]int, error) {
	ents, err := os.ReadDir(procRoot)
	if err != nil {
		return nil, err
	}
	self := os.Getpid()
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 || pid == self {
			continue
		}
		ppid, live := liveParent(pid)
		if !live || ppid != self || PidfdHeld(pid, -1) {
			continue
		}
		out = append(out, pid)
	}
	return out, nil
}

// liveParent reads pid's parent pid and whether it is a live process
// rather than a zombie.
func liveParent(pid int) (int, bool) {
	_, fields, err := statFields(pid)
	if err != nil || len(fields) < 2 || fields[0] == "Z" || fields[0] == "X" {
		return 0, false
	}
	ppid, err := strconv.Atoi(fields[1])
	return ppid, err == nil
}

// PidfdHeld reports whether a descriptor of this process other than
// except (-1 for none) is a pidfd of pid (its fdinfo says "Pid:\t<pid>"):
// Go holds one for every child it starts until Wait has reaped it, so a
// child with one is a child this process started itself. When the
// descriptors cannot be read it reports true (the child is left alone).
func PidfdHeld(pid, except int) bool {
	entries, err := os.ReadDir("/proc/self/fdinfo")
	if err != nil {
		return true
	}
	want := []byte("\nPid:\t" + strconv.Itoa(pid) + "\n")
	skip := strconv.Itoa(except)
	for _, e := range entries {
		if e.Name() == skip {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc/self/fdinfo", e.Name()))
		if err == nil && bytes.Contains(b, want) {
			return true
		}
	}
	return false
}

// pidfdsWork reports whether Go holds a pidfd for every child this
// process starts, which is what tells Hearth's own children from adopted
// ones. Go uses pidfds only when its own probe of the kernel passes
// (pidfd_open, waitid on a pidfd, pidfd_send_signal, CLONE_PIDFD); where
// it gave up, no child has one and every child would look adopted. So
// the answer is found the way it matters — a trivial child is started and
// its pidfd looked for before it is waited for — once per process: the
// kernel and Go do not change under a running process.
var pidfdsWork = sync.OnceValue(func() bool {
	prog, err := exec.LookPath("true")
	if err != nil {
		return false
	}
	cmd := exec.Command(prog)
	if err := cmd.Start(); err != nil {
		return false
	}
	held := PidfdHeld(cmd.Process.Pid, -1)
	_ = cmd.Wait()
	return held && pidfdOpens()
})

// pidfdOpens reports whether pidfd_open works, which KillAdopted uses to
// hold each process it kills.
func pidfdOpens() bool {
	fd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
}
