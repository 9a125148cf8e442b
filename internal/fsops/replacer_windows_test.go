package fsops

import (
	"testing"

	"golang.org/x/sys/windows"
)

// openWithoutShareDelete holds path open the way many Windows programs do
// (an editor, an indexer, an antivirus scan): without FILE_SHARE_DELETE,
// so replacing or removing the file fails until the handle is closed.
func openWithoutShareDelete(t *testing.T, path string) windows.Handle {
	t.Helper()
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		t.Fatal(err)
	}
	h, err := windows.CreateFile(p, windows.GENERIC_READ, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE, nil, windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
