package risk_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/risk"
)

// TestCallWritesLooksOncePerFolder: the allowlist of one call classifies
// each of its files as Classify does, the ones inside a Python
// environment too, but looks at the folders above them once for all the
// files (a batch of 200 documents in one folder costs one walk up, not
// 200); a pyvenv.cfg made after a call counts at the next call.
func TestCallWritesLooksOncePerFolder(t *testing.T) {
	home := t.TempDir()
	docs := filepath.Join(home, "Documents", "Invoices")
	venv := filepath.Join(home, "proj", ".venv")
	for _, d := range []string{docs, filepath.Join(venv, "lib")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(venv, "pyvenv.cfg"), []byte("home = /usr/bin\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := risk.NewWritesFor(runtime.GOOS == "windows", env(map[string]string{"HOME": home, "USERPROFILE": home}), nil)
	looks := 0
	w.CountLooks(&looks)
	var files []risk.FileFacts
	for i := range 200 {
		files = append(files, risk.FileFacts{Path: filepath.Join(docs, fmt.Sprintf("invoice %03d.txt", i)), Root: home, NewHead: []byte("Invo")})
	}
	inVenv := risk.FileFacts{Path: filepath.Join(venv, "lib", "notes.txt"), Root: home, NewHead: []byte("note")}
	files = append(files, inVenv)

	alone := map[string]risk.Why{}
	for _, f := range files {
		why, _ := w.Classify(f)
		alone[f.Path] = why
	}
	perFile := looks
	looks = 0
	call := w.ForCall()
	for _, f := range files {
		why, ok := call.Classify(f)
		if why != alone[f.Path] || ok != (why == "") {
			t.Errorf("%s: %q %v in a call, %q alone", f.Path, why, ok, alone[f.Path])
		}
	}
	if alone[inVenv.Path] != risk.WhyPythonEnv || alone[files[0].Path] != "" {
		t.Fatalf("alone: the document %q, the file in the environment %q", alone[files[0].Path], alone[inVenv.Path])
	}
	// Two names per folder above the documents, and above the file in
	// the environment those its way does not share.
	depth := strings.Count(filepath.ToSlash(docs), "/") + 1
	if looks > 2*(depth+4) || looks*20 > perFile {
		t.Errorf("one call looked %d times, each file alone %d in all: want about %d", looks, perFile, 2*depth)
	}

	// A later call sees what changed since the last.
	if err := os.WriteFile(filepath.Join(docs, "pyvenv.cfg"), []byte("home = /usr/bin\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if why, _ := call.Classify(files[1]); why != "" {
		t.Errorf("the same call: %q, want its first look kept", why)
	}
	if why, _ := w.ForCall().Classify(files[1]); why != risk.WhyPythonEnv {
		t.Errorf("the next call: %q, want %q", why, risk.WhyPythonEnv)
	}
}
