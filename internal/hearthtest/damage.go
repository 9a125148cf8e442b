package hearthtest

import (
	"bytes"
	"database/sql"
	"errors"
	"os"
	"testing"
)

// DamageTable damages the SQLite database file at path as a failing disk
// would: the root pages of table and of its indexes are overwritten with
// junk, the rest of the file is left as it is. The database still opens;
// reading that table fails with SQLITE_CORRUPT ("database disk image is
// malformed"). No Hearth may have the file open.
func DamageTable(t testing.TB, path, table string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	var roots []int64
	var size int64
	rows, err := db.Query("SELECT rootpage FROM sqlite_master WHERE tbl_name = ? AND rootpage > 1", table)
	if err == nil {
		for rows.Next() {
			var r int64
			if err := rows.Scan(&r); err != nil {
				t.Fatal(err)
			}
			roots = append(roots, r)
		}
		err = errors.Join(rows.Err(), rows.Close(), db.QueryRow("PRAGMA page_size").Scan(&size))
	}
	db.Close()
	if err != nil || len(roots) == 0 {
		t.Fatalf("root pages of %s in %s: %v, %v", table, path, roots, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, root := range roots {
		if _, err := f.WriteAt(bytes.Repeat([]byte{0xA5, 0x5A, 0x13, 0x37}, int(size)/4), (root-1)*size); err != nil {
			t.Fatal(err)
		}
	}
}
