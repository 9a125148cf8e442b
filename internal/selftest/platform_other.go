//go:build !windows

package selftest

import (
	"context"

	"github.com/hearth-dev/hearth/internal/tray"
)

// platformState: the checks off Windows keep nothing between them.
type platformState struct{}

func elevatedSelf() bool { return false }

// underWine: this is not Windows, so not Wine.
func underWine() bool { return false }

func (r *run) checkTrayIcon(context.Context) (string, error) {
	return "", notWindows("the notification-area icon")
}

func (r *run) checkTrayMenu(context.Context) (string, error) {
	return "", notWindows("the tray menu")
}

// openNotifications: Windows notifications are a Windows part.
func openNotifications() (func(tray.Notice) error, func() error, error) {
	return nil, nil, notWindows("the tray notification")
}

func (r *run) checkTaskRegister(context.Context) (string, error) {
	return "", notWindows("the logon task (Task Scheduler)")
}

func (r *run) checkTaskSettings(context.Context) (string, error) {
	return "", notWindows("the logon task (Task Scheduler)")
}

func (r *run) checkTaskRun(context.Context) (string, error) {
	return "", notWindows("the logon task (Task Scheduler)")
}

func (r *run) checkTaskRemove(context.Context) (string, error) {
	return "", notWindows("the logon task (Task Scheduler)")
}

func (r *run) checkShortcut(context.Context) (string, error) {
	return "", notWindows("the Start-menu shortcut")
}
