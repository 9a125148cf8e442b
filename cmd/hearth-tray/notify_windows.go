package main

import (
	"context"
	"log/slog"

	"github.com/hearth-dev/hearth/internal/tray"
)

// startNotifications shows a Windows notification when a permit starts
// waiting and when the e-stop latches (tray.Notifications, shown by
// tray.Balloons); a click opens that page of the control panel signed in,
// as the tray menu does. The returned function stops them and removes
// their window. Without a notification area Hearth runs on without them.
func startNotifications(ctx context.Context, t *tray.Tray, log *slog.Logger) (stop func()) {
	balloons, err := tray.NewBalloons(func(page string) {
		if err := t.OpenPanelAt(page); err != nil {
			log.Error("notification click: open the control panel", "page", page, "err", err)
		}
	}, log)
	if err != nil {
		log.Warn("no notifications; Hearth runs without them", "err", err)
		return func() {}
	}
	n := tray.NotificationsFor(t.Hearth, balloons.Show)
	n.Log = log
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		n.Run(ctx)
	}()
	return func() {
		cancel()
		<-done
		if err := balloons.Close(); err != nil {
			log.Warn("close the notifications", "err", err)
		}
	}
}
