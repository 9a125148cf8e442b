package selftest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/windows"

	"github.com/hearth-dev/hearth/internal/autostart"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/instance"
	"github.com/hearth-dev/hearth/internal/tray"
	"github.com/hearth-dev/hearth/internal/tunnel"
)

// platformState is what the Windows checks keep between them.
type platformState struct {
	// trayCheck is what the icon check saw, for the menu and notification
	// checks.
	trayCheck *tray.IconCheck
	// taskRegistered: the run's task exists and must be removed.
	taskRegistered bool
}

// elevatedSelf reports whether this process runs elevated.
func elevatedSelf() bool { return windows.GetCurrentProcessToken().IsElevated() }

// underWine reports whether this Windows is Wine (ntdll exports
// wine_get_version).
func underWine() bool {
	return windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
}

// trayStates are the icon's states, docs/DESIGN.md, "Tunnel, tray and recovery": ready, tunnel down, a
// permit waiting, e-stopped.
func trayStates() []tray.Snapshot {
	return []tray.Snapshot{
		{Tunnel: tunnel.Status{State: tunnel.StateReady}},
		{Tunnel: tunnel.Status{State: tunnel.StateStopped}},
		{Pending: 1, Tunnel: tunnel.Status{State: tunnel.StateReady}},
		{EStop: true, EStopReason: "selftest", Tunnel: tunnel.Status{State: tunnel.StateReady}},
	}
}

// checkTrayIcon shows the real icon in each state and requires the shell
// to take every icon and tooltip.
func (r *run) checkTrayIcon(ctx context.Context) (string, error) {
	res, err := tray.ShowStates(ctx, trayStates(), [2]string{"Hearth selftest", "A permit waits for you (selftest " + r.id + ")"})
	if errors.Is(err, tray.ErrNoIcon) {
		return "", skip("Windows offered no notification area here: %v", err)
	}
	if err != nil {
		return "", err
	}
	r.plat.trayCheck = &res
	var icons []string
	var placed []string
	for i, s := range res.States {
		if s.ShellErr != "" {
			return "", fmt.Errorf("state %d (%q): the shell refused the icon or tooltip: %s", i, firstLine(s.View.Tooltip), s.ShellErr)
		}
		if !slices.Contains(icons, s.View.Icon) {
			icons = append(icons, s.View.Icon)
		}
		if s.RectErr == nil {
			placed = append(placed, fmt.Sprintf("%d,%d", s.Rect[0], s.Rect[1]))
		}
	}
	if len(icons) != len(res.States) {
		return "", fmt.Errorf("%d states showed only %d different icons", len(res.States), len(icons))
	}
	tipsSeen := map[string]bool{}
	for _, s := range res.States {
		tipsSeen[s.View.Tooltip] = true
	}
	if len(tipsSeen) != len(res.States) {
		return "", fmt.Errorf("%d states showed only %d different tooltips", len(res.States), len(tipsSeen))
	}
	where := "the shell reports the icon at " + strings.Join(uniq(placed), " / ")
	if len(placed) == 0 {
		where = fmt.Sprintf("the shell does not say where the icon is (it may sit in the overflow area: %v)", res.States[0].RectErr)
	}
	var tips []string
	for _, s := range res.States {
		tips = append(tips, firstLine(s.View.Tooltip))
	}
	return fmt.Sprintf("the icon took %d states, each with its own icon and tooltip (%s); %s", len(res.States), strings.Join(tips, " | "), where), nil
}

func firstLine(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }

// checkTrayMenu compares the menu as systray holds it with each state's
// entries.
func (r *run) checkTrayMenu(context.Context) (string, error) {
	if r.plat.trayCheck == nil {
		return "", errors.New("the icon check recorded nothing")
	}
	for i, s := range r.plat.trayCheck.States {
		if len(s.Menu) != len(s.View.Entries) {
			return "", fmt.Errorf("state %d: the menu has %d entries, want %d", i, len(s.Menu), len(s.View.Entries))
		}
		for j, e := range s.View.Entries {
			m := s.Menu[j]
			if m.Title != e.Title || m.Disabled != e.Disabled || m.Checked != e.Checked {
				return "", fmt.Errorf("state %d, entry %d: the menu holds %+v, want %q disabled=%v checked=%v", i, j, m, e.Title, e.Disabled, e.Checked)
			}
		}
	}
	var titles []string
	for _, m := range r.plat.trayCheck.States[0].Menu {
		titles = append(titles, m.Title)
	}
	return fmt.Sprintf("in every state the menu held its %d entries as drawn: %s", len(titles), strings.Join(titles, " | ")), nil
}

// openNotifications opens the tray's permit and e-stop notifications
// (tray.Balloons: a hidden window and a notify icon of their own, as the
// running tray uses them). A shell without a notification area makes
// show answer a skip.
func openNotifications() (show func(tray.Notice) error, closeFn func() error, err error) {
	b, err := tray.NewBalloons(nil, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("open the tray's notifications: %w", err)
	}
	show = func(n tray.Notice) error {
		err := b.Show(n)
		if errors.Is(err, tray.ErrNoNotificationArea) {
			return skip("Windows offered no notification area to show the permit notification in: %v", err)
		}
		return err
	}
	return show, b.Close, nil
}

// task is the run's copy of the logon task: the same definition, its own
// name, and ensure pointed at a data directory of its own (not the one the
// in-process Hearth uses).
func (r *run) task() autostart.Task {
	return autostart.Task{Exe: r.exe, Name: TaskName(r.id), Args: fmt.Sprintf(`ensure --home "%s"`, r.taskData())}
}

func (r *run) taskData() string { return filepath.Join(r.base, "task-data") }

func (r *run) checkTaskRegister(context.Context) (string, error) {
	t := r.task()
	cfg := config.Default()
	cfg.MCPAddr, cfg.PanelAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.Roots = []string{filepath.Join(r.base, "task-files")}
	for _, d := range append(cfg.Roots, r.taskData()) {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return "", err
		}
	}
	if err := config.Write(filepath.Join(r.taskData(), "config.json"), cfg); err != nil {
		return "", err
	}
	if err := autostart.RegisterTask(t); err != nil {
		return "", err
	}
	r.plat.taskRegistered = true
	r.onFinish("the task "+t.Name, func() error {
		if !r.plat.taskRegistered {
			return nil
		}
		return autostart.DeleteTask(t.Name)
	})
	return fmt.Sprintf("Task Scheduler registered %s: the logon task's definition, running %s", t.Name, t.Args), nil
}

func (r *run) checkTaskSettings(context.Context) (string, error) {
	t := r.task()
	def, err := autostart.TaskDefinition(t.Name)
	if errors.Is(err, autostart.ErrNoDefinition) {
		return "", skip("Task Scheduler here does not report the tasks it registers (%v), so what it kept, and a run, cannot be checked", err)
	}
	if err != nil {
		return "", err
	}
	if err := autostart.CheckDefinition(t, def); err != nil {
		return "", err
	}
	return "Task Scheduler kept the logon trigger (every minute, this user), the interactive least-privilege principal, the settings and the action as written", nil
}

// taskRunWait bounds the wait for the Hearth the task's ensure starts.
const taskRunWait = 120 * time.Second

func (r *run) checkTaskRun(ctx context.Context) (string, error) {
	t := r.task()
	dir := r.taskData()
	r.onFinish("the Hearth the task started", func() error { return stopHearthAt(dir) })
	if err := autostart.RunTask(t.Name); err != nil {
		return "", err
	}
	deadline := time.Now().Add(taskRunWait)
	var info instance.Info
	for {
		if i, err := instance.ReadInfo(dir); err == nil && i.PID > 0 && running(dir) {
			info = i
			break
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("schtasks /Run %s was accepted, but no Hearth started on the task's data directory within %s", t.Name, taskRunWait)
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	if err := stopHearthAt(dir); err != nil {
		return "", err
	}
	return fmt.Sprintf("schtasks /Run started ensure, which started Hearth (pid %d) on the task's temporary data directory; asked to quit, it stopped", info.PID), nil
}

// running reports whether a Hearth holds dir's instance lock.
func running(dir string) bool {
	l, err := instance.Acquire(instance.LockHearth, dir)
	if err == nil {
		l.Release()
		return false
	}
	return errors.Is(err, instance.ErrAlreadyRunning)
}

// stopHearthAt asks the Hearth running on dir (if any) to quit through its
// tray's control endpoint and waits until it has.
func stopHearthAt(dir string) error {
	if !running(dir) {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := tray.AskWait(ctx, dir, tray.ReqQuit, 20*time.Second); err != nil {
		return fmt.Errorf("ask the Hearth on the task's data directory to quit: %w", err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for running(dir) {
		if time.Now().After(deadline) {
			return errors.New("the Hearth on the task's data directory was asked to quit but still runs")
		}
		time.Sleep(200 * time.Millisecond)
	}
	return nil
}

func (r *run) checkTaskRemove(context.Context) (string, error) {
	name := TaskName(r.id)
	if err := autostart.DeleteTask(name); err != nil {
		return "", err
	}
	r.plat.taskRegistered = false
	if err := autostart.DeleteTask(name); err == nil {
		return "", fmt.Errorf("a second delete of %s succeeded: the task was not removed", name)
	}
	if on, err := autostart.TaskExists(name); err == nil && on {
		return "", fmt.Errorf("Task Scheduler still lists %s after its deletion", name)
	}
	return fmt.Sprintf("removed %s; a second removal fails, as for a task that is gone", name), nil
}

func (r *run) checkShortcut(context.Context) (string, error) {
	lnk := filepath.Join(r.base, ShortcutName(r.id))
	if err := autostart.CreateShortcut(lnk, r.exe, filepath.Dir(r.exe), "Hearth selftest "+r.id); err != nil {
		return "", err
	}
	got, err := autostart.ShortcutTarget(lnk)
	if err != nil {
		return "", err
	}
	if !strings.EqualFold(filepath.Clean(got), filepath.Clean(r.exe)) {
		return "", fmt.Errorf("the shortcut resolves to %q, want %q", got, r.exe)
	}
	if err := os.Remove(lnk); err != nil {
		return "", fmt.Errorf("remove the shortcut: %w", err)
	}
	return "created the shortcut " + ShortcutName(r.id) + " through IShellLinkW; it resolves to this program; removed it", nil
}
