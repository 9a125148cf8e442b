package notices

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func goEnv(t *testing.T, key string) string {
	t.Helper()
	out, err := exec.Command("go", "env", key).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", key, err)
	}
	return strings.TrimSpace(string(out))
}

// TestNoticesCoverTheWindowsBinary builds hearth-tray.exe as the package
// ships it (windows/amd64, no cgo) and checks that the notices generated
// from it have a section, with licence text, for Go and for every module
// linked into it — and that those are all the modules `go list -deps`
// says the Windows build uses.
func TestNoticesCoverTheWindowsBinary(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command here")
	}
	root := filepath.Dir(goEnv(t, "GOMOD"))
	exe := filepath.Join(t.TempDir(), "hearth-tray.exe")
	build := exec.Command("go", "build", "-trimpath", "-o", exe, "./cmd/hearth-tray")
	build.Dir = root
	build.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the Windows binary: %v\n%s", err, out)
	}
	goVersion, mods, err := Linked(exe)
	if err != nil {
		t.Fatal(err)
	}
	if len(mods) < 5 || !strings.HasPrefix(goVersion, "go1.") {
		t.Fatalf("build info of the Windows binary: %s, %d modules", goVersion, len(mods))
	}
	if err := ResolveDirs(root, mods); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, "Hearth", goVersion, goEnv(t, "GOROOT"), mods); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	got := map[string]bool{}
	for _, s := range Sections(text) {
		got[s] = true
	}
	for _, m := range mods {
		if !got[m.ID()] {
			t.Errorf("notices lack module %s", m.ID())
		}
	}
	if !got["The Go programming language (standard library and runtime) "+goVersion] {
		t.Errorf("notices lack Go itself")
	}
	if len(got) != len(mods)+1 {
		t.Errorf("notices have %d sections for %d modules and Go", len(got), len(mods))
	}
	// Every section carries text: the section after each title is not empty.
	for _, part := range strings.Split(text, "\n\n==== ")[1:] {
		if !strings.Contains(part, "\n---- ") {
			t.Errorf("section without a licence file: %.80q", part)
		}
	}
	for _, want := range []string{"modernc.org/sqlite@", "fyne.io/systray@", "---- LICENSE-SQLITE ----", "---- PATENTS ----"} {
		if !strings.Contains(text, want) {
			t.Errorf("notices lack %q", want)
		}
	}

	// The module graph's view of the same build agrees with the binary's.
	list := exec.Command("go", "list", "-deps", "-f", "{{with .Module}}{{if not .Main}}{{.Path}}@{{.Version}}{{end}}{{end}}", "./cmd/hearth-tray")
	list.Dir = root
	list.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0")
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, id := range strings.Fields(string(out)) {
		if !got[id] {
			t.Errorf("go list -deps names %s, which the notices lack", id)
		}
	}
}

func TestModuleWithoutLicenceIsRefused(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("no terms here"), 0o600)
	mods := []Module{{Path: "example.com/unlicensed", Version: "v1.0.0", Dir: dir}}
	err := Write(&bytes.Buffer{}, "Hearth", runtime.Version(), goEnv(t, "GOROOT"), mods)
	if err == nil || !strings.Contains(err.Error(), "example.com/unlicensed@v1.0.0") {
		t.Fatalf("Write for a module without a licence = %v, want an error naming it", err)
	}
	os.WriteFile(filepath.Join(dir, "LICENSE"), []byte("  \n"), 0o600)
	if err := Write(&bytes.Buffer{}, "Hearth", runtime.Version(), goEnv(t, "GOROOT"), mods); err == nil {
		t.Fatal("an empty licence file must be refused")
	}
}

func TestLicenceFileNames(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"LICENSE", "LICENSE-SQLITE", "LICENSE-3RD-PARTY.md", "COPYING", "NOTICE.txt", "PATENTS", "AUTHORS", "licence.md", "README", "LICENSES.go.bak~", "main.go", "license_test.go"} {
		os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o600)
	}
	files, err := LicenceFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	want := "AUTHORS COPYING LICENSE LICENSE-3RD-PARTY.md LICENSE-SQLITE NOTICE.txt PATENTS licence.md"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("licence files = %s, want %s", got, want)
	}
}
