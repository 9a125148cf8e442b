package ui

import "testing"

// TestFoldersName names folders as a person knows them, on Windows' paths
// (drive letters, backslashes, forward slashes, long-path prefixes, case,
// a known folder moved into OneDrive or onto another drive) and on
// Linux's, on every system.
func TestFoldersName(t *testing.T) {
	win := Folders{Windows: true, Home: `C:\Users\Ann`, Known: []KnownFolder{
		{"Documents", `C:\Users\Ann\OneDrive\Documents`},
		{"Downloads", `D:\Downloads`},
		{"Desktop", `C:\Users\Ann\Desktop`},
	}}
	linux := Folders{Home: "/home/ann"}
	for _, c := range []struct {
		f        Folders
		in, want string
	}{
		{win, `D:\Downloads`, "Downloads"},
		{win, `d:\downloads\`, "Downloads"},
		{win, `\\?\D:\Downloads\Scans`, `Downloads\Scans`},
		{win, `C:\Users\Ann\OneDrive\Documents\Invoices`, `Documents\Invoices`},
		{win, `C:/Users/Ann/OneDrive/Documents/Invoices/2024`, `Documents\Invoices\2024`},
		{win, `C:\Users\Ann\Documents`, "Documents"}, // not the known one: below the home
		{win, `C:\Users\Ann`, "your home folder"},
		{win, `c:\users\ann\Music\Old`, `Music\Old`},
		{win, `C:\Users\Ann\Desktop`, "Desktop"},
		{win, `C:\Users\Ann\Desktops`, "Desktops"},
		{win, `E:\Archive`, `E:\Archive`},
		{win, `E:\`, `E:\`},
		{win, `E:\Backups\2024\Taxes\Invoices`, `E:\…\Taxes\Invoices`},
		{win, `\\?\E:\Backups\2024\Taxes\Invoices`, `E:\…\Taxes\Invoices`},
		{linux, "/home/ann/Downloads", "Downloads"},
		{linux, "/home/ann/Documents/Invoices/", "Documents/Invoices"},
		{linux, "/home/ann", "your home folder"},
		{linux, "/home/anne/x", "/home/anne/x"},
		{linux, "/srv/data/a/b/c", "/…/b/c"},
		{linux, "/", "/"},
	} {
		if got := c.f.Name(c.in); got != c.want {
			t.Errorf("Name(%q) windows=%v = %q, want %q", c.in, c.f.Windows, got, c.want)
		}
	}
}

func TestFoldersDirBaseCommon(t *testing.T) {
	win := Folders{Windows: true}
	for _, c := range []struct{ in, dir, base string }{
		{`C:\Users\Ann\setup.exe`, `C:\Users\Ann`, "setup.exe"},
		{`C:/Users/Ann/setup.exe`, `C:\Users\Ann`, "setup.exe"},
		{`C:\setup.exe`, `C:\`, "setup.exe"},
		{`C:\Invoices\`, `C:\`, "Invoices"},
		{`\\?\C:\a\b`, `C:\a`, "b"},
	} {
		if d, b := win.Dir(c.in), win.Base(c.in); d != c.dir || b != c.base {
			t.Errorf("Dir, Base(%q) = %q, %q; want %q, %q", c.in, d, b, c.dir, c.base)
		}
	}
	for _, c := range []struct {
		dirs   []string
		common string
		same   bool
	}{
		{[]string{`C:\A\B`, `c:\a\b\`}, `C:\A\B`, true},
		{[]string{`C:\A\B\x`, `C:\A\B\y`, `C:\A\B`}, `C:\A\B`, false},
		{[]string{`C:\A\Bc`, `C:\A\B`}, `C:\A`, false},
		{[]string{`C:\A`, `D:\A`}, "", false},
	} {
		if got, same := win.Common(c.dirs); got != c.common || same != c.same {
			t.Errorf("Common(%q) = %q, %v; want %q, %v", c.dirs, got, same, c.common, c.same)
		}
	}
	if got, same := (Folders{}).Common([]string{"/home/a/x", "/home/a/y"}); got != "/home/a" || same {
		t.Errorf("Common on Linux = %q, %v", got, same)
	}
	if got, _ := (Folders{}).Common([]string{"/a", "/b"}); got != "/" {
		t.Errorf("Common of /a and /b = %q, want /", got)
	}
}
