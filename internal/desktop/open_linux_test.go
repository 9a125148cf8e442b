//go:build linux

package desktop_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/desktop"
	"github.com/hearth-dev/hearth/internal/fsops"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/proc"
)

// setup makes a root with a document, a folder and scripts, puts the
// fake xdg-open (hearthtest's) first on PATH, and an XDG data directory with
// two .desktop entries, one with a German name, the other hidden.
func setup(t *testing.T) (s *desktop.Service, root, log string) {
	t.Helper()
	base := t.TempDir()
	root = filepath.Join(base, "Zoë Ünal")
	must(t, os.MkdirAll(filepath.Join(root, "Budget folder"), 0o700))
	must(t, os.WriteFile(filepath.Join(root, "budget 2026.txt"), []byte("rent 900\n"), 0o600))
	must(t, os.WriteFile(filepath.Join(root, "run.sh"), []byte("echo hi\n"), 0o600))
	must(t, os.WriteFile(filepath.Join(root, "notes.txt"), []byte("#!/bin/sh\necho hi\n"), 0o600))
	must(t, os.WriteFile(filepath.Join(root, "tool"), []byte("data"), 0o700))
	must(t, os.MkdirAll(filepath.Join(base, "outside"), 0o700))
	must(t, os.WriteFile(filepath.Join(base, "outside", "secret.txt"), []byte("x"), 0o600))

	log = hearthtest.FakeOpener(t)

	apps := filepath.Join(base, "share", "applications")
	must(t, os.MkdirAll(apps, 0o700))
	started := filepath.Join(base, "started")
	must(t, os.WriteFile(filepath.Join(apps, "org.example.Editor.desktop"), []byte(
		"[Desktop Entry]\nType=Application\nName=Text Editor\nName[de]=Texteditor\nExec=sh -c \"echo started >>"+started+"\" %F\n"), 0o600))
	must(t, os.WriteFile(filepath.Join(apps, "hidden.desktop"), []byte(
		"[Desktop Entry]\nType=Application\nName=Hidden Helper\nNoDisplay=true\nExec=true\n"), 0o600))
	t.Setenv("XDG_DATA_HOME", filepath.Join(base, "share"))
	t.Setenv("XDG_DATA_DIRS", filepath.Join(base, "none"))
	t.Setenv("LC_ALL", "de_DE.UTF-8")

	roots, err := fsops.NewRoots([]string{root}, nil)
	must(t, err)
	s, err = desktop.New(roots, func(string) bool { return false }, proc.NewStarted(), slog.New(slog.DiscardHandler))
	must(t, err)
	return s, root, log
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func spec(t *testing.T, s *desktop.Service, op string) *primitive.Spec {
	for _, sp := range s.Specs() {
		if sp.Operation == op {
			return sp
		}
	}
	t.Fatalf("no ui.%s", op)
	return nil
}

// TestOpenHandsDocumentsFoldersAndLinksToXdgOpen: a document and a folder
// under the root and an https address go to xdg-open as they are (a path
// with accents and spaces in one argument); xdg-open's failure is the
// call's, in Hearth's words.
func TestOpenHandsDocumentsFoldersAndLinksToXdgOpen(t *testing.T) {
	s, root, log := setup(t)
	ctx := context.Background()
	doc := filepath.Join(root, "budget 2026.txt")
	for _, in := range []desktop.OpenInput{{Path: doc}, {Path: filepath.Join(root, "Budget folder")}, {URL: "https://example.org/a?b=c"}} {
		if _, err := s.Open(ctx, in); err != nil {
			t.Fatalf("%+v: %v", in, err)
		}
	}
	b, err := os.ReadFile(log)
	must(t, err)
	want := doc + "\n" + filepath.Join(root, "Budget folder") + "\nhttps://example.org/a?b=c\n"
	if string(b) != want {
		t.Fatalf("xdg-open was asked to open:\n%s\nwant:\n%s", b, want)
	}

	bad := filepath.Join(root, "xdg-open-fails.txt")
	must(t, os.WriteFile(bad, []byte("x"), 0o600))
	_, err = s.Open(ctx, desktop.OpenInput{Path: bad})
	var pe *primitive.Error
	if !errors.As(err, &pe) || pe.Code != "open_failed" || !strings.Contains(pe.Message, "could not be opened") {
		t.Fatalf("a document xdg-open could not open: %v; want failed/open_failed in Hearth's words", err)
	}
}

// TestOpenRefusesNamingTheField: a path outside the roots, an address
// that is not http(s), two things at once and nothing at all are refused
// before anything opens, each naming its field.
func TestOpenRefusesNamingTheField(t *testing.T) {
	s, root, log := setup(t)
	pre := spec(t, s, "open").Precheck
	cases := map[string]struct {
		in    desktop.OpenInput
		field string
	}{
		"outside the roots": {desktop.OpenInput{Path: filepath.Join(filepath.Dir(root), "outside", "secret.txt")}, "path"},
		"relative path":     {desktop.OpenInput{Path: "budget 2026.txt"}, "path"},
		"file: address":     {desktop.OpenInput{URL: "file:///etc/passwd"}, "url"},
		"javascript:":       {desktop.OpenInput{URL: "javascript:alert(1)"}, "url"},
		"ms-settings:":      {desktop.OpenInput{URL: "ms-settings:privacy"}, "url"},
		"no scheme":         {desktop.OpenInput{URL: "example.org"}, "url"},
		"user in address":   {desktop.OpenInput{URL: "https://a:b@example.org/"}, "url"},
		"two at once":       {desktop.OpenInput{Path: filepath.Join(root, "budget 2026.txt"), URL: "https://example.org"}, "url"},
		"nothing":           {desktop.OpenInput{}, "path"},
	}
	for name, c := range cases {
		raw, _ := json.Marshal(c.in)
		err := pre(raw)
		if err == nil || !strings.Contains(err.Error(), `ui.open: field "`+c.field+`"`) {
			t.Errorf("%s: precheck answered %v, want a refusal naming %s", name, err, c.field)
		}
		if _, err := s.Open(context.Background(), c.in); err == nil {
			t.Errorf("%s: opened", name)
		}
	}
	if _, err := os.Stat(log); err == nil {
		b, _ := os.ReadFile(log)
		t.Fatalf("xdg-open was called for refused input: %s", b)
	}
}

// TestOpenTellsProgramsApart: a file that runs when opened (by its
// extension, its #! first line, its execute bit) is the exec case's
// target; a document, a folder and an address are not.
func TestOpenTellsProgramsApart(t *testing.T) {
	s, root, _ := setup(t)
	tgt := spec(t, s, "open").Target
	for name, want := range map[string]bool{"run.sh": true, "notes.txt": true, "tool": true, "budget 2026.txt": false, "Budget folder": false} {
		raw, _ := json.Marshal(desktop.OpenInput{Path: filepath.Join(root, name)})
		got, err := tgt(context.Background(), "", raw)
		must(t, err)
		if got.Program != want {
			t.Errorf("%s: Program = %v, want %v", name, got.Program, want)
		}
		if want && (len(got.Paths) != 1 || got.Paths[0] != filepath.Join(root, name)) {
			t.Errorf("%s: the exec target names %v", name, got.Paths)
		}
	}
	raw, _ := json.Marshal(desktop.OpenInput{URL: "https://example.org"})
	if got, _ := tgt(context.Background(), "", raw); got.Program || got.App != "" {
		t.Errorf("an address is a target %+v", got)
	}
}

// TestAppsByLocalizedNameAndClosest: ui.apps lists the shown entries in
// the session's language; ui.open starts one by that name (any case) and
// names its program for governance; an unknown name answers the closest.
func TestAppsByLocalizedNameAndClosest(t *testing.T) {
	s, root, _ := setup(t)
	ctx := context.Background()
	list, err := s.Apps(ctx, "", 100)
	must(t, err)
	if len(list.Apps) != 1 || list.Apps[0].Name != "Texteditor" || list.Apps[0].ID != "org.example.Editor.desktop" || list.Apps[0].Kind != "xdg" {
		t.Fatalf("ui.apps = %+v, want only the editor under its German name", list.Apps)
	}
	raw, _ := json.Marshal(desktop.OpenInput{App: "texteditor"})
	tg, err := spec(t, s, "open").Target(ctx, "", raw)
	must(t, err)
	if tg.App != "sh" || !tg.Console {
		t.Errorf("the editor's target = %+v, want its program sh (a console program: it asks every time)", tg)
	}
	out, err := s.Open(ctx, desktop.OpenInput{App: "texteditor"})
	must(t, err)
	if out.ProcessID == 0 {
		t.Errorf("no process id for a started app: %+v", out)
	}
	started := filepath.Join(filepath.Dir(root), "started")
	deadline := time.Now().Add(10 * time.Second)
	for {
		if b, err := os.ReadFile(started); err == nil && strings.TrimSpace(string(b)) == "started" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the app's program did not run")
		}
		time.Sleep(20 * time.Millisecond)
	}
	_, err = s.Open(ctx, desktop.OpenInput{App: "Textedit"})
	if err == nil || !strings.Contains(err.Error(), `ui.open: field "app"`) || !strings.Contains(err.Error(), "Texteditor") {
		t.Fatalf("unknown app answered %v, want the closest name Texteditor", err)
	}
	if _, err := s.Open(ctx, desktop.OpenInput{App: "Hidden Helper"}); err == nil {
		t.Fatal("an entry the menu does not show was opened")
	}
}
