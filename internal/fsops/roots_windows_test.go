package fsops

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"

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

// makeJunction makes link a junction (a mount-point reparse point) to the
// directory target by setting the reparse data itself with
// FSCTL_SET_REPARSE_POINT, as cmd's mklink /J does.
func makeJunction(link, target string) error {
	if err := os.Mkdir(link, 0o755); err != nil {
		return err
	}
	subst := utf16.Encode([]rune(`\??\` + target))
	printName := utf16.Encode([]rune(target))
	// REPARSE_DATA_BUFFER for a mount point: tag, data length, reserved,
	// then the offsets and lengths (bytes, without the NULs) of the
	// substitute and print names, then both names, each NUL-terminated.
	var names []uint16
	names = append(append(names, subst...), 0)
	names = append(append(names, printName...), 0)
	data := binary.LittleEndian.AppendUint16(nil, 0) // SubstituteNameOffset
	data = binary.LittleEndian.AppendUint16(data, uint16(2*len(subst)))
	data = binary.LittleEndian.AppendUint16(data, uint16(2*(len(subst)+1)))
	data = binary.LittleEndian.AppendUint16(data, uint16(2*len(printName)))
	for _, u := range names {
		data = binary.LittleEndian.AppendUint16(data, u)
	}
	buf := binary.LittleEndian.AppendUint32(nil, windows.IO_REPARSE_TAG_MOUNT_POINT)
	buf = binary.LittleEndian.AppendUint16(buf, uint16(len(data)))
	buf = binary.LittleEndian.AppendUint16(buf, 0)
	buf = append(buf, data...)

	name, err := windows.UTF16PtrFromString(link)
	if err != nil {
		return err
	}
	h, err := windows.CreateFile(name, windows.GENERIC_WRITE, 0, nil, windows.OPEN_EXISTING,
		windows.FILE_FLAG_BACKUP_SEMANTICS|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: link, Err: err}
	}
	defer windows.CloseHandle(h)
	var n uint32
	if err := windows.DeviceIoControl(h, windows.FSCTL_SET_REPARSE_POINT, &buf[0], uint32(len(buf)), nil, 0, &n, nil); err != nil {
		return &os.PathError{Op: "FSCTL_SET_REPARSE_POINT", Path: link, Err: err}
	}
	return nil
}

// TestResolveJunction checks that a junction (a mount point, which
// filepath.EvalSymlinks no longer follows) cannot lead out of a root.
func TestResolveJunction(t *testing.T) {
	fx := newFixture(t, t.TempDir())
	link := filepath.Join(fx.root, "junction_out")
	err := makeJunction(link, fx.outside)
	if errors.Is(err, windows.ERROR_NOT_SUPPORTED) || errors.Is(err, windows.ERROR_INVALID_FUNCTION) {
		// Wine 8 answers FSCTL_SET_REPARSE_POINT with "Request not
		// supported" (and cmd's mklink /J makes nothing it traverses);
		// NTFS supports mount points for every user.
		t.Skipf("this file system cannot hold a junction: %v", err)
	}
	if err != nil {
		t.Fatalf("make a junction: %v", err)
	}
	if _, err := os.Stat(filepath.Join(link, "secret.txt")); err != nil {
		t.Fatalf("the junction was made but does not lead to its target: %v", err)
	}
	for _, p := range []string{filepath.Join(link, "secret.txt"), filepath.Join(link, "new.txt"), link} {
		if _, err := fx.roots.Resolve(p); ruleOf(err) != RuleSymlinkEscape {
			t.Errorf("Resolve(%q) = %v, want %s", p, err, RuleSymlinkEscape)
		}
	}
}
