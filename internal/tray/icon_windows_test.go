package tray

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/tunnel"
)

// TestRunIcon creates the real notification-area icon, lets its menu
// start the tunnel and quit, and checks that RunIcon returns once stopped.
// Where Windows offers no notification area (Wine without a display, as
// scripts/test-windows runs it) it checks that RunIcon says so with
// ErrNoIcon and skips the rest.
func TestRunIcon(t *testing.T) {
	// The icon's window belongs to this thread, whose message loop
	// RunIcon runs.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	var mu sync.Mutex
	state := tunnel.StateStopped
	stop := make(chan struct{})
	var stopOnce sync.Once
	tr := &Tray{
		Hearth: Hearth{
			Status:  func(context.Context) (govern.Status, error) { return govern.Status{}, nil },
			Permits: func(context.Context) ([]govern.Permit, error) { return make([]govern.Permit, 2), nil },
			Tunnel:  func() tunnel.Status { mu.Lock(); defer mu.Unlock(); return tunnel.Status{State: state} },
			StartTunnel: func() error {
				mu.Lock()
				defer mu.Unlock()
				state = tunnel.StateReady
				return nil
			},
		},
		Quit:  func() { stopOnce.Do(func() { close(stop) }) },
		Every: 50 * time.Millisecond,
	}
	var ended atomic.Int32
	clicked := make(chan error, 1)
	go func() { clicked <- driveMenu(tr) }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	err := RunIcon(ctx, tr, stop, func() { ended.Add(1) })
	if errors.Is(err, ErrNoIcon) {
		if time.Since(start) > 2*iconReadyWait {
			t.Fatalf("ErrNoIcon took %s", time.Since(start))
		}
		t.Skip("no notification area here (Wine without a display): RunIcon returned ErrNoIcon")
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := <-clicked; err != nil {
		t.Fatal(err)
	}
	if ended.Load() == 0 {
		t.Fatal("removing the icon must run onEnd")
	}
	mu.Lock()
	defer mu.Unlock()
	if state != tunnel.StateReady {
		t.Fatalf("the menu's tunnel entry did not start the tunnel: %s", state)
	}
}

// driveMenu waits for the icon to show its first View, then clicks
// "Start tunnel" and "Quit Hearth" through the menu items' channels, as
// systray does for a real click.
func driveMenu(tr *Tray) error {
	deadline := time.Now().Add(10 * time.Second)
	for tr.View().Entries[ItemPermits].Title != "Pending permits (2)" {
		if time.Now().After(deadline) {
			tr.Quit()
			return errors.New("the icon never showed its menu")
		}
		time.Sleep(20 * time.Millisecond)
	}
	ic := tr.UI.(*icon)
	ic.items[ItemTunnel].ClickedCh <- struct{}{}
	for tr.View().Entries[ItemTunnel].Action != ActStopTunnel {
		if time.Now().After(deadline) {
			tr.Quit()
			return errors.New("the tunnel entry never changed to stop")
		}
		time.Sleep(20 * time.Millisecond)
	}
	ic.items[ItemQuit].ClickedCh <- struct{}{}
	return nil
}
