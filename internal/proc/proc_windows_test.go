package proc

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

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

// procWideCharToMultiByte encodes test text; x/sys/windows wraps only the
// decoding direction.
var procWideCharToMultiByte = windows.NewLazySystemDLL("kernel32.dll").NewProc("WideCharToMultiByte")

// encodeCodePage returns s in code page cp, and false when s does not
// survive the trip: a character the code page lacks (or maps to a
// look-alike) decodes back as something else.
func encodeCodePage(t *testing.T, s string, cp uint32) ([]byte, bool) {
	t.Helper()
	u := utf16.Encode([]rune(s))
	n, _, err := procWideCharToMultiByte.Call(uintptr(cp), 0, uintptr(unsafe.Pointer(&u[0])), uintptr(len(u)), 0, 0, 0, 0)
	if n == 0 {
		t.Fatalf("WideCharToMultiByte(cp%d, %q) size: %v", cp, s, err)
	}
	b := make([]byte, n)
	n, _, err = procWideCharToMultiByte.Call(uintptr(cp), 0, uintptr(unsafe.Pointer(&u[0])), uintptr(len(u)),
		uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), 0, 0)
	if n == 0 {
		t.Fatalf("WideCharToMultiByte(cp%d, %q): %v", cp, s, err)
	}
	b = b[:n]
	back, ok := decodeCodePage(b, cp)
	return b, ok && back == s
}

// legacyCandidates lists the code pages decodeLegacy tries, in its order
// and queried the same way: the console output code page, the OEM code
// page, the ANSI code page, leaving out 0 and UTF-8.
func legacyCandidates(t *testing.T) []uint32 {
	t.Helper()
	var raw []uint32
	if cp, err := windows.GetConsoleOutputCP(); err == nil {
		raw = append(raw, cp)
	}
	if err := procGetOEMCP.Find(); err != nil {
		t.Fatalf("GetOEMCP: %v", err)
	}
	oem, _, _ := procGetOEMCP.Call()
	raw = append(raw, uint32(oem), windows.GetACP())
	var cps []uint32
	for _, cp := range raw {
		if cp != 0 && cp != cpUTF8 {
			cps = append(cps, cp)
		}
	}
	t.Logf("code pages in decodeLegacy's order: %v (from %v)", cps, raw)
	return cps
}

// legacySamples are texts in the scripts of the usual OEM and ANSI code
// pages. Each starts and ends in ASCII so that Decode's UTF-16 BOM and
// cut-rune checks cannot claim the encoded bytes.
var legacySamples = []string{
	"Café crème, à la fenêtre!", // 437, 850, 858, 1252
	"Zażółć gęślą jaźń!",        // 852, 1250
	"A привет мир!",             // 866, 1251
	"A γειά σου!",               // 737, 1253
	"Türkçe ğış!",               // 857, 1254
	"A שלום!",                   // 862, 1255
	"A مرحبا!",                  // 720, 1256
	"Ąčė šųūž!",                 // 775, 1257
	"Tiếng Việt!",               // 1258
	"A สวัสดี!",                 // 874
	"A 日本語のテキスト!",               // 932
	"A 中文文本!",                   // 936, 950
	"A 한국어!",                    // 949
}

// sampleFor returns a sample text that code page cp encodes exactly, in
// bytes that are not UTF-8, and those bytes.
func sampleFor(t *testing.T, cp uint32) (string, []byte) {
	t.Helper()
	for _, s := range legacySamples {
		if b, ok := encodeCodePage(t, s, cp); ok && !utf8.Valid(b) {
			return s, b
		}
	}
	t.Fatalf("no sample text encodes exactly in cp%d; add one in its script", cp)
	return "", nil
}

// TestDecodeCodePageFallback: bytes that are not UTF-8 are decoded in the
// first code page decodeLegacy tries and labelled with it, so text a
// console tool wrote in that code page comes back exactly; Latin-1 is only
// the last resort, when no legacy code page is set.
func TestDecodeCodePageFallback(t *testing.T) {
	if text, enc := Decode([]byte("caf\xC3\xA9 \xE2\x9C\x93")); text != "caf\u00e9 \u2713" || enc != "utf-8" {
		t.Errorf("Decode of valid UTF-8 = %q, %q; want it unchanged as utf-8", text, enc)
	}

	// Tree.interrupt may borrow a child's console meanwhile, which would
	// change the console code page between reading it here and in Decode.
	consoleMu.Lock()
	defer consoleMu.Unlock()
	cps := legacyCandidates(t)
	if len(cps) == 0 {
		in := []byte("caf\xE9 cr\xE8me")
		if text, enc := Decode(in); text != "caf\u00e9 cr\u00e8me" || enc != "latin-1" {
			t.Errorf("Decode(%q) with only UTF-8 code pages = %q, %q; want latin-1", in, text, enc)
		}
		return
	}
	first := cps[0]
	want, b := sampleFor(t, first)
	text, enc := Decode(b)
	if wantEnc := "cp" + strconv.FormatUint(uint64(first), 10); text != want || enc != wantEnc {
		t.Errorf("Decode(%q) = %q, %q; want %q, %q", b, text, enc, want, wantEnc)
	}
	if text == latin1(b) {
		t.Errorf("Decode(%q) = %q is the Latin-1 reading, not cp%d", b, text, first)
	}
}

// attachChildConsole starts a sleeping helper child with a hidden console
// of its own and attaches this process to that console until the test
// ends. The caller holds consoleMu.
func attachChildConsole(t *testing.T) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"=sleep")
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_NO_WINDOW}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start console child: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	// Under Wine a program started from a Unix shell is attached to a
	// console that answers no console calls (GetConsoleOutputCP fails) but
	// makes AttachConsole fail with access denied; leave it first. The
	// child's console may not exist yet right after Start.
	var r uintptr
	var err error
	for range 50 {
		if r, _, err = procAttachConsole.Call(uintptr(uint32(cmd.Process.Pid))); r != 0 {
			break
		}
		if errors.Is(err, windows.ERROR_ACCESS_DENIED) {
			_, _, _ = procFreeConsole.Call()
		}
		time.Sleep(50 * time.Millisecond)
	}
	if r == 0 {
		t.Fatalf("attach to the console of process %d: %v", cmd.Process.Pid, err)
	}
	t.Cleanup(func() { _, _, _ = procFreeConsole.Call() })
}

// TestDecodeConsoleCodePageFirst: when Hearth has a console, a code page
// set on it (chcp) wins over the OEM and ANSI code pages. Every candidate
// decodes every byte sequence (decodeCodePage passes no
// MB_ERR_INVALID_CHARS), so the order is what decides, and the test
// proves it by choosing a console code page whose reading of the sample
// differs from the OEM one.
func TestDecodeConsoleCodePageFirst(t *testing.T) {
	consoleMu.Lock() // the console is process-wide; see Tree.interrupt
	t.Cleanup(consoleMu.Unlock)
	saved, err := windows.GetConsoleOutputCP()
	if err != nil {
		// No console (the tray app's case, and the test's under Wine):
		// borrow the hidden console of a child, as Tree.interrupt does.
		attachChildConsole(t)
		if saved, err = windows.GetConsoleOutputCP(); err != nil {
			t.Fatalf("GetConsoleOutputCP on a child's console: %v", err)
		}
	}
	t.Cleanup(func() {
		if err := windows.SetConsoleOutputCP(saved); err != nil {
			t.Errorf("restore console output code page %d: %v", saved, err)
		}
	})
	oem, _, _ := procGetOEMCP.Call()
	for _, cp := range []uint32{1251, 866, 1253, 1252, 437} {
		if cp == uint32(oem) || cp == windows.GetACP() {
			continue
		}
		want, b := sampleFor(t, cp)
		if other, _ := decodeCodePage(b, uint32(oem)); other == want {
			continue // both readings agree: this pair proves nothing
		}
		if err := windows.SetConsoleOutputCP(cp); err != nil {
			t.Logf("SetConsoleOutputCP(%d): %v", cp, err)
			continue
		}
		text, enc := Decode(b)
		if wantEnc := "cp" + strconv.FormatUint(uint64(cp), 10); text != want || enc != wantEnc {
			t.Errorf("console code page %d, OEM %d: Decode(%q) = %q, %q; want %q, %q", cp, oem, b, text, enc, want, wantEnc)
		}
		return
	}
	t.Fatalf("could not set a console output code page other than OEM %d and ANSI %d", oem, windows.GetACP())
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
