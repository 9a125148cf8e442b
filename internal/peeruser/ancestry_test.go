//go:build linux || windows

package peeruser

import (
	"net"
	"os"
	"slices"
	"testing"
)

// TestPeerPIDsAndDescendsFrom: the peer end of a connection made by a real
// child process is found held by the child, which descends from this
// process; this process descends from itself; its own parent and pid 1 do
// not descend from it.
func TestPeerPIDsAndDescendsFrom(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	child, _, c := startHolder(t, ln)
	pids, err := ConnPeerPIDs(c)
	if err != nil || !slices.Contains(pids, child.Process.Pid) {
		t.Fatalf("peer of the child's connection: %v %v, want %d", pids, err, child.Process.Pid)
	}
	if slices.Contains(pids, os.Getpid()) {
		t.Fatalf("the child's connection was reported held by this process: %v", pids)
	}
	self := os.Getpid()
	type check struct {
		name string
		pid  int
		want bool
	}
	checks := []check{{"the child", child.Process.Pid, true}, {"this process", self, true}}
	// Wine gives a Windows process started from Linux no parent pid.
	if ppid := os.Getppid(); ppid > 0 {
		checks = append(checks, check{"this process's parent", ppid, false})
	}
	for _, tc := range checks {
		got, err := DescendsFrom(tc.pid, self)
		if err != nil || got != tc.want {
			t.Errorf("%s (pid %d): %v %v, want %v", tc.name, tc.pid, got, err, tc.want)
		}
	}
	if got, err := DescendsFrom(self, child.Process.Pid); err != nil || got {
		t.Errorf("this process below its child: %v %v", got, err)
	}
	if _, err := DescendsFrom(0, self); err == nil {
		t.Error("pid 0 was accepted")
	}
}
