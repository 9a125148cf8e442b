package store

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
)

// OpenReadOnly opens the existing database at file for reading only: no
// file is created, no migration runs and no pragma changes the file, so a
// diagnostic (hearth-tray doctor) can look at the database of a Hearth
// that is running in another process without disturbing it. W and R are
// the same read-only pool; a write through either fails.
func OpenReadOnly(ctx context.Context, file string) (*DB, error) {
	if _, err := os.Stat(file); err != nil {
		return nil, fmt.Errorf("open database %s: %w", file, err)
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "query_only(1)")
	// mode=ro is SQLite's own URI parameter: the driver passes "file:" names
	// to sqlite3_open_v2 as URIs.
	q.Set("mode", "ro")
	dsn := "file:" + (&url.URL{Path: file}).EscapedPath() + "?" + q.Encode()
	r, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", file, err)
	}
	r.SetMaxOpenConns(2)
	r.SetMaxIdleConns(2)
	if err := r.PingContext(ctx); err != nil {
		r.Close()
		return nil, fmt.Errorf("open database %s read-only: %w", file, err)
	}
	return &DB{W: r, R: r, Path: file}, nil
}

// NewestSchemaVersion is the version of the newest embedded migration: the
// schema version a database is migrated to at open.
func NewestSchemaVersion() (int, error) {
	ms, err := Migrations()
	if err != nil {
		return 0, err
	}
	if len(ms) == 0 {
		return 0, nil
	}
	return ms[len(ms)-1].Version, nil
}
