package autostart

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hearth-dev/hearth/internal/proc"
)

// These register, read, run and remove a copy of the logon task under a
// name of its own (Task.Name), for the selftest; the logon task itself is
// Enable's and Disable's.

// ErrNoDefinition is returned by TaskDefinition when Task Scheduler
// answered without a definition (Wine's schtasks /Query prints nothing).
var ErrNoDefinition = errors.New("schtasks /Query printed no task definition")

// RegisterTask registers t under t.Name for the current user, replacing a
// task of that name. t.UserSID is filled in.
func RegisterTask(t Task) error {
	if t.Name == "" || t.Name == TaskName {
		return fmt.Errorf("register a named task: give a name other than %s (Enable registers that one)", TaskName)
	}
	return registerTask(t)
}

// TaskDefinition returns the definition Task Scheduler holds for task
// name, as it exports it (schtasks /Query /XML).
func TaskDefinition(name string) (string, error) {
	res, err := schtasks("/Query", "/TN", name, "/XML")
	if err != nil {
		return "", fmt.Errorf("read task %s: %w", name, err)
	}
	out, _ := proc.Decode(res.Stdout)
	if !strings.Contains(out, "<Task") {
		return "", fmt.Errorf("read task %s: %w", name, ErrNoDefinition)
	}
	return out, nil
}

// RunTask asks Task Scheduler to run task name now (schtasks /Run).
func RunTask(name string) error {
	if _, err := schtasks("/Run", "/TN", name); err != nil {
		return fmt.Errorf("run task %s: %w", name, err)
	}
	return nil
}

// TaskExists reports whether task name is registered, as Enabled does
// for the logon task.
func TaskExists(name string) (bool, error) { return queryTask(name) }

// DeleteTask removes task name.
func DeleteTask(name string) error {
	if name == TaskName {
		return fmt.Errorf("delete a named task: %s is removed by Disable", TaskName)
	}
	return deleteTask(name)
}
