package fsops

import (
	"io/fs"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// reparseTag is the reparse tag of the item at p itself (its last name
// not followed), and whether p is a reparse point at all and could be
// looked at. The item is opened for no access, so a OneDrive file that
// is not on this PC is not fetched to answer.
func reparseTag(p string) (uint32, bool) {
	name, err := windows.UTF16PtrFromString(p)
	if err != nil {
		return 0, false
	}
	h, err := windows.CreateFile(name, 0, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil,
		windows.OPEN_EXISTING, windows.FILE_FLAG_BACKUP_SEMANTICS|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return 0, false
	}
	defer windows.CloseHandle(h)
	// FILE_ATTRIBUTE_TAG_INFO, which x/sys/windows does not declare.
	var ti struct{ FileAttributes, ReparseTag uint32 }
	if err := windows.GetFileInformationByHandleEx(h, windows.FileAttributeTagInfo, (*byte)(unsafe.Pointer(&ti)), uint32(unsafe.Sizeof(ti))); err != nil {
		return 0, false
	}
	if ti.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT == 0 {
		return 0, false
	}
	return ti.ReparseTag, true
}

// fileAttributes is the Windows file attributes a stat or a directory
// entry's info gave (no further look at the file).
func fileAttributes(info fs.FileInfo) (uint32, bool) {
	if d, ok := info.Sys().(*syscall.Win32FileAttributeData); ok {
		return d.FileAttributes, true
	}
	return 0, false
}
