// Package storetest builds databases as an earlier Hearth left them, for
// tests of the migrations that carry them forward; checks that an owner's
// queries read through indexes; makes a database's disk look full; and
// names what the owners' fixture packages write through (Execer).
package storetest

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"testing"

	"github.com/hearth-dev/hearth/internal/store"
)

// DB is one connection to a database built by AtVersion.
type DB struct {
	*sql.DB
	t testing.TB
}

// AtVersion creates the database file path with the schema of the
// migrations up to version and returns one connection to it (WAL, foreign
// keys on, as Hearth opens it); the caller closes it before opening the
// file with store.Open or app.Open.
func AtVersion(t testing.TB, path string, version int) *DB {
	t.Helper()
	ms, err := store.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?_pragma=journal_mode(WAL)&_pragma=foreign_keys(ON)")
	if err != nil {
		t.Fatal(err)
	}
	raw.SetMaxOpenConns(1)
	// Closed again at the end of the test, in case it fails before the
	// caller closes it (a second Close does nothing).
	t.Cleanup(func() { raw.Close() })
	db := &DB{DB: raw, t: t}
	for _, m := range ms {
		if m.Version <= version {
			db.MustExec(m.SQL)
		}
	}
	db.MustExec(fmt.Sprintf(`PRAGMA user_version = %d`, version))
	return db
}

// MustExec runs q, failing the test on an error.
func (db *DB) MustExec(q string, args ...any) {
	db.t.Helper()
	if _, err := db.ExecContext(context.Background(), q, args...); err != nil {
		db.t.Fatalf("%s: %v", q, err)
	}
}

// NullText is s for a query's argument, or NULL when s is empty (a
// fixture's field left unset).
func NullText(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// NullTime is the milliseconds ms for a query's argument, or NULL when it
// is 0 (a time not reached yet).
func NullTime(ms int64) any {
	if ms == 0 {
		return nil
	}
	return ms
}
