package risk_test

import (
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/risk"
)

// TestPlacesAskWhereFoldersAreNow: the table's entries are made again
// from the environment and the known folders at each refresh: a Startup
// folder that moved (the known folder now answers another path) is a
// persistence place at its new path once the refresh time has passed,
// and the old path no longer is.
func TestPlacesAskWhereFoldersAreNow(t *testing.T) {
	startup := `C:\Users\Ann\AppData\Roaming\Microsoft\Windows\Start Menu\Programs\Startup`
	env := func(k string) string {
		switch k {
		case "USERPROFILE":
			return `C:\Users\Ann`
		case "FOLDERID_Startup":
			return startup
		}
		return ""
	}
	ps := risk.NewPlacesFor(true, env, nil)
	now := time.Now()
	ps.SetClock(func() time.Time { return now })
	moved := `D:\Sync\Startup\tidy.ahk`
	if _, ok := ps.Match(moved); ok {
		t.Fatal("a place before the folder moved")
	}
	startup = `D:\Sync\Startup`
	now = now.Add(risk.RefreshEvery)
	if pl, ok := ps.Match(moved); !ok || pl.ID != "autostart" {
		t.Fatalf("the moved Startup folder is not a place after the refresh: %+v %v", pl, ok)
	}
}
