package startuptest

import (
	"testing"

	"golang.org/x/sys/windows/registry"
)

// shellFolders is where User Shell Folders redirects the user's known
// folders (what a OneDrive move or a redirected Startup writes).
const shellFolders = `Software\Microsoft\Windows\CurrentVersion\Explorer\User Shell Folders`

// Redirect points the known folder value name (Startup, Personal, …) at
// dir for the test, putting the old value back after it.
func Redirect(t testing.TB, name, dir string) {
	t.Helper()
	k, err := registry.OpenKey(registry.CURRENT_USER, shellFolders, registry.QUERY_VALUE|registry.SET_VALUE)
	if err != nil {
		t.Fatalf("open User Shell Folders: %v", err)
	}
	defer k.Close()
	old, oldType, err := k.GetStringValue(name)
	had := err == nil
	if err := k.SetExpandStringValue(name, dir); err != nil {
		t.Fatalf("redirect %s: %v", name, err)
	}
	t.Cleanup(func() {
		k, err := registry.OpenKey(registry.CURRENT_USER, shellFolders, registry.SET_VALUE)
		if err != nil {
			t.Errorf("put back %s: %v", name, err)
			return
		}
		defer k.Close()
		switch {
		case !had:
			k.DeleteValue(name)
		case oldType == registry.EXPAND_SZ:
			k.SetExpandStringValue(name, old)
		default:
			k.SetStringValue(name, old)
		}
	})
}
