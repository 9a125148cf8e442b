package fsops

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/hearth-dev/hearth/internal/store"
)

// CheckReceiptChain checks what a crash (and the Recover after it) must
// leave behind in the receipts of db: no receipt is still pending; for each
// of paths, its committed receipts in order form a chain (each starts at
// the hash the previous ended at) whose last link ends at the file's
// current content; every file in spillDir is the prior copy of exactly one
// committed receipt; and no receipt refers to a missing spill file. It
// returns how many receipts refer to a spill file, so a caller can make
// sure spilling was exercised. It is exported (from a test file) for the
// crash test against a real serve in package fsops_test.
func CheckReceiptChain(t testing.TB, db *store.DB, spillDir string, paths []string) (spilled int) {
	t.Helper()
	var pending int
	if err := db.R.QueryRow(`SELECT COUNT(*) FROM fs_receipts WHERE state = 'pending'`).Scan(&pending); err != nil {
		t.Fatal(err)
	}
	if pending != 0 {
		t.Fatalf("%d receipts still pending after Recover", pending)
	}
	for _, p := range paths {
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := db.R.Query(`SELECT id, state, pre_sha256, post_sha256 FROM fs_receipts
			WHERE path = ? ORDER BY rowid`, p)
		if err != nil {
			t.Fatal(err)
		}
		var last sql.NullString
		n := 0
		for rows.Next() {
			var id, state string
			var pre, post sql.NullString
			if err := rows.Scan(&id, &state, &pre, &post); err != nil {
				t.Fatal(err)
			}
			if state == "void" {
				continue
			}
			if n > 0 && pre != last {
				t.Fatalf("%s: receipt %s starts at %q, but the previous ended at %q", p, id, pre.String, last.String)
			}
			last = post
			n++
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		if want := hashBytes(got); n == 0 || last.String != want {
			t.Fatalf("%s: %d committed receipts, the last ends at %q, the file is %q", p, n, last.String, want)
		}
	}
	spills, err := os.ReadDir(spillDir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, s := range spills {
		var n int
		if err := db.R.QueryRow(`SELECT COUNT(*) FROM fs_receipts WHERE prior_file = ? AND state = 'committed'`, s.Name()).Scan(&n); err != nil || n != 1 {
			t.Fatalf("spill file %s is referenced by %d committed receipts (%v)", s.Name(), n, err)
		}
	}
	rows, err := db.R.Query(`SELECT prior_file FROM fs_receipts WHERE prior_file IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var missing []string
	for rows.Next() {
		var f string
		if err := rows.Scan(&f); err != nil {
			t.Fatal(err)
		}
		spilled++
		if _, err := os.Stat(filepath.Join(spillDir, f)); err != nil {
			missing = append(missing, f)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(missing) > 0 {
		t.Fatalf("%d receipts refer to missing spill files, among them %v", len(missing), missing[:min(len(missing), 3)])
	}
	return spilled
}
