package store

import (
	"errors"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// IsDamaged reports whether err (anywhere in its chain) is SQLite saying
// the database file is damaged: SQLITE_CORRUPT ("database disk image is
// malformed", with its extended codes) or SQLITE_NOTADB ("file is not a
// database"). Such a file does not heal by retrying; it is restored from
// a backup.
func IsDamaged(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return true
	}
	return false
}
