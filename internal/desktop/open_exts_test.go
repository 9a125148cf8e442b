package desktop_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hearth-dev/hearth/internal/desktop"
	"github.com/hearth-dev/hearth/internal/risk"
)

// TestOpenKnowsEveryFileThatRuns: ui.open treats a file that runs a
// program when opened as an exec (asks every time); any other file opens
// with no card once opening was allowed in the chat. Files the write
// allowlist already calls "a file that runs a program when opened"
// (.website, .chm, .scf, .wsc, .vb, .xlam, .dotm, .mst) and the Python
// launcher's own types (.pyz, .pyzw, .pyc, .pyo: double-click runs them
// with py.exe) were opened as documents, and so were automation scripts,
// macro Office types, themes and CLSID names.
func TestOpenKnowsEveryFileThatRuns(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"x.website", "x.chm", "x.scf", "x.wsc", "x.vb", "x.xlam", "x.dotm", "x.mst",
		"x.pyz", "x.pyzw", "x.pyc", "x.pyo", "x.ahk", "x.au3", "x.xlsm", "x.docm", "x.pptm", "x.ppsm", "x.xla", "x.ppam",
		"x.theme", "x.themepack", "x.deskthemepack", "notes.txt.{3050F4D8-98B5-11CF-BB82-00AA00BDCE0B}", "x.desktop"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("PK\x03\x04"), 0o644); err != nil {
			t.Fatal(err)
		}
		ok, err := desktop.IsProgram(risk.NewOpens(os.Getenv), p)
		if err != nil || !ok {
			t.Errorf("%s opens as a document with no card once opening is allowed (IsProgram %v, %v)", name, ok, err)
		}
	}
}
