package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

func TestOpenIsWALAndMigrated(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var mode string
	if err := db.R.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal mode %q %v", mode, err)
	}
	var fk int
	if err := db.W.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk); err != nil || fk != 1 {
		t.Fatalf("foreign_keys %d %v", fk, err)
	}
	ms, err := Migrations()
	if err != nil {
		t.Fatal(err)
	}
	v, err := db.SchemaVersion(ctx)
	if err != nil || v != ms[len(ms)-1].Version {
		t.Fatalf("schema version %d, want %d (%v)", v, ms[len(ms)-1].Version, err)
	}
}

// schema dumps the database's schema, sorted, for comparison.
func schema(t *testing.T, db *DB) string {
	rows, err := db.R.Query(`SELECT type, name, COALESCE(sql, '') FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var typ, name, s string
		if err := rows.Scan(&typ, &name, &s); err != nil {
			t.Fatal(err)
		}
		out = append(out, typ+" "+name+" "+strings.Join(strings.Fields(s), " "))
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// TestMigrateFromEveryOldVersion migrates a database frozen at each older
// schema version to the newest and compares it with a fresh one; opening
// twice is a no-op.
func TestMigrateFromEveryOldVersion(t *testing.T) {
	ctx := context.Background()
	ms, err := Migrations()
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := Open(ctx, filepath.Join(t.TempDir(), "fresh.db"))
	if err != nil {
		t.Fatal(err)
	}
	want := schema(t, fresh)
	fresh.Close()
	for old := 1; old < len(ms); old++ {
		path := filepath.Join(t.TempDir(), "old.db")
		w, err := openPool(path, 1)
		if err != nil {
			t.Fatal(err)
		}
		r, _ := openPool(path, 1)
		frozen := &DB{W: w, R: r, Path: path}
		if err := frozen.applyMigrations(ctx, ms[:old]); err != nil {
			t.Fatalf("apply first %d: %v", old, err)
		}
		frozen.Close()
		for range 2 {
			db, err := Open(ctx, path)
			if err != nil {
				t.Fatalf("migrate from %d: %v", old, err)
			}
			if got := schema(t, db); got != want {
				t.Fatalf("schema migrated from %d differs:\n%s\nwant:\n%s", old, got, want)
			}
			db.Close()
		}
	}
}

func TestInTxRollsBack(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.InTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.Exec(`INSERT INTO cursors(route) VALUES ('r')`); err != nil {
			return err
		}
		return sql.ErrNoRows
	})
	if err == nil {
		t.Fatal("want the function's error")
	}
	var n int
	db.R.QueryRow(`SELECT count(*) FROM cursors`).Scan(&n)
	if n != 0 {
		t.Fatalf("rolled-back row visible")
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "h.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	db.W.Exec(`PRAGMA user_version = 999`)
	db.Close()
	if _, err := Open(ctx, path); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("want refusal of a newer schema, got %v", err)
	}
}

func TestQueryPlan(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	plan, err := db.QueryPlan(ctx, `SELECT id FROM futures WHERE command_id = ?`, "cmd")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(plan, "; "); !strings.Contains(got, "SEARCH futures USING INDEX") {
		t.Fatalf("plan %q: want a search through an index", got)
	}
	if _, err := db.QueryPlan(ctx, `SELECT nope FROM nowhere`); err == nil {
		t.Fatal("a bad query must fail")
	}
}
