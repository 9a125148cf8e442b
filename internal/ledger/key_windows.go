package ledger

import "io/fs"

// checkPrivate accepts any file on Windows, where the mode bits Go reports
// do not reflect the file's ACL; the DPAPI key store is the protected one.
func checkPrivate(string, fs.FileInfo) error { return nil }
