package doctor

import (
	"fmt"
	"os"

	"golang.org/x/sys/windows"
)

// fileAddFile is FILE_ADD_FILE: on a directory, the right to create a
// file in it (the same bit as FILE_WRITE_DATA on a file).
const fileAddFile = windows.FILE_WRITE_DATA

// dirWritable reports whether this user may create files in dir, without
// creating one: it opens the directory asking for FILE_ADD_FILE, which
// Windows grants or refuses by the directory's ACL (and refuses on
// write-protected media), sharing everything so no one else is hindered,
// and closes it again. The read-only attribute is not asked: on a
// directory Windows ignores it for file creation.
func dirWritable(dir string) error {
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return err
	}
	h, err := windows.CreateFile(p, fileAddFile,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, windows.OPEN_EXISTING, windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return fmt.Errorf("cannot create files in %s: %w", dir, err)
	}
	return windows.CloseHandle(h)
}

// secretsStoreExists: on Windows the secrets store is Credential Manager,
// which secrets.Open creates nothing for; doctor asks it whenever the data
// directory exists, as before.
func secretsStoreExists(dataDir string) bool {
	st, err := os.Stat(dataDir)
	return err == nil && st.IsDir()
}
