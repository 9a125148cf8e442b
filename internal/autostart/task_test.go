package autostart

import (
	"bytes"
	"encoding/xml"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"
)

var update = flag.Bool("update", false, "rewrite testdata/hearth-ensure.xml")

var goldenTask = Task{
	Exe:     `C:\Users\Ada Lovelace\AppData\Local\Programs\Hearth\hearth-tray.exe`,
	Dir:     `C:\Users\Ada Lovelace\AppData\Local\Programs\Hearth`,
	UserSID: "S-1-5-21-1004336348-1177238915-682003330-1001",
}

// decodeUTF16File undoes EncodeUTF16, checking the byte order mark.
func decodeUTF16File(t *testing.T, b []byte) string {
	t.Helper()
	if !bytes.HasPrefix(b, []byte{0xFF, 0xFE}) || len(b)%2 != 0 {
		t.Fatalf("not UTF-16LE with a BOM: % x", b[:min(len(b), 8)])
	}
	u := make([]uint16, (len(b)-2)/2)
	for i := range u {
		u[i] = uint16(b[2+2*i]) | uint16(b[3+2*i])<<8
	}
	return string(utf16.Decode(u))
}

func TestTaskXMLGolden(t *testing.T) {
	s, err := TaskXML(goldenTask)
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "hearth-ensure.xml")
	if *update {
		if err := os.WriteFile(golden, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if s != string(want) {
		t.Errorf("task XML differs from %s (go test -update rewrites it):\n%s", golden, s)
	}
	if got := decodeUTF16File(t, EncodeUTF16(s)); got != s {
		t.Errorf("UTF-16 round trip changed the text")
	}
}

// leaves parses a task definition (as schtasks gets it: UTF-16LE with a
// BOM) into "Task/Settings/Enabled" → value, attributes as "path@name",
// independently of the types TaskXML marshals from.
func leaves(t *testing.T, file []byte) map[string]string {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(decodeUTF16File(t, file)))
	// The text is already decoded; the declaration's UTF-16 label only
	// describes the file.
	dec.CharsetReader = func(label string, r io.Reader) (io.Reader, error) {
		if !strings.EqualFold(label, "UTF-16") {
			t.Errorf("declared encoding %q, want UTF-16", label)
		}
		return r, nil
	}
	out := map[string]string{}
	var path []string
	var text strings.Builder
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("parse task XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if tok.Name.Space != taskNS {
				t.Errorf("element %s in namespace %q", tok.Name.Local, tok.Name.Space)
			}
			path = append(path, tok.Name.Local)
			for _, a := range tok.Attr {
				if a.Name.Local != "xmlns" {
					out[strings.Join(path, "/")+"@"+a.Name.Local] = a.Value
				}
			}
			text.Reset()
		case xml.CharData:
			text.Write(tok)
		case xml.EndElement:
			key := strings.Join(path, "/")
			if _, dup := out[key]; dup {
				t.Errorf("element %s appears twice", key)
			}
			if v := strings.TrimSpace(text.String()); v != "" {
				out[key] = v
			}
			text.Reset()
			path = path[:len(path)-1]
		}
	}
	return out
}

// TestTaskXMLSettings parses the definition back and checks every setting
// the recovery design depends on, and that nothing else slipped in.
func TestTaskXMLSettings(t *testing.T) {
	s, err := TaskXML(goldenTask)
	if err != nil {
		t.Fatal(err)
	}
	got := leaves(t, EncodeUTF16(s))
	want := map[string]string{
		"Task@version":                                            "1.2",
		"Task/RegistrationInfo/Author":                            "Hearth",
		"Task/RegistrationInfo/Description":                       "Starts Hearth at logon and within a minute whenever it is not running (hearth-tray ensure).",
		"Task/RegistrationInfo/URI":                               `\Hearth-Ensure`,
		"Task/Triggers/LogonTrigger/Repetition/Interval":          "PT1M",
		"Task/Triggers/LogonTrigger/Repetition/StopAtDurationEnd": "false",
		"Task/Triggers/LogonTrigger/Enabled":                      "true",
		"Task/Triggers/LogonTrigger/UserId":                       goldenTask.UserSID,
		"Task/Principals/Principal@id":                            "Author",
		"Task/Principals/Principal/UserId":                        goldenTask.UserSID,
		"Task/Principals/Principal/LogonType":                     "InteractiveToken",
		"Task/Principals/Principal/RunLevel":                      "LeastPrivilege",
		"Task/Settings/MultipleInstancesPolicy":                   "IgnoreNew",
		"Task/Settings/DisallowStartIfOnBatteries":                "false",
		"Task/Settings/StopIfGoingOnBatteries":                    "false",
		"Task/Settings/AllowHardTerminate":                        "true",
		"Task/Settings/StartWhenAvailable":                        "true",
		"Task/Settings/RunOnlyIfNetworkAvailable":                 "false",
		"Task/Settings/IdleSettings/StopOnIdleEnd":                "false",
		"Task/Settings/IdleSettings/RestartOnIdle":                "false",
		"Task/Settings/AllowStartOnDemand":                        "true",
		"Task/Settings/Enabled":                                   "true",
		"Task/Settings/Hidden":                                    "false",
		"Task/Settings/RunOnlyIfIdle":                             "false",
		"Task/Settings/WakeToRun":                                 "false",
		"Task/Settings/ExecutionTimeLimit":                        "PT5M",
		"Task/Settings/Priority":                                  "7",
		"Task/Actions@Context":                                    "Author",
		"Task/Actions/Exec/Command":                               `"` + goldenTask.Exe + `"`,
		"Task/Actions/Exec/Arguments":                             "ensure",
		"Task/Actions/Exec/WorkingDirectory":                      goldenTask.Dir,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected setting %s = %q", k, v)
		}
	}
	// No Duration: the repetition lasts indefinitely.
	if _, ok := got["Task/Triggers/LogonTrigger/Repetition/Duration"]; ok {
		t.Error("the repetition must have no Duration (indefinitely)")
	}
}

// TestTaskXMLEscapes checks that a path with XML metacharacters stays one
// well-formed value.
func TestTaskXMLEscapes(t *testing.T) {
	task := goldenTask
	task.Exe = `C:\Users\R&D <lab>\AppData\Local\Programs\Hearth\hearth-tray.exe`
	s, err := TaskXML(task)
	if err != nil {
		t.Fatal(err)
	}
	if got := leaves(t, EncodeUTF16(s))["Task/Actions/Exec/Command"]; got != `"`+task.Exe+`"` {
		t.Fatalf("Command = %q", got)
	}
	if _, err := TaskXML(Task{Exe: task.Exe}); err == nil {
		t.Fatal("a task without a user SID must be refused")
	}
}
