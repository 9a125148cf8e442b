package autostart

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
	"unsafe"

	"golang.org/x/sys/windows"
)

// echoEnv makes the test binary, started with it set to a file name,
// write there what it was started as (echoed) and exit: the program a
// logon task's command line starts.
const echoEnv = "HEARTH_AUTOSTART_TEST_ECHO"

type echoed struct {
	Exe, Dir, CommandLine string
	Args                  []string
}

func TestMain(m *testing.M) {
	if out := os.Getenv(echoEnv); out != "" {
		var e echoed
		e.Exe, _ = os.Executable()
		e.Dir, _ = os.Getwd()
		e.CommandLine = windows.UTF16PtrToString(windows.GetCommandLine())
		e.Args = os.Args[1:]
		b, _ := json.Marshal(e)
		if err := os.WriteFile(out, b, 0o600); err != nil {
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestAccountLogonTask: for a user whose profile path has
// letters outside ASCII and a space (under Wine in CI, "Zoë Ünal": see
// scripts/test-windows), the logon task's definition, as schtasks gets it
// (UTF-16 XML), keeps the install path exactly; its command line, split
// by Windows' own rules (CommandLineToArgvW), is that program and
// `ensure --home <data dir>`; started by CreateProcess from the command
// line alone (no program name given, as Task Scheduler does), it runs
// that very program in the install directory with those arguments; and
// Task Scheduler registers the definition.
func TestAccountLogonTask(t *testing.T) {
	local := os.Getenv("LOCALAPPDATA")
	if want := os.Getenv("HEARTH_WINE_PROFILE"); want != "" && !strings.Contains(local, `\`+want+`\`) {
		t.Fatalf("LOCALAPPDATA %s is not in the profile of %q", local, want)
	}
	prog, err := ProgramDir()
	if err != nil {
		t.Fatal(err)
	}
	if want := os.Getenv("HEARTH_WINE_PROFILE"); want != "" {
		lnk, err := ShortcutPath()
		if err != nil || !strings.Contains(lnk, `\`+want+`\`) || !strings.Contains(prog, `\`+want+`\`) {
			t.Fatalf("install dir %s and shortcut %s (%v) are not in the profile of %q", prog, lnk, err, want)
		}
	}
	if err := os.MkdirAll(filepath.Dir(prog), 0o755); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(filepath.Dir(prog), "Hearth test ")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "hearth-tray.exe")
	if err := CopyExe(self, exe); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(local, "Hearth")
	sid, err := userSID()
	if err != nil {
		t.Fatal(err)
	}
	task := Task{Exe: exe, Dir: dir, UserSID: sid, Name: fmt.Sprintf("Hearth-Profile-Test-%d", os.Getpid()),
		Args: fmt.Sprintf(`ensure --home "%s"`, home)}
	def, err := TaskXML(task)
	if err != nil {
		t.Fatal(err)
	}

	// The definition read back from the bytes schtasks gets.
	enc := EncodeUTF16(def)
	u := make([]uint16, (len(enc)-2)/2)
	for i := range u {
		u[i] = uint16(enc[2+2*i]) | uint16(enc[3+2*i])<<8
	}
	text := strings.Replace(string(utf16.Decode(u)), `encoding="UTF-16"`, `encoding="UTF-8"`, 1)
	var back taskDef
	if err := xml.Unmarshal([]byte(text), &back); err != nil {
		t.Fatalf("read the definition back: %v\n%s", err, text)
	}
	action := back.Actions.Exec
	if action.WorkingDirectory != dir {
		t.Fatalf("working directory read back %q, want %q", action.WorkingDirectory, dir)
	}
	cmdline := action.Command + " " + action.Arguments
	argv, err := windows.DecomposeCommandLine(cmdline)
	if err != nil {
		t.Fatalf("CommandLineToArgvW(%q): %v", cmdline, err)
	}
	if want := []string{exe, "ensure", "--home", home}; !slices.Equal(argv, want) {
		t.Fatalf("CommandLineToArgvW(%q) = %q, want %q", cmdline, argv, want)
	}

	// Started from the command line alone.
	out := filepath.Join(t.TempDir(), "echo.json")
	t.Setenv(echoEnv, out)
	cl, err := windows.UTF16PtrFromString(cmdline)
	if err != nil {
		t.Fatal(err)
	}
	wd, err := windows.UTF16PtrFromString(action.WorkingDirectory)
	if err != nil {
		t.Fatal(err)
	}
	var si windows.StartupInfo
	si.Cb = uint32(unsafe.Sizeof(si))
	var pi windows.ProcessInformation
	if err := windows.CreateProcess(nil, cl, nil, nil, false, windows.CREATE_NO_WINDOW|windows.CREATE_UNICODE_ENVIRONMENT, nil, wd, &si, &pi); err != nil {
		t.Fatalf("CreateProcess(%q): %v", cmdline, err)
	}
	defer windows.CloseHandle(pi.Thread)
	defer windows.CloseHandle(pi.Process)
	if ev, err := windows.WaitForSingleObject(pi.Process, uint32((60 * time.Second).Milliseconds())); err != nil || ev != windows.WAIT_OBJECT_0 {
		t.Fatalf("the started program did not exit: %d %v", ev, err)
	}
	var code uint32
	if err := windows.GetExitCodeProcess(pi.Process, &code); err != nil || code != 0 {
		t.Fatalf("the started program exited %d (%v)", code, err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("the started program wrote nothing: %v", err)
	}
	var got echoed
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if !strings.EqualFold(got.Exe, exe) || !strings.EqualFold(got.Dir, dir) || !slices.Equal(got.Args, []string{"ensure", "--home", home}) {
		t.Fatalf("the command line %q started %q in %q with %q; want %q in %q with ensure --home %q",
			cmdline, got.Exe, got.Dir, got.Args, exe, dir, home)
	}

	// Task Scheduler takes the definition (Wine's keeps less of it: see
	// TestTaskSchedulerRoundTrip).
	if err := registerTask(task); err != nil {
		t.Fatal(err)
	}
	if err := deleteTask(task.Name); err != nil {
		t.Fatal(err)
	}
}
