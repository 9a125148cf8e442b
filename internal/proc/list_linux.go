package proc

import (
	"bytes"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
)

// procRoot is where Linux exposes the process table.
const procRoot = "/proc"

// commLen is the length at which the kernel truncates a process's comm
// name (TASK_COMM_LEN minus the NUL).
const commLen = 15

// List reports the processes visible in /proc. Processes that exit while
// the table is read are skipped; details this user may not read (another
// user's executable path) are left empty rather than failing the list.
func List() ([]Info, error) {
	ents, err := os.ReadDir(procRoot)
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	users := map[string]string{}
	var out []Info
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		comm, ppid, err := readStat(pid)
		if err != nil {
			continue
		}
		exe, _ := os.Readlink(filepath.Join(procRoot, e.Name(), "exe"))
		name := comm
		// comm is cut at 15 bytes; the executable's base name is the full
		// name when it starts with what comm kept.
		if base := filepath.Base(exe); len(comm) == commLen && exe != "" && strings.HasPrefix(base, comm) {
			name = base
		}
		out = append(out, Info{PID: pid, PPID: ppid, Name: name, Exe: exe, User: owner(pid, users)})
	}
	return out, nil
}

// parentMap maps every visible pid to its parent pid; it is the cheap part
// of List that a tree kill needs.
func parentMap() (map[int]int, error) {
	ents, err := os.ReadDir(procRoot)
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	m := make(map[int]int, len(ents))
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		if _, ppid, err := readStat(pid); err == nil {
			m[pid] = ppid
		}
	}
	return m, nil
}

// readStat parses the command name and parent pid from /proc/<pid>/stat.
func readStat(pid int) (comm string, ppid int, err error) {
	comm, fields, err := statFields(pid)
	if err != nil {
		return "", 0, err
	}
	if len(fields) < 2 {
		return "", 0, fmt.Errorf("parse stat of process %d", pid)
	}
	ppid, err = strconv.Atoi(fields[1])
	if err != nil {
		return "", 0, fmt.Errorf("parse stat of process %d: %w", pid, err)
	}
	return comm, ppid, nil
}

// statFields reads /proc/<pid>/stat: the command name and the fields
// after it (state, ppid, pgrp, session, …). The name is in parentheses
// and may itself contain spaces and ')', so the fields after it are
// found from the last ')'.
func statFields(pid int) (comm string, fields []string, err error) {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "stat"))
	if err != nil {
		return "", nil, err
	}
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return "", nil, fmt.Errorf("parse stat of process %d", pid)
	}
	return string(b[open+1 : end]), strings.Fields(string(b[end+1:])), nil
}

// owner names the effective user of pid, looking each uid up once per
// List through cache.
func owner(pid int, cache map[string]string) string {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "status"))
	if err != nil {
		return ""
	}
	var uid string
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			if f := strings.Fields(rest); len(f) >= 2 {
				uid = f[1] // real, effective, saved, fs: report the effective one
			}
			break
		}
	}
	if uid == "" {
		return ""
	}
	if name, ok := cache[uid]; ok {
		return name
	}
	name := uid
	if u, err := user.LookupId(uid); err == nil {
		name = u.Username
	}
	cache[uid] = name
	return name
}
