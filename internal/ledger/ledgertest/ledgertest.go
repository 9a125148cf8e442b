// Package ledgertest reads the ledger's tables for other packages' tests,
// so that they check what was journaled without naming the ledger's
// tables or columns (the ledger owns them: docs/ARCHITECTURE.md, "Who
// owns which table").
package ledgertest

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/store"
)

// Count returns how many ledger entries db holds of the given kinds (of
// every kind when none is given), failing the test on an error.
func Count(t testing.TB, db *store.DB, kinds ...string) int {
	t.Helper()
	q := `SELECT COUNT(*) FROM ledger_entries`
	args := make([]any, 0, len(kinds))
	if len(kinds) > 0 {
		q += ` WHERE kind IN (?` + strings.Repeat(`, ?`, len(kinds)-1) + `)`
		for _, k := range kinds {
			args = append(args, k)
		}
	}
	var n int
	if err := db.R.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatalf("count the ledger's entries of kinds %v: %v", kinds, err)
	}
	return n
}

// Tamper does what someone with write access to the database file could:
// it drops the ledger's append-only trigger and replaces old with new in
// the body of every entry that holds old. It returns how many entries it
// changed, failing the test on an error or when none holds old.
func Tamper(t testing.TB, db *store.DB, old, new string) int {
	t.Helper()
	var n int64
	err := db.InTx(context.Background(), func(tx *sql.Tx) error {
		if _, err := tx.Exec(`DROP TRIGGER ledger_entries_no_update`); err != nil {
			return err
		}
		res, err := tx.Exec(`UPDATE ledger_entries SET body = CAST(replace(CAST(body AS TEXT), ?, ?) AS BLOB) WHERE instr(CAST(body AS TEXT), ?) > 0`, old, new, old)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		t.Fatalf("tamper with the ledger: %v", err)
	}
	if n == 0 {
		t.Fatalf("tamper with the ledger: no entry holds %q", old)
	}
	return int(n)
}

// Outcome returns the data of the last outcome entry journaled for
// command id other than in_flight (nil when there is none), failing the
// test on an error.
func Outcome(t testing.TB, db *store.DB, id string) map[string]any {
	t.Helper()
	var raw sql.NullString
	err := db.R.QueryRow(`SELECT json_extract(CAST(body AS TEXT), '$.data') FROM ledger_entries WHERE kind = 'outcome'
		AND json_extract(CAST(body AS TEXT), '$.data.command_id') = ? AND json_extract(CAST(body AS TEXT), '$.data.outcome') != 'in_flight'
		ORDER BY seq DESC LIMIT 1`, id).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		t.Fatalf("read the outcome of command %s: %v", id, err)
	}
	var data map[string]any
	if err := json.Unmarshal([]byte(raw.String), &data); err != nil {
		t.Fatalf("read the outcome of command %s: %v", id, err)
	}
	return data
}

// Entry is one journaled entry: its place in the ledger, its kind and its
// data.
type Entry struct {
	Seq  int64
	Kind string
	Data map[string]any
}

// OfCommand returns the intent and outcome entries journaled for command
// id, in the ledger's order, failing the test on an error.
func OfCommand(t testing.TB, db *store.DB, id string) []Entry {
	t.Helper()
	rows, err := db.R.Query(`SELECT seq, kind, json_extract(CAST(body AS TEXT), '$.data') FROM ledger_entries
		WHERE kind IN ('intent', 'outcome') AND json_extract(CAST(body AS TEXT), '$.data.command_id') = ? ORDER BY seq`, id)
	if err != nil {
		t.Fatalf("read the entries of command %s: %v", id, err)
	}
	defer rows.Close()
	var out []Entry
	for rows.Next() {
		var e Entry
		var data string
		if err := rows.Scan(&e.Seq, &e.Kind, &data); err != nil {
			t.Fatalf("read the entries of command %s: %v", id, err)
		}
		if err := json.Unmarshal([]byte(data), &e.Data); err != nil {
			t.Fatalf("read the entries of command %s: %v", id, err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("read the entries of command %s: %v", id, err)
	}
	return out
}
