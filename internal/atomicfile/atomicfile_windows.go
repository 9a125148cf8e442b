package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/windows"
)

// replaceFlags makes MoveFileEx replace an existing target and return only
// once the move has been flushed to disk. Without MOVEFILE_WRITE_THROUGH
// (os.Rename passes only MOVEFILE_REPLACE_EXISTING) the rename may still
// sit in the cache when Write reports success, and directories cannot
// be synced on Windows to make up for it (see syncDir).
const replaceFlags = windows.MOVEFILE_REPLACE_EXISTING | windows.MOVEFILE_WRITE_THROUGH

// TransientErrnos are the Windows errors a rename or delete returns while
// another process has the file open: MoveFileEx and DeleteFile report
// ERROR_ACCESS_DENIED for a target held open without FILE_SHARE_DELETE,
// and ERROR_SHARING_VIOLATION or ERROR_LOCK_VIOLATION for other holders.
func TransientErrnos() []syscall.Errno {
	return []syscall.Errno{windows.ERROR_ACCESS_DENIED, windows.ERROR_SHARING_VIOLATION, windows.ERROR_LOCK_VIOLATION}
}

// replaceFile renames oldpath over newpath with MoveFileEx(replaceFlags).
// Its error is an *os.LinkError wrapping the Windows error, as os.Rename's.
func replaceFile(oldpath, newpath string) error {
	from, err := windows.UTF16PtrFromString(ExtendedLength(oldpath))
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	to, err := windows.UTF16PtrFromString(ExtendedLength(newpath))
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	if err := windows.MoveFileEx(from, to, replaceFlags); err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	return nil
}

// ExtendedLength gives a long absolute path the \\?\ prefix (\\?\UNC\ for
// a share), so MoveFileEx accepts it past MAX_PATH as the os package's
// calls do (the fs tool's own Windows calls use it too). Shorter paths, relative ones and paths already in \\?\ or
// \\.\ form are returned unchanged.
func ExtendedLength(p string) string {
	const maxDirPath = 248 // MAX_PATH less room for an 8.3 file name
	if len(p) < maxDirPath || strings.HasPrefix(p, `\\?\`) || strings.HasPrefix(p, `\\.\`) || !filepath.IsAbs(p) {
		return p
	}
	if rest, ok := strings.CutPrefix(filepath.Clean(p), `\\`); ok {
		// A share (\\server\share\…) takes the UNC form, as the os package
		// gives it.
		return `\\?\UNC\` + rest
	}
	return `\\?\` + filepath.Clean(p)
}

// syncDir does nothing on Windows: directories cannot be opened for
// FlushFileBuffers, so durability of the replace comes from
// MOVEFILE_WRITE_THROUGH (replaceFile) and NTFS journaling the rename.
func syncDir(string) error { return nil }
