package proc

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// KillSession kills every process of the terminal session sid (the
// session a program started with setsid leads, whose id is its pid):
// what a shell's job control moved into process groups of their own
// still belongs to it, and would otherwise hold the terminal open after
// the shell has gone. Each walk of the process table kills what it finds;
// it stops when a walk finds none, after maxWalks at most. Linux does not
// reuse a pid while a session of that id has members.
func KillSession(sid int) error {
	if sid <= 0 {
		return fmt.Errorf("kill session %d: not a session id", sid)
	}
	for range maxWalks {
		ents, err := os.ReadDir(procRoot)
		if err != nil {
			return fmt.Errorf("list processes: %w", err)
		}
		found := 0
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid <= 0 || pid == os.Getpid() {
				continue
			}
			if s, ok := sessionOf(pid); ok && s == sid {
				found++
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		if found == 0 {
			return nil
		}
	}
	return nil
}

// sessionOf reads pid's session id (the fourth field after its name) and
// whether it is a live process rather than a zombie, which holds nothing.
func sessionOf(pid int) (int, bool) {
	_, fields, err := statFields(pid)
	// After the name: state ppid pgrp session …
	if err != nil || len(fields) < 4 || fields[0] == "Z" {
		return 0, false
	}
	sid, err := strconv.Atoi(fields[3])
	return sid, err == nil
}
