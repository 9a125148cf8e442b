package periodic_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/periodic"
)

// TestRunFirstThenEveryPeriodUntilTheEnd: with first, the work runs at
// once; then once a period; Run returns when its context ends and calls
// nothing after.
func TestRunFirstThenEveryPeriodUntilTheEnd(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var n atomic.Int32
	ran := make(chan struct{}, 100)
	done := make(chan struct{})
	go func() {
		defer close(done)
		periodic.Run(ctx, 10*time.Millisecond, true, func(context.Context) { n.Add(1); ran <- struct{}{} })
	}()
	for i := 0; i < 3; i++ {
		select {
		case <-ran:
		case <-time.After(10 * time.Second):
			t.Fatalf("run %d never came", i+1)
		}
	}
	cancel()
	<-done
	after := n.Load()
	time.Sleep(50 * time.Millisecond)
	if n.Load() != after {
		t.Fatalf("work ran after Run returned: %d then %d", after, n.Load())
	}
}

// TestRunWithoutFirstWaitsAPeriod: without first, nothing runs before the
// first period has passed.
func TestRunWithoutFirstWaitsAPeriod(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	var n atomic.Int32
	periodic.Run(ctx, time.Hour, false, func(context.Context) { n.Add(1) })
	if n.Load() != 0 {
		t.Fatalf("ran %d times before its first period", n.Load())
	}
}
