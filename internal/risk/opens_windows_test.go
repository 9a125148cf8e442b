package risk_test

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/windows/registry"

	"github.com/hearth-dev/hearth/internal/risk"
)

// TestWindowsKindsAsk: on Windows itself, with this PC's folders and
// PATHEXT, writes of files that run when opened or are settings ask
// (a macro workbook, a theme, a CLSID name, _vimrc and vim's plugins,
// pip.ini, a scoop shim), while a Word file without macros in Documents
// is ordinary.
func TestWindowsKindsAsk(t *testing.T) {
	profile := os.Getenv("USERPROFILE")
	if profile == "" {
		t.Skip("no USERPROFILE")
	}
	w := risk.NewWrites(risk.KnownFolderEnv(os.Getenv), risk.RealPrefix)
	for name, want := range map[string]risk.Why{
		`Documents\book.xlsm`:  risk.WhyOpens,
		`Documents\dark.theme`: risk.WhyOpens,
		`Documents\notes.txt.{3050F4D8-98B5-11CF-BB82-00AA00BDCE0B}`: risk.WhyOpens,
		`_vimrc`:                risk.WhyNotDocument,
		`vimfiles\plugin\x.vim`: risk.WhyNotDocument,
		`pip\pip.ini`:           risk.WhyNotDocument,
		`scoop\shims\git.shim`:  risk.WhyNotDocument,
		`src\app\lefthook.yml`:  risk.WhyNotDocument,
		`Documents\report.docx`: "",
	} {
		p := filepath.Join(profile, name)
		why, ok := w.Classify(risk.FileFacts{Path: p, Root: profile, NewHead: []byte("PK\x03\x04")})
		if why != want || ok != (want == "") {
			t.Errorf("%s: %q (ordinary %v), want %q", p, why, ok, want)
		}
	}
}

// TestRegisteredHandlerThatRunsCode: an extension registered (in the
// registry's classes, as an installer registers one) to open with a
// script host runs when opened, though no table names it; one registered
// to open with Notepad does not. AssocQueryString answers both.
func TestRegisteredHandlerThatRunsCode(t *testing.T) {
	set := func(path, value string) {
		t.Helper()
		k, _, err := registry.CreateKey(registry.CLASSES_ROOT, path, registry.SET_VALUE)
		if err != nil {
			t.Fatal(err)
		}
		defer k.Close()
		if err := k.SetStringValue("", value); err != nil {
			t.Fatal(err)
		}
	}
	windir := os.Getenv("SystemRoot")
	set(`.hearthrun`, "HearthTest.Run")
	set(`HearthTest.Run\shell\open\command`, `"`+filepath.Join(windir, "System32", "wscript.exe")+`" "%1"`)
	set(`.hearthview`, "HearthTest.View")
	set(`HearthTest.View\shell\open\command`, `"`+filepath.Join(windir, "notepad.exe")+`" "%1"`)
	t.Cleanup(func() {
		for _, k := range []string{`.hearthrun`, `.hearthview`, `HearthTest.Run\shell\open\command`, `HearthTest.Run\shell\open`,
			`HearthTest.Run\shell`, `HearthTest.Run`, `HearthTest.View\shell\open\command`, `HearthTest.View\shell\open`,
			`HearthTest.View\shell`, `HearthTest.View`} {
			registry.DeleteKey(registry.CLASSES_ROOT, k)
		}
	})
	o := risk.NewOpens(os.Getenv)
	if !o.ByName(`C:\Users\x\tidy.hearthrun`) {
		t.Error("an extension that opens with wscript does not run when opened")
	}
	if o.ByName(`C:\Users\x\notes.hearthview`) {
		t.Error("an extension that opens with Notepad runs when opened")
	}
}
