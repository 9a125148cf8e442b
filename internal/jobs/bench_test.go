//go:build !windows

package jobs_test

import (
	"context"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/mcpserver"
)

const benchJobs = 1000

// BenchmarkSubmit1000True submits 1000 independent `true` jobs in one
// jobs[] through the real MCP handler and waits until all completed. The
// baseline spawns `true` 1000 times directly with the same concurrency.
func BenchmarkSubmit1000True(b *testing.B) {
	benchQueue(b, false)
}

// BenchmarkChain1000True is the same with each job depending on the
// previous one, so the jobs run strictly one after another; the baseline
// spawns them sequentially.
func BenchmarkChain1000True(b *testing.B) {
	benchQueue(b, true)
}

func benchQueue(b *testing.B, chain bool) {
	needShell(b)
	truePath, err := exec.LookPath("true")
	if err != nil {
		b.Skip("no true on PATH")
	}
	var capN int
	in := hearthtest.Start(b, func(c *config.Config) {
		c.Policy.Mode = config.ModeTrusted
		capN = c.MaxConcurrentJobs
	})
	const conv = "bench"
	route := mcpserver.Route(map[string]any{"hearth/conversation": conv})
	c := hearthtest.Connect(b, in.URL, conv)
	specs := make([]any, benchJobs)
	for i := range specs {
		j := map[string]any{"command": truePath}
		if chain && i > 0 {
			j["dependencies"] = []any{i - 1}
		}
		specs[i] = j
	}
	par := capN
	if chain {
		par = 1
	}
	direct := spawnDirect(b, truePath, benchJobs, par)

	b.ResetTimer()
	for range b.N {
		r := c.Call("task", map[string]any{"operation": "submit", "jobs": specs})
		ids, _ := r.Get("result.ids").([]any)
		if len(ids) != benchJobs {
			b.Fatalf("submit: %s", r.Text)
		}
		for _, id := range ids {
			j, timedOut, err := in.App.Jobs.Wait(context.Background(), in.App.Dispatcher, route, id.(string), 5*time.Minute)
			for err == nil && !timedOut && !dispatch.Settled(j.State) { // Wait returns on queued → running too
				j, timedOut, err = in.App.Jobs.Wait(context.Background(), in.App.Dispatcher, route, id.(string), 5*time.Minute)
			}
			if err != nil || timedOut || j.State != "completed" {
				b.Fatalf("job %v: %+v %v %v", id, j, timedOut, err)
			}
		}
	}
	b.StopTimer()
	total := b.N * benchJobs
	perJob := b.Elapsed() / time.Duration(total)
	b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "jobs/s")
	b.ReportMetric(float64(perJob.Microseconds())/1000, "ms/job")
	b.ReportMetric(float64(direct.Microseconds())/1000, "direct-ms/job")
	b.ReportMetric(float64((perJob-direct).Microseconds())/1000, "overhead-ms/job")
	b.ReportMetric(float64(capN), "max_concurrent_jobs")
}

// spawnDirect runs prog n times with par at once and returns the wall time
// per spawn.
func spawnDirect(b *testing.B, prog string, n, par int) time.Duration {
	b.Helper()
	start := time.Now()
	work := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for range par {
		wg.Go(func() {
			for range work {
				if err := exec.Command(prog).Run(); err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
				}
			}
		})
	}
	for range n {
		work <- struct{}{}
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		b.Fatal(firstErr)
	}
	return time.Since(start) / time.Duration(n)
}
