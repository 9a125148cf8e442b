package fsops

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/windows"
)

// shortPathName returns the 8.3 form of an existing path, as Windows
// reports it (the path itself when the volume makes no short names).
func shortPathName(t *testing.T, p string) string {
	t.Helper()
	in, err := windows.UTF16PtrFromString(p)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]uint16, windows.MAX_PATH)
	for {
		n, err := windows.GetShortPathName(in, &buf[0], uint32(len(buf)))
		if err != nil {
			t.Fatalf("GetShortPathName(%s): %v", p, err)
		}
		if n < uint32(len(buf)) {
			return windows.UTF16ToString(buf[:n])
		}
		buf = make([]uint16, n)
	}
}

// TestResolveRealShortName: a real 8.3 alias that Windows made for a
// long-named directory (no faked longFor) is refused, naming the alias,
// while the long name is accepted.
func TestResolveRealShortName(t *testing.T) {
	fx := newFixture(t, t.TempDir())
	long := filepath.Join(fx.root, "a rather long directory name")
	if err := os.Mkdir(long, 0o755); err != nil {
		t.Fatal(err)
	}
	aliasName := filepath.Base(shortPathName(t, long))
	if strings.EqualFold(aliasName, filepath.Base(long)) {
		t.Skipf("this volume makes no 8.3 names (GetShortPathName gave back %q)", aliasName)
	}
	alias := filepath.Join(fx.root, aliasName)
	_, err := fx.roots.Resolve(alias + `\x`)
	if ruleOf(err) != RuleShortName || !strings.Contains(err.Error(), aliasName) {
		t.Fatalf("Resolve(%q) = %v, want %s naming %q", alias+`\x`, err, RuleShortName, aliasName)
	}
	if got, err := fx.roots.Resolve(long + `\x`); err != nil || !strings.EqualFold(got, long+`\x`) {
		t.Fatalf("Resolve of the long name = %q, %v", got, err)
	}
}
