package autostart

import (
	"encoding/xml"
	"fmt"
	"regexp"
	"strings"
)

// exportedTask is a task definition as Task Scheduler exports it
// (schtasks /Query /XML). Pointers tell an element left out, which
// Task Scheduler does for a setting at its default, from one present.
type exportedTask struct {
	Triggers struct {
		LogonTrigger *struct {
			Repetition struct {
				Interval          *string
				StopAtDurationEnd *bool
			}
			Enabled *bool
			UserId  *string
		}
	}
	Principals struct {
		Principal struct {
			LogonType *string
			RunLevel  *string
		}
	}
	Settings struct {
		MultipleInstancesPolicy    *string
		DisallowStartIfOnBatteries *bool
		StopIfGoingOnBatteries     *bool
		StartWhenAvailable         *bool
		AllowStartOnDemand         *bool
		Enabled                    *bool
		ExecutionTimeLimit         *string
		Priority                   *int
	}
	Actions struct {
		Exec *struct {
			Command   *string
			Arguments *string
		}
	}
}

// xmlDecl matches an XML declaration: Task Scheduler's names UTF-16, but
// the text handed to CheckDefinition is already decoded.
var xmlDecl = regexp.MustCompile(`^\s*<\?xml[^>]*\?>`)

// CheckDefinition compares the definition Task Scheduler exported for a
// registered task with what TaskXML(t) wrote: the logon trigger and its
// one-minute repetition, the interactive least-privilege principal, the
// settings and the action. A setting Task Scheduler left out must be one
// whose default is the value written. It returns nil, or an error listing
// every difference.
func CheckDefinition(t Task, exported string) error {
	var got exportedTask
	body := xmlDecl.ReplaceAllString(strings.TrimPrefix(exported, "\ufeff"), "")
	if err := xml.Unmarshal([]byte(body), &got); err != nil {
		return fmt.Errorf("read the exported task definition: %w", err)
	}
	var diffs []string
	str := func(what string, p *string, want, def string) {
		v := def
		if p != nil {
			v = strings.TrimSpace(*p)
		}
		if v != want {
			diffs = append(diffs, fmt.Sprintf("%s is %q, want %q", what, v, want))
		}
	}
	boolean := func(what string, p *bool, want, def bool) {
		v := def
		if p != nil {
			v = *p
		}
		if v != want {
			diffs = append(diffs, fmt.Sprintf("%s is %v, want %v", what, v, want))
		}
	}
	lt := got.Triggers.LogonTrigger
	if lt == nil {
		diffs = append(diffs, "the logon trigger is missing")
	} else {
		str("the trigger's repetition interval", lt.Repetition.Interval, "PT1M", "")
		boolean("StopAtDurationEnd", lt.Repetition.StopAtDurationEnd, false, false)
		boolean("the trigger's Enabled", lt.Enabled, true, true)
		if lt.UserId == nil || strings.TrimSpace(*lt.UserId) == "" {
			diffs = append(diffs, "the logon trigger names no user (it would fire at every user's logon)")
		}
	}
	p := got.Principals.Principal
	str("LogonType", p.LogonType, "InteractiveToken", "")
	str("RunLevel", p.RunLevel, "LeastPrivilege", "LeastPrivilege")
	s := got.Settings
	str("MultipleInstancesPolicy", s.MultipleInstancesPolicy, "IgnoreNew", "IgnoreNew")
	boolean("DisallowStartIfOnBatteries", s.DisallowStartIfOnBatteries, false, true)
	boolean("StopIfGoingOnBatteries", s.StopIfGoingOnBatteries, false, true)
	boolean("StartWhenAvailable", s.StartWhenAvailable, true, false)
	boolean("AllowStartOnDemand", s.AllowStartOnDemand, true, true)
	boolean("the task's Enabled", s.Enabled, true, true)
	str("ExecutionTimeLimit", s.ExecutionTimeLimit, "PT5M", "PT72H")
	prio := 7
	if s.Priority != nil {
		prio = *s.Priority
	}
	if prio != 7 {
		diffs = append(diffs, fmt.Sprintf("Priority is %d, want 7", prio))
	}
	if ex := got.Actions.Exec; ex == nil || ex.Command == nil {
		diffs = append(diffs, "the action has no command")
	} else {
		cmd := strings.Trim(strings.TrimSpace(*ex.Command), `"`)
		if !strings.EqualFold(cmd, t.Exe) {
			diffs = append(diffs, fmt.Sprintf("the action runs %q, want %q", cmd, t.Exe))
		}
		str("the action's arguments", ex.Arguments, t.args(), "")
	}
	if len(diffs) > 0 {
		return fmt.Errorf("Task Scheduler did not keep the definition as written: %s", strings.Join(diffs, "; "))
	}
	return nil
}
