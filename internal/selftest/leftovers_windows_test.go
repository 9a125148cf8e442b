package selftest

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/danieljoos/wincred"

	"github.com/hearth-dev/hearth/internal/autostart"
	"github.com/hearth-dev/hearth/internal/secrets"
	"github.com/hearth-dev/hearth/internal/selftestreport"
)

// leftovers lists what a run could leave outside its sandbox: Hearth's
// credentials in Credential Manager.
func leftovers(t *testing.T) []string {
	t.Helper()
	creds, err := wincred.FilteredList("Hearth/*")
	if err != nil {
		t.Logf("list credentials: %v", err)
		return nil
	}
	var names []string
	for _, c := range creds {
		names = append(names, c.TargetName)
	}
	slices.Sort(names)
	return names
}

// checkNoFixtures: no task, credential, window or shortcut of the run's
// names remains.
func checkNoFixtures(t *testing.T, rep *selftestreport.Report) {
	t.Helper()
	f := rep.Fixtures
	if f.Task == "" || f.Credential == "" || f.WindowTitle == "" || f.Shortcut == "" {
		t.Fatalf("the report does not name the run's fixtures: %+v", f)
	}
	if err := autostart.DeleteTask(f.Task); err == nil {
		t.Errorf("task %s was still registered", f.Task)
	}
	if on, err := autostart.TaskExists(f.Task); err == nil && on {
		t.Errorf("task %s is listed", f.Task)
	}
	store, err := secrets.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if on, err := store.Present(f.Credential); err != nil || on {
		t.Errorf("credential %s: present=%v err=%v", f.Credential, on, err)
	}
	for _, title := range []string{f.WindowTitle, PanelFixtureTitle(rep.RunID)} {
		if hs, err := findWindows(title); err != nil || len(hs) != 0 {
			t.Errorf("windows titled %q remain: %v %v", title, hs, err)
		}
	}
	if lnk, err := autostart.ShortcutPath(); err == nil {
		if _, err := os.Stat(filepath.Join(filepath.Dir(lnk), f.Shortcut)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a shortcut %s is in the Start menu: %v", f.Shortcut, err)
		}
	}
}
