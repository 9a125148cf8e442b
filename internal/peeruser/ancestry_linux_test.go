package peeruser

import (
	"os"
	"testing"
)

// TestDescendsFromLinux: init does not descend from this process, and a
// pid no process has is an error, not a "no".
func TestDescendsFromLinux(t *testing.T) {
	if got, err := DescendsFrom(1, os.Getpid()); err != nil || got {
		t.Errorf("pid 1: %v %v", got, err)
	}
	if _, err := DescendsFrom(1<<30, os.Getpid()); err == nil {
		t.Error("a pid no process has was answered without an error")
	}
}
