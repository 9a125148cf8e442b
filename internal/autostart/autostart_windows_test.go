package autostart

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/windows"
)

// underWine reports whether this Windows is Wine (ntdll exports
// wine_get_version).
func underWine() bool {
	return windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
}

// TestTaskSchedulerRoundTrip registers, queries and deletes a logon task
// under a test name (never the real Hearth-Ensure) through schtasks.
//
// Wine 8's schtasks accepts /Create /XML (it keeps the registration info
// and settings but drops triggers, principals and the action's command)
// and /Delete, and does not implement /Query: it prints nothing and exits
// 0. The query step is therefore skipped under Wine, and the deletion is
// checked by a second /Delete failing instead.
func TestTaskSchedulerRoundTrip(t *testing.T) {
	name := fmt.Sprintf("Hearth-Ensure-Test-%d", os.Getpid())
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := createTask(name, exe); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteTask(name) })
	if err := createTask(name, exe); err != nil {
		t.Fatalf("re-registering (/F) must replace the task: %v", err)
	}
	on, qerr := queryTask(name)
	wine := underWine()
	switch {
	case wine && qerr != nil && strings.Contains(qerr.Error(), "printed no task definition"):
		t.Logf("Wine: schtasks /Query is not implemented (%v); query not checked", qerr)
	case qerr != nil || !on:
		t.Fatalf("query after create: %v %v", on, qerr)
	}
	if err := deleteTask(name); err != nil {
		t.Fatal(err)
	}
	if err := deleteTask(name); err == nil {
		t.Fatal("a second delete must fail: the task is gone")
	}
	if !wine {
		if on, err := queryTask(name); err != nil || on {
			t.Fatalf("query after delete: %v %v", on, err)
		}
	}
	if err := createTask(name, "relative.exe"); err == nil {
		t.Fatal("a relative program path must be refused")
	}
}

// TestShortcutRoundTrip writes a Start-menu style shortcut through
// IShellLinkW/IPersistFile and reads its target back.
func TestShortcutRoundTrip(t *testing.T) {
	dir := t.TempDir()
	target, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	lnk := filepath.Join(dir, "Start Menu", "Programs", ShortcutName)
	for range 2 { // the second write replaces the first
		if err := CreateShortcut(lnk, target, filepath.Dir(target), "Hearth test"); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ShortcutTarget(lnk)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.EqualFold(filepath.Clean(got), filepath.Clean(target)) {
		t.Fatalf("shortcut target = %q, want %q", got, target)
	}
}

// TestNamedTaskRoundTrip registers a named copy of the logon task,
// reads its definition back where Task Scheduler reports it (Wine's
// schtasks /Query prints nothing: ErrNoDefinition), and removes it. The
// logon task's own name is refused by the named-task calls.
func TestNamedTaskRoundTrip(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	task := Task{Exe: exe, Name: fmt.Sprintf("Hearth-Selftest-Test-%d", os.Getpid()), Args: `ensure --home "C:\nowhere"`}
	if err := RegisterTask(task); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteTask(task.Name) })
	def, err := TaskDefinition(task.Name)
	switch {
	case errors.Is(err, ErrNoDefinition):
		t.Logf("this Task Scheduler does not report definitions: %v", err)
	case err != nil:
		t.Fatal(err)
	default:
		sid, _ := userSID()
		task.UserSID = sid
		if err := CheckDefinition(task, def); err != nil {
			t.Fatalf("%v\n%s", err, def)
		}
	}
	if err := DeleteTask(task.Name); err != nil {
		t.Fatal(err)
	}
	if err := DeleteTask(task.Name); err == nil {
		t.Fatal("a second delete must fail")
	}
	if err := RegisterTask(Task{Exe: exe, Name: TaskName}); err == nil {
		t.Fatal("RegisterTask must refuse the logon task's own name")
	}
	if err := DeleteTask(TaskName); err == nil {
		t.Fatal("DeleteTask must refuse the logon task's own name")
	}
}
