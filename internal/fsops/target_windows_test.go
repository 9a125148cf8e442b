package fsops

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/windows"

	"github.com/hearth-dev/hearth/internal/risk"
)

// TestTargetFindsTheStartupFolder: on Windows, a write's target is the
// real path fs would write, and the Windows persistence table catches it
// in the user's Startup folder — in another case, and through a junction
// into that folder where the file system can hold one.
func TestTargetFindsTheStartupFolder(t *testing.T) {
	profile := t.TempDir()
	appdata := filepath.Join(profile, "AppData", "Roaming")
	startup := filepath.Join(appdata, "Microsoft", "Windows", "Start Menu", "Programs", "Startup")
	if err := os.MkdirAll(startup, 0o755); err != nil {
		t.Fatal(err)
	}
	roots, err := NewRoots([]string{profile}, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := &Engine{Roots: roots}
	places := risk.NewPlacesFor(true, func(k string) string {
		switch k {
		case "USERPROFILE":
			return profile
		case "APPDATA":
			return appdata
		}
		return ""
	}, risk.RealPrefix)
	caught := func(p string) bool {
		t.Helper()
		tg, err := e.writeTarget(context.Background(), "", []byte(`{"path":`+strconv.Quote(p)+`}`))
		if err != nil {
			t.Fatal(err)
		}
		if len(tg.Paths) != 1 {
			t.Fatalf("target of %s: %+v", p, tg)
		}
		pl, ok := places.Match(tg.Paths[0])
		return ok && pl.ID == "autostart"
	}
	if !caught(filepath.Join(startup, "run.lnk")) {
		t.Error("a shortcut in the Startup folder is not caught")
	}
	if !caught(strings.ToUpper(filepath.Join(startup, "run.bat"))) {
		t.Error("the Startup folder in upper case is not caught")
	}
	if caught(filepath.Join(profile, "notes.txt")) {
		t.Error("an ordinary file is caught")
	}
	link := filepath.Join(profile, "innocent")
	err = makeJunction(link, startup)
	if errors.Is(err, windows.ERROR_NOT_SUPPORTED) || errors.Is(err, windows.ERROR_INVALID_FUNCTION) {
		t.Skipf("this file system cannot hold a junction (Wine): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !caught(filepath.Join(link, "x.lnk")) {
		t.Error("a write through a junction into the Startup folder is not caught")
	}
}
