package selftest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/hearth-dev/hearth/internal/desktop"
)

// checkStoreApps: ui.apps lists the packaged (Store) apps of the Start
// menu, kind "store" with their AppUserModelID, as well as the programs
// with a shortcut. Its evidence is independent of the shell: the user's
// %LOCALAPPDATA%\Packages holds a folder per installed package, named by
// its package family, so a PC with packages there must list store apps,
// and each listed one's family must be among those folders. Wine has no
// packaged apps (and no such folder), so there the check skips.
func (r *run) checkStoreApps(ctx context.Context) (string, error) {
	if runtime.GOOS != "windows" {
		return "", notWindows("packaged (Store) apps")
	}
	families := map[string]bool{}
	if local := os.Getenv("LOCALAPPDATA"); local != "" {
		ents, _ := os.ReadDir(filepath.Join(local, "Packages"))
		for _, e := range ents {
			if e.IsDir() {
				families[strings.ToLower(e.Name())] = true
			}
		}
	}
	res, err := r.hearth.callSettled(ctx, "ui", map[string]any{"operation": "apps", "limit": desktop.MaxApps})
	if err != nil {
		return "", err
	}
	if res.State() != "completed" {
		return "", fmt.Errorf("ui.apps answered %s", res.Brief())
	}
	list, _ := res.Get("result.apps").([]any)
	var store []string
	unknown := 0
	for _, x := range list {
		a, _ := x.(map[string]any)
		if a["kind"] != "store" {
			continue
		}
		id, _ := a["app_id"].(string)
		name, _ := a["name"].(string)
		fam, _, ok := strings.Cut(id, "!")
		if !ok || name == "" {
			return "", fmt.Errorf("ui.apps lists a store app without a name or AppUserModelID: %v", a)
		}
		if !families[strings.ToLower(fam)] {
			unknown++
		}
		store = append(store, fmt.Sprintf("%s (%s)", name, id))
	}
	switch {
	case len(store) == 0 && len(families) == 0:
		return "", skip("this Windows has no packaged (Store) apps for this user (no %%LOCALAPPDATA%%\\Packages; Wine has none), and ui.apps lists none (%d apps)", len(list))
	case len(store) == 0:
		return "", fmt.Errorf("%d packages are installed for this user (%%LOCALAPPDATA%%\\Packages), but ui.apps lists no store app among its %d apps", len(families), len(list))
	case unknown == len(store):
		return "", fmt.Errorf("none of the %d store apps ui.apps lists belongs to a package installed for this user (%%LOCALAPPDATA%%\\Packages): %s", len(store), strings.Join(store[:min(3, len(store))], ", "))
	}
	return fmt.Sprintf("ui.apps lists %d store apps with their AppUserModelID, e.g. %s", len(store), strings.Join(store[:min(3, len(store))], "; ")), nil
}
