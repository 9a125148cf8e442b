package startup_test

import (
	"encoding/binary"
	"testing"
	"unicode/utf16"

	"golang.org/x/sys/windows/registry"
)

// shellFolders is where User Shell Folders redirects the user's known
// folders (what a OneDrive move or a redirected Startup writes).
const shellFolders = `Software\Microsoft\Windows\CurrentVersion\Explorer\User Shell Folders`

// redirect points the known folder value name (Startup) at dir for the
// test, putting the old value back after it.
func redirect(t *testing.T, name, dir string) {
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

// lnk builds a Shell Link whose link info names target, with arguments
// args (Unicode string data), as Windows writes one.
func lnk(target, args string) []byte {
	b := make([]byte, 0x4c)
	binary.LittleEndian.PutUint32(b, 0x4c)
	binary.LittleEndian.PutUint32(b[0x14:], 0x2|0x20|0x80)
	info := make([]byte, 28)
	base := append([]byte(target), 0)
	binary.LittleEndian.PutUint32(info[0:], uint32(len(info)+len(base)))
	binary.LittleEndian.PutUint32(info[4:], 28)
	binary.LittleEndian.PutUint32(info[8:], 1)
	binary.LittleEndian.PutUint32(info[16:], 28)
	b = append(append(b, info...), base...)
	u := utf16.Encode([]rune(args))
	b = binary.LittleEndian.AppendUint16(b, uint16(len(u)))
	for _, c := range u {
		b = binary.LittleEndian.AppendUint16(b, c)
	}
	return b
}
