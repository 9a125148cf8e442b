//go:build linux

package wake

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/dispatch/dispatchtest"
)

// BenchmarkWakeLatency measures the time from a conversation's last
// terminal arrival to the wake prompt sent in its tab, with the default
// debounce (and, as the baseline in the same run, with none). Quiet is 0
// so that only the debounce and Hearth's own work count.
//
//	go test -run '^$' -bench WakeLatency -benchtime 5x ./internal/wake/
func BenchmarkWakeLatency(b *testing.B) {
	for _, tc := range []struct {
		name     string
		debounce time.Duration
	}{{"debounce=0", 0}, {"debounce=default", DefaultSettings().Debounce}} {
		b.Run(tc.name, func(b *testing.B) {
			fake := NewFakeChatGPT(b)
			set := DefaultSettings()
			set.BrowserPath, set.Quiet, set.Cooldown, set.MaxAttempts, set.Debounce = TestBrowser, 0, 0, 100, tc.debounce
			r := newRig(b, b.TempDir(), true, set, fake)
			r.open()
			r.bindConv(fake, "lat", "r:lat")
			var total time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				sent := len(fake.Sent("lat"))
				at := time.Now()
				r.arrive("r:lat", "fut_lat", "completed")
				waitFor(b, "the wake", func() bool { return len(fake.Sent("lat")) > sent })
				total += fake.SentAt("lat")[sent].Sub(at)
				// The woken conversation calls and is offered the arrival,
				// as Deliver records it; then the waker settles.
				b.StopTimer()
				dispatchtest.OfferAll(b, r.db, "r:lat")
				r.svc.Called("r:lat")
				r.passes(2)
				b.StartTimer()
			}
			b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/wake")
		})
	}
}

// BenchmarkBinderIdle measures the CPU Hearth's process spends on the
// binder and the waker while nothing is due: one bound tab (a page that
// does not poll), no arrivals, no live probe; disarmed is the baseline.
// It reports CPU milliseconds per second of wall time and page reads.
//
//	go test -run '^$' -bench BinderIdle -benchtime 3x ./internal/wake/
func BenchmarkBinderIdle(b *testing.B) {
	for _, armed := range []bool{false, true} {
		name := "disarmed"
		if armed {
			name = "armed"
		}
		b.Run(name, func(b *testing.B) {
			fake := NewFakeChatGPT(b)
			set := fastSettings()
			r := newRig(b, b.TempDir(), armed, set, fake)
			r.open()
			target := r.bindConv(fake, "idle", "r:idle")
			ctx := context.Background()
			if err := PageForTest(ctx, r.svc, target, "Page.navigate", map[string]any{"url": fake.URL("idle") + "?static=1"}); err != nil {
				b.Fatal(err)
			}
			waitFor(b, "the static page bound", func() bool { bd, _ := r.binding("r:idle"); return bd.Live })
			const window = 5 * time.Second
			var cpu time.Duration
			reads := 0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				before, st := cpuTime(b), r.svc.Stats()
				time.Sleep(window)
				cpu += cpuTime(b) - before
				reads += r.svc.Stats().PageReads[target] - st.PageReads[target]
			}
			b.ReportMetric(float64(cpu.Microseconds())/1000/(window.Seconds()*float64(b.N)), "cpu-ms/s")
			b.ReportMetric(float64(reads)/(window.Seconds()*float64(b.N)), "page-reads/s")
		})
	}
}

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
