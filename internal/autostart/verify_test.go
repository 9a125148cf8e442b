package autostart

import (
	"strings"
	"testing"
)

// TestCheckDefinitionAcceptsWhatWasWritten: the definition TaskXML writes
// passes, and so does the same definition with the settings Task
// Scheduler leaves out at their defaults removed (as Windows exports it).
func TestCheckDefinitionAcceptsWhatWasWritten(t *testing.T) {
	task := Task{Exe: `C:\Users\Ada Lovelace\AppData\Local\Programs\Hearth\hearth-tray.exe`, Dir: `C:\x`, UserSID: "S-1-5-21-1-2-3-1001", Name: "Hearth-Selftest-1", Args: `ensure --home "C:\T\data"`}
	def, err := TaskXML(task)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckDefinition(task, def); err != nil {
		t.Fatalf("the definition as written: %v", err)
	}
	trimmed := def
	for _, el := range []string{"<MultipleInstancesPolicy>IgnoreNew</MultipleInstancesPolicy>", "<AllowStartOnDemand>true</AllowStartOnDemand>", "<Priority>7</Priority>", "<RunLevel>LeastPrivilege</RunLevel>"} {
		if !strings.Contains(trimmed, el) {
			t.Fatalf("TaskXML no longer writes %s", el)
		}
		trimmed = strings.Replace(trimmed, el, "", 1)
	}
	if err := CheckDefinition(task, "\ufeff"+trimmed); err != nil {
		t.Fatalf("defaults left out: %v", err)
	}
}

// TestCheckDefinitionFindsEveryChange: each way Task Scheduler could fail
// to keep the definition is named.
func TestCheckDefinitionFindsEveryChange(t *testing.T) {
	task := Task{Exe: `C:\P\hearth-tray.exe`, UserSID: "S-1-5-21-1", Name: "Hearth-Selftest-2"}
	def, err := TaskXML(task)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ from, to, want string }{
		{"<Interval>PT1M</Interval>", "", "repetition interval"},
		{"<ExecutionTimeLimit>PT5M</ExecutionTimeLimit>", "", "ExecutionTimeLimit"},
		{"<DisallowStartIfOnBatteries>false</DisallowStartIfOnBatteries>", "", "DisallowStartIfOnBatteries"},
		{"<LogonType>InteractiveToken</LogonType>", "<LogonType>Password</LogonType>", "LogonType"},
		{"<Arguments>ensure</Arguments>", "<Arguments>serve</Arguments>", "arguments"},
		// The trigger's UserId comes first, before the principal's.
		{"<UserId>S-1-5-21-1</UserId>", "", "names no user"},
		{`<Command>&#34;C:\P\hearth-tray.exe&#34;</Command>`, `<Command>C:\Other.exe</Command>`, "the action runs"},
		{"<Priority>7</Priority>", "<Priority>4</Priority>", "Priority"},
	} {
		changed := strings.Replace(def, c.from, c.to, 1)
		if changed == def {
			t.Fatalf("the definition has no %q to change", c.from)
		}
		err := CheckDefinition(task, changed)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("changing %q: %v, want a difference naming %q", c.from, err, c.want)
		}
	}
	if err := CheckDefinition(task, "<Task><Triggers/></Task>"); err == nil || !strings.Contains(err.Error(), "logon trigger is missing") {
		t.Errorf("no trigger: %v", err)
	}
	if err := CheckDefinition(task, "not xml <"); err == nil {
		t.Error("text that is not XML must be an error")
	}
}

// TestTaskNameAndArgs: a named copy of the logon task carries its own name
// in its URI and its own arguments; the defaults stay the logon task's.
func TestTaskNameAndArgs(t *testing.T) {
	def, err := TaskXML(Task{Exe: `C:\P\hearth-tray.exe`, UserSID: "S-1-5-21-1", Name: "Hearth-Selftest-1", Args: `ensure --home "C:\T\d"`})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(def, `<URI>\Hearth-Selftest-1</URI>`) || !strings.Contains(def, `<Arguments>ensure --home &#34;C:\T\d&#34;</Arguments>`) {
		t.Fatalf("named task:\n%s", def)
	}
	def, err = TaskXML(Task{Exe: `C:\P\hearth-tray.exe`, UserSID: "S-1-5-21-1"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(def, `<URI>\`+TaskName+`</URI>`) || !strings.Contains(def, `<Arguments>ensure</Arguments>`) {
		t.Fatalf("the logon task:\n%s", def)
	}
}
