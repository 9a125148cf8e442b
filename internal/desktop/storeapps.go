package desktop

import (
	"slices"
	"strings"
)

// Packaged (Store) apps are the entries of the shell's Applications
// folder (shell:AppsFolder, what the Start menu lists) whose parsing name
// is an AppUserModelID, "PackageFamilyName!AppId". The folder also lists
// the desktop programs, under a path or an id of the program's own
// choosing; those come from the Start menu's shortcuts already.

// shellApp is one entry of the Applications folder: the name the Start
// menu shows (in the PC's language) and its parsing name.
type shellApp struct {
	Name    string
	Parsing string
}

// storeApps picks the packaged apps out of the Applications folder's
// entries: kind "store", opened by their AppUserModelID, each id once,
// sorted by name. Governance asks about one by its id (lower-cased), as
// for a packaged app named by its id alone.
func storeApps(items []shellApp) []App {
	seen := map[string]bool{}
	var out []App
	for _, it := range items {
		name, id := strings.TrimSpace(it.Name), strings.TrimSpace(it.Parsing)
		if name == "" || !isAUMID(id) || seen[strings.ToLower(id)] {
			continue
		}
		seen[strings.ToLower(id)] = true
		out = append(out, App{Name: name, ID: id, Kind: "store", Program: strings.ToLower(id)})
	}
	sortApps(out)
	return out
}

// withStoreApps adds the packaged apps to the Start menu's shortcuts: a
// packaged app whose name a shortcut already has is left out (the name
// opens the shortcut's app; its id still opens the packaged one).
func withStoreApps(apps, store []App) []App {
	names := map[string]bool{}
	for _, a := range apps {
		names[strings.ToLower(a.Name)] = true
	}
	out := slices.Clone(apps)
	for _, s := range store {
		if !names[strings.ToLower(s.Name)] {
			names[strings.ToLower(s.Name)] = true
			out = append(out, s)
		}
	}
	sortApps(out)
	return out
}

func sortApps(apps []App) {
	slices.SortStableFunc(apps, func(a, b App) int { return strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)) })
}
