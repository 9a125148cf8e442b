package proc

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// KillAdopted kills every process this one adopted as the child subreaper
// (peeruser.AdoptOrphans), each with its descendants: a program Hearth
// ran that left its parent — with setsid -f, a double fork or nohup after
// its parent exited — is re-parented to Hearth, outside the process
// group and terminal session the tree kills reach. A child this process
// started itself (it holds a pidfd for it, as Go does for every child
// until Wait) is left alone: it is a running call's or Hearth's own, and
// is stopped by its owner. Each walk kills what it finds; it stops when a
// walk finds none, after maxWalks at most. It reports how many processes
// it killed. Where this process cannot tell its own children from
// adopted ones (no pidfds), it kills nothing and says so.
func KillAdopted() (int, error) {
	if !pidfdsWork() {
		return 0, errors.New("kill adopted processes: this system has no pidfds, so Hearth cannot tell which of its children it adopted")
	}
	self := os.Getpid()
	killed := 0
	var errs []error
	for range maxWalks {
		adopted, err := Adopted()
		if err != nil {
			return killed, err
		}
		if len(adopted) == 0 {
			break
		}
		for _, pid := range adopted {
			if pid == self {
				continue
			}
			switch err := Kill(pid, true); {
			case err == nil:
				killed++
			case !errors.Is(err, ErrNotFound):
				errs = append(errs, err)
			}
		}
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

// pidfdsWork reports whether this kernel gives pidfds, without which Go
// holds none for its children and adopted ones cannot be told apart.
func pidfdsWork() bool {
	fd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
}
