//go:build !windows

package mcpserver_test

import (
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// TestPendingFutureSurvivesRestart kills a real serve process (SIGKILL, no
// clean shutdown) after one detached call completed and while another was
// still running; after a restart on the same data directory the completed
// result still arrives, and the interrupted one arrives as blocked with
// outcome unknown instead of being replayed.
func TestPendingFutureSurvivesRestart(t *testing.T) {
	home := t.TempDir()
	hearthtest.WriteConfig(t, home, hearthtest.Trusted)
	p := hearthtest.StartProcess(t, home)
	c := hearthtest.Connect(t, p.URL, "durable")
	done := c.Call("machine", map[string]any{"operation": "exec", "command": "sh", "args": []string{"-c", "sleep 0.2; echo survived"}, "detach": true})
	marker := home + "/replayed"
	long := c.Call("machine", map[string]any{"operation": "exec", "command": "sh", "args": []string{"-c", "sleep 60; echo x >> " + marker}, "detach": true})
	doneID, _ := done.Get("future_id").(string)
	longID, _ := long.Get("future_id").(string)
	if doneID == "" || longID == "" {
		t.Fatalf("detached calls: %s / %s", done.Raw, long.Raw)
	}
	// Let the short one finish (its arrival is now durable, undelivered).
	time.Sleep(1500 * time.Millisecond)
	p.Kill()

	p2 := hearthtest.StartProcess(t, home)
	c2 := hearthtest.Connect(t, p2.URL, "durable")
	got := map[string]map[string]any{}
	deadline := time.Now().Add(20 * time.Second)
	for len(got) < 2 && time.Now().Before(deadline) {
		r := c2.Call("machine", map[string]any{"operation": "host_info"})
		for _, a := range r.Arrivals() {
			got[a["future_id"].(string)] = a
		}
		time.Sleep(50 * time.Millisecond)
	}
	if hearthtest.Get(got[doneID], "envelope.result.stdout.text") != "survived\n" {
		t.Fatalf("completed result lost across restart: %v", got[doneID])
	}
	if hearthtest.Get(got[longID], "envelope.state") != "blocked" || hearthtest.Get(got[longID], "envelope.error.code") != "unknown" {
		t.Fatalf("interrupted call must arrive blocked/unknown: %v", got[longID])
	}
	if err := p2.Interrupt(t); err != nil {
		t.Fatalf("serve did not exit cleanly on interrupt: %v\n%s", err, p2.Stderr.String())
	}
}
