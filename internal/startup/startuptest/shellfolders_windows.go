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
	SetUserValue(t, shellFolders, name, dir, true)
}

// SetUserValue sets a string value (REG_EXPAND_SZ when expand) of an HKCU
// key for the test, making the key when missing, and puts the old value
// back (or removes it) after it.
func SetUserValue(t testing.TB, key, name, value string, expand bool) {
	t.Helper()
	k, _, err := registry.CreateKey(registry.CURRENT_USER, key, registry.QUERY_VALUE|registry.SET_VALUE)
	if err != nil {
		t.Fatalf("open %s: %v", key, err)
	}
	defer k.Close()
	old, oldType, err := k.GetStringValue(name)
	had := err == nil
	if expand {
		err = k.SetExpandStringValue(name, value)
	} else {
		err = k.SetStringValue(name, value)
	}
	if err != nil {
		t.Fatalf("set %s\\%s: %v", key, name, err)
	}
	t.Cleanup(func() {
		k, err := registry.OpenKey(registry.CURRENT_USER, key, registry.SET_VALUE)
		if err != nil {
			t.Errorf("put back %s\\%s: %v", key, name, err)
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
