package proc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/windows"
)

// alive reports whether pid names a process that has not exited.
func alive(pid int) bool {
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	ev, err := windows.WaitForSingleObject(h, 0)
	return err == nil && ev == uint32(windows.WAIT_TIMEOUT)
}

// TestBatchFileArguments: a .bat runs through cmd.exe, so arguments cmd.exe
// would interpret are refused before the child runs, and plain ones work.
func TestBatchFileArguments(t *testing.T) {
	dir := t.TempDir()
	bat := filepath.Join(dir, "echo args.bat")
	if err := os.WriteFile(bat, []byte("@echo off\r\necho [%1]\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := Run(t.Context(), Spec{Command: bat, Args: []string{"plain"}})
	if err != nil {
		t.Fatalf("Run %s: %v", bat, err)
	}
	if got := strings.TrimSpace(string(res.Stdout)); got != "[plain]" {
		t.Errorf("batch output %q, want [plain]", got)
	}
	marker := filepath.Join(dir, "pwned")
	_, err = Run(t.Context(), Spec{Command: bat, Args: []string{`x" & echo pwned > "` + marker}})
	if err == nil || !strings.Contains(err.Error(), "cmd.exe") {
		t.Errorf("injection argument: err %v, want a refusal", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the injected command ran")
	}
}

func TestDecodeCodePageFallback(t *testing.T) {
	text, enc := Decode([]byte("caf\xE9 cr\xE8me"))
	if !strings.HasPrefix(enc, "cp") && enc != "latin-1" {
		t.Errorf("encoding %q, want a code page", enc)
	}
	if !utf8Valid(text) || !strings.HasPrefix(text, "caf") {
		t.Errorf("text %q", text)
	}
}

// TestEnvCaseInsensitive: on Windows "hearth_proc_test_case" overrides
// HEARTH_PROC_TEST_CASE instead of adding a second spelling.
func TestEnvCaseInsensitive(t *testing.T) {
	t.Setenv("HEARTH_PROC_TEST_CASE", "old")
	s := helperSpec("env", "HEARTH_PROC_TEST_CASE")
	s.Env["hearth_proc_test_case"] = "new"
	if res := run(t, s); string(res.Stdout) != "new" {
		t.Errorf("child saw %q, want new", res.Stdout)
	}
}
