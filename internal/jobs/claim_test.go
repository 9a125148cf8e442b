//go:build !windows

package jobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/jobs"
	"github.com/hearth-dev/hearth/internal/mcpserver"
)

// TestClaimCommitsTheIntent: an admitted attempt's intent (its commands
// row and ledger entry) commits with the claim that marks it running, so
// no reader ever sees a running job without its journaled command. The
// test samples the database while 60 short jobs run four at a time; with
// the claim and the intent in separate commits it sees the gap between
// them.
func TestClaimCommitsTheIntent(t *testing.T) {
	needShell(t)
	in := hearthtest.Start(t, trusted)
	const conv = "claim-intent"
	route := mcpserver.Route(map[string]any{"hearth/conversation": conv})
	c := hearthtest.Connect(t, in.URL, conv)
	specs := make([]any, 60)
	for i := range specs {
		specs[i] = sh(`exit 0`)
	}
	r := c.Call("task", map[string]any{"operation": "submit", "jobs": specs})
	ids, _ := r.Get("result.ids").([]any)
	if len(ids) != len(specs) {
		t.Fatalf("submit: %s", r.Text)
	}
	ctx := context.Background()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, id := range ids {
			for {
				j, timedOut, err := in.App.Jobs.Wait(ctx, in.App.Dispatcher, route, id.(string), time.Minute)
				if err != nil || timedOut {
					t.Errorf("job %v: %v %v", id, timedOut, err)
					return
				}
				if jobs.Terminal(j.State) {
					break
				}
			}
		}
	}()
	samples := 0
	for {
		select {
		case <-done:
			if samples == 0 {
				t.Fatal("no sample taken")
			}
			return
		default:
		}
		var n int
		err := in.App.DB.R.QueryRowContext(ctx, `SELECT count(*) FROM futures f WHERE f.class = 'job' AND f.state = 'running'
			AND NOT EXISTS (SELECT 1 FROM commands c WHERE c.command_id = f.command_id)`).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			t.Fatalf("sample %d: %d running jobs without their journaled command", samples, n)
		}
		samples++
	}
}
