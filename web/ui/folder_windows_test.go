package ui

import (
	"testing"

	"golang.org/x/sys/windows"
)

// TestThisPCNamesKnownFolders: on Windows the person's folders are named
// by their names where Windows says they are, not by where they would be
// below the home folder (which a move into OneDrive or onto another
// drive changes): with the home folder elsewhere, Downloads and
// Documents are still named so.
func TestThisPCNamesKnownFolders(t *testing.T) {
	t.Setenv("USERPROFILE", `C:\Hearth test elsewhere`)
	f := ThisPC()
	for _, c := range []struct {
		id   *windows.KNOWNFOLDERID
		name string
	}{{windows.FOLDERID_Downloads, "Downloads"}, {windows.FOLDERID_Documents, "Documents"}} {
		p, err := windows.KnownFolderPath(c.id, windows.KF_FLAG_DONT_VERIFY)
		if err != nil || p == "" {
			t.Fatalf("Windows does not say where %s is: %v", c.name, err)
		}
		if got := f.Name(p + `\Invoices`); got != c.name+`\Invoices` {
			t.Errorf("Name(%q) = %q, want %q", p+`\Invoices`, got, c.name+`\Invoices`)
		}
	}
}
