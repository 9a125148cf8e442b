// Package autostart is how Hearth gets started and kept running for one
// Windows user without an administrator (docs/DESIGN.md, "Tunnel, tray and recovery"):
//
//   - the logon task: a per-user Task Scheduler task, TaskName, that runs
//     `"<install dir>\hearth-tray.exe" ensure` at the user's logon and every
//     minute after, as that user with the interactive token (UI Automation
//     needs the user's desktop), never elevated;
//   - Ensure, what that task runs: start the tray detached unless an
//     instance already runs for the data directory;
//   - the per-user install layout: the program directory under
//     %LOCALAPPDATA%\Programs, an atomic copy of the executable into it, and
//     the Start-menu shortcut.
//
// The task is registered by writing its XML definition (TaskXML, portable
// and tested on every platform) to a temporary file and running
// `schtasks /Create /TN Hearth-Ensure /XML <file> /F`; Enabled and Disable
// use `schtasks /Query` and `/Delete`. Off Windows those return
// ErrUnsupported: there, run `hearth-tray serve` from a service manager.
package autostart

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"unicode/utf16"
)

// TaskName is the logon task's name in the Task Scheduler library root.
const TaskName = "Hearth-Ensure"

// ErrUnsupported is returned off Windows.
var ErrUnsupported = errors.New("autostart is for Windows (the Task Scheduler logon task); on Linux run `hearth-tray serve` from your service manager")

// taskNS is the Task Scheduler 1.2 schema's namespace.
const taskNS = "http://schemas.microsoft.com/windows/2004/02/mit/task"

// The task definition. Element order follows what Windows itself writes
// when it exports a task; Task Scheduler's parser is strict about some of
// it.
type taskDef struct {
	XMLName          xml.Name `xml:"Task"`
	Version          string   `xml:"version,attr"`
	Xmlns            string   `xml:"xmlns,attr"`
	RegistrationInfo struct {
		Author      string
		Description string
		URI         string
	}
	Triggers struct {
		LogonTrigger struct {
			Repetition struct {
				Interval          string
				StopAtDurationEnd bool
			}
			Enabled bool
			UserId  string
		}
	}
	Principals struct {
		Principal struct {
			ID        string `xml:"id,attr"`
			UserId    string
			LogonType string
			RunLevel  string
		}
	}
	Settings struct {
		MultipleInstancesPolicy    string
		DisallowStartIfOnBatteries bool
		StopIfGoingOnBatteries     bool
		AllowHardTerminate         bool
		StartWhenAvailable         bool
		RunOnlyIfNetworkAvailable  bool
		IdleSettings               struct {
			StopOnIdleEnd bool
			RestartOnIdle bool
		}
		AllowStartOnDemand bool
		Enabled            bool
		Hidden             bool
		RunOnlyIfIdle      bool
		WakeToRun          bool
		ExecutionTimeLimit string
		Priority           int
	}
	Actions struct {
		Context string `xml:"Context,attr"`
		Exec    struct {
			Command          string
			Arguments        string
			WorkingDirectory string
		}
	}
}

// Task is what varies in the logon task between users and installs.
type Task struct {
	// Exe is the absolute path of hearth-tray.exe the task runs.
	Exe string
	// Dir is the action's working directory (the install directory).
	Dir string
	// UserSID is the user whose logon triggers the task and who runs it.
	UserSID string
	// Name is the task's name; empty means TaskName. The selftest
	// registers a copy of the logon task under a name of its own.
	Name string
	// Args are the action's arguments; empty means "ensure".
	Args string
}

// name is the task's name, TaskName unless it has its own.
func (t Task) name() string {
	if t.Name != "" {
		return t.Name
	}
	return TaskName
}

// args are the action's arguments, "ensure" unless given.
func (t Task) args() string {
	if t.Args != "" {
		return t.Args
	}
	return "ensure"
}

// TaskXML is the logon task's definition, as UTF-8 text whose XML
// declaration says UTF-16: what schtasks gets, once encoded with
// EncodeUTF16. The action is `"<Exe>" ensure`; the trigger is the user's
// logon, repeated every minute for as long as the session lasts (no
// Duration: indefinitely); a start while the previous run still runs is
// ignored (IgnoreNew); it runs as the user with the interactive token, at
// least privilege, on battery too, and is stopped after five minutes (an
// ensure takes seconds; the tray it starts is not the task's process and
// is not stopped).
func TaskXML(t Task) (string, error) {
	if t.Exe == "" || t.UserSID == "" {
		return "", errors.New("logon task: executable path and user SID are required")
	}
	var d taskDef
	d.Version, d.Xmlns = "1.2", taskNS
	d.RegistrationInfo.Author = "Hearth"
	d.RegistrationInfo.Description = "Starts Hearth at logon and within a minute whenever it is not running (hearth-tray ensure)."
	d.RegistrationInfo.URI = `\` + t.name()
	lt := &d.Triggers.LogonTrigger
	lt.Repetition.Interval = "PT1M"
	lt.Repetition.StopAtDurationEnd = false
	lt.Enabled = true
	lt.UserId = t.UserSID
	p := &d.Principals.Principal
	p.ID, p.UserId, p.LogonType, p.RunLevel = "Author", t.UserSID, "InteractiveToken", "LeastPrivilege"
	s := &d.Settings
	s.MultipleInstancesPolicy = "IgnoreNew"
	s.DisallowStartIfOnBatteries, s.StopIfGoingOnBatteries = false, false
	s.AllowHardTerminate = true
	s.StartWhenAvailable = true
	s.AllowStartOnDemand = true
	s.Enabled = true
	s.ExecutionTimeLimit = "PT5M"
	s.Priority = 7
	d.Actions.Context = "Author"
	// Task Scheduler takes the program as written; quotes keep a path with
	// spaces (a user name such as "Ada Lovelace") one program.
	d.Actions.Exec.Command = `"` + t.Exe + `"`
	d.Actions.Exec.Arguments = t.args()
	d.Actions.Exec.WorkingDirectory = t.Dir
	body, err := xml.MarshalIndent(d, "", "  ")
	if err != nil {
		return "", fmt.Errorf("logon task definition: %w", err)
	}
	return `<?xml version="1.0" encoding="UTF-16"?>` + "\n" + string(body) + "\n", nil
}

// EncodeUTF16 encodes s as UTF-16LE with a byte order mark, the encoding
// schtasks /XML expects.
func EncodeUTF16(s string) []byte {
	u := utf16.Encode([]rune(s))
	var b bytes.Buffer
	b.Grow(2 + 2*len(u))
	b.Write([]byte{0xFF, 0xFE})
	for _, c := range u {
		b.WriteByte(byte(c))
		b.WriteByte(byte(c >> 8))
	}
	return b.Bytes()
}
