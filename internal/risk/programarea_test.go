package risk_test

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/hearth-dev/hearth/internal/risk"
)

// TestInstalledEnvironmentsAreNotOrdinary: a Python environment in the
// home (a venv: a folder with pyvenv.cfg; a conda install or env: a
// folder with conda-meta), Perl's local::lib and the Google Cloud SDK
// are program areas: a write anywhere inside one is not ordinary (Python
// imports its modules, a shell sources its scripts), a folder rule may
// not cover it, and a file beside the environment stays ordinary.
func TestInstalledEnvironmentsAreNotOrdinary(t *testing.T) {
	home := t.TempDir()
	venv := filepath.Join(home, "proj", ".venv")
	conda := filepath.Join(home, "miniconda3")
	for _, d := range []string{filepath.Join(venv, "lib"), filepath.Join(conda, "conda-meta"), filepath.Join(conda, "envs", "x")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(venv, "pyvenv.cfg"), []byte("home = /usr/bin\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Outside an environment a document is ordinary (a source file is
	// not a document: it asks for that), so the near misses are text
	// files.
	const src = ".txt"
	w := risk.NewWritesFor(runtime.GOOS == "windows", env(map[string]string{"HOME": home, "USERPROFILE": home}), nil)
	for p, want := range map[string]risk.Why{
		filepath.Join(venv, "lib", "python3.12", "site-packages", "x.py"): risk.WhyPythonEnv,
		filepath.Join(venv, "bin", "activate"):                            risk.WhyPythonEnv,
		filepath.Join(conda, "lib", "python3.12", "site.py"):              risk.WhyPythonEnv,
		filepath.Join(conda, "envs", "x", "lib", "os.py"):                 risk.WhyPythonEnv,
		filepath.Join(home, "proj", "sub", "pyvenv.cfg"):                  risk.WhyPythonEnv,
		filepath.Join(home, "proj", "env", "conda-meta", "x.json"):        risk.WhyPythonEnv,
		filepath.Join(home, "perl5", "lib", "perl5", "local", "lib.pm"):   risk.WhyInstalled,
		filepath.Join(home, "tools", "google-cloud-sdk", "bin", "gcloud"): risk.WhyInstalled,
		filepath.Join(home, "proj", "main"+src):                           "",
		filepath.Join(home, "proj", "lib", "site"+src):                    "",
		filepath.Join(home, "Documents", "perl5", "notes.txt"):            "",
	} {
		why, ok := w.Classify(risk.FileFacts{Path: p, Root: home, NewHead: []byte("impo")})
		if why != want || ok != (want == "") {
			t.Errorf("%s: %q %v, want %q", p, why, ok, want)
		}
		if want != "" && (want.Coverable() || want.Said() == risk.Why("").Said()) {
			t.Errorf("%s: a folder rule may cover %q, or it says no reason: %q", p, want, want.Said())
		}
	}
}

// TestWriteThatMakesAGitFolderIsGits: a write that leaves a folder
// holding HEAD, objects/ and refs/ (or commondir in their place), the
// file written being the last of them, is a write inside git's own
// folder (git takes such a folder for a bare repository and runs what its
// config names); the same file in a folder that lacks a part is not.
func TestWriteThatMakesAGitFolderIsGits(t *testing.T) {
	home := t.TempDir()
	ps := risk.NewPlacesFor(runtime.GOOS == "windows", env(map[string]string{"HOME": home, "USERPROFILE": home}), nil)
	mk := func(name string, dir bool) {
		t.Helper()
		p := filepath.Join(home, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if dir {
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
		} else if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk("a/HEAD", false)
	mk("a/objects", true)
	mk("b/HEAD", false)
	mk("b/refs", true)
	mk("c/objects", true)
	mk("c/refs", true)
	mk("d/HEAD", false)
	for p, want := range map[string]bool{
		"a/refs/heads/main":   true,
		"b/objects/info/x":    true,
		"c/HEAD":              true,
		"d/commondir":         true,
		"a/notes.txt":         false,
		"b/refs.txt":          false,
		"d/objects/x":         false,
		"e/refs/heads/main":   false,
		"a/sub/refs/heads/x":  false,
		"proj/HEAD":           false,
		"proj/objects/a.json": false,
	} {
		pl, ok := ps.Match(filepath.Join(home, p))
		if ok != want || ok && pl.ID != "git" {
			t.Errorf("%s: caught %v as %q, want %v", p, ok, pl.ID, want)
		}
	}
}
