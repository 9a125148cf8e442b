package autostart

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/windows"

	"github.com/hearth-dev/hearth/internal/proc"
)

// schtasksTimeout bounds one schtasks run.
const schtasksTimeout = 30 * time.Second

// Enabled reports whether the logon task is registered for this user.
func Enabled() (bool, error) { return queryTask(TaskName) }

// Enable registers (or replaces) the logon task so that it runs exePath,
// which must be an absolute path, as `"<exePath>" ensure`.
func Enable(exePath string) error { return createTask(TaskName, exePath) }

// Disable removes the logon task; it is not an error when there is none.
// When the query fails (Wine's schtasks has no /Query) the deletion is
// tried all the same.
func Disable() error {
	on, qerr := queryTask(TaskName)
	if qerr == nil && !on {
		return nil
	}
	derr := deleteTask(TaskName)
	if derr != nil && qerr != nil {
		return errors.Join(qerr, derr)
	}
	return derr
}

func createTask(name, exePath string) error {
	return registerTask(Task{Exe: exePath, Name: name})
}

// registerTask registers t as the current user's task t.Name (replacing
// one of that name), in t.Exe's directory unless t.Dir says otherwise.
func registerTask(t Task) error {
	name, exePath := t.name(), t.Exe
	if !filepath.IsAbs(exePath) {
		return fmt.Errorf("logon task: %q is not an absolute path", exePath)
	}
	sid, err := userSID()
	if err != nil {
		return err
	}
	if t.Dir == "" {
		t.Dir = filepath.Dir(exePath)
	}
	t.UserSID = sid
	def, err := TaskXML(t)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp("", "hearth-task-*.xml")
	if err != nil {
		return fmt.Errorf("logon task: %w", err)
	}
	defer os.Remove(f.Name())
	_, err = f.Write(EncodeUTF16(def))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("logon task: write definition: %w", err)
	}
	if _, err := schtasks("/Create", "/TN", name, "/XML", f.Name(), "/F"); err != nil {
		return fmt.Errorf("register the logon task %s: %w", name, err)
	}
	return nil
}

// queryTask asks schtasks for the task's definition. schtasks exits 1 for
// every failure and words the reason in the user's language, so exit 1 is
// taken as "not registered"; exit 0 must come with a task definition.
func queryTask(name string) (bool, error) {
	res, err := schtasksRun("/Query", "/TN", name, "/XML")
	if err != nil {
		return false, fmt.Errorf("query the logon task %s: %w", name, err)
	}
	if res.ExitCode == 1 {
		return false, nil
	}
	if res.ExitCode != 0 {
		return false, fmt.Errorf("query the logon task %s: %w", name, schtasksError(res))
	}
	out, _ := proc.Decode(res.Stdout)
	if !strings.Contains(out, "<Task") {
		return false, fmt.Errorf("query the logon task %s: schtasks /Query printed no task definition", name)
	}
	return true, nil
}

func deleteTask(name string) error {
	if _, err := schtasks("/Delete", "/TN", name, "/F"); err != nil {
		return fmt.Errorf("remove the logon task %s: %w", name, err)
	}
	return nil
}

// schtasks runs schtasks.exe from the system directory (never a PATH
// lookup) with no window, and fails unless it exits 0.
func schtasks(args ...string) (proc.Result, error) {
	res, err := schtasksRun(args...)
	if err == nil && res.ExitCode != 0 {
		err = schtasksError(res)
	}
	return res, err
}

func schtasksRun(args ...string) (proc.Result, error) {
	sys, err := windows.GetSystemDirectory()
	if err != nil {
		return proc.Result{}, fmt.Errorf("find the system directory: %w", err)
	}
	return proc.Run(context.Background(), proc.Spec{
		Command: filepath.Join(sys, "schtasks.exe"), Args: args,
		Timeout: schtasksTimeout, MaxCapture: 64 << 10,
	})
}

// schtasksError is a failed run's exit code and what it printed.
func schtasksError(res proc.Result) error {
	if res.TimedOut {
		return errors.New("schtasks did not finish in time")
	}
	msg, _ := proc.Decode(append(res.Stderr, res.Stdout...))
	msg = strings.Join(strings.Fields(msg), " ")
	if msg == "" {
		return fmt.Errorf("schtasks exited %d", res.ExitCode)
	}
	return fmt.Errorf("schtasks exited %d: %s", res.ExitCode, msg)
}

// userSID is the current user's SID, which names the user in the task.
func userSID() (string, error) {
	tu, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return "", fmt.Errorf("read the user's SID: %w", err)
	}
	return tu.User.Sid.String(), nil
}
