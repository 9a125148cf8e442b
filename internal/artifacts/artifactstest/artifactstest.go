// Package artifactstest writes the artifact index for other packages'
// tests, so that they set up a history of artifacts without naming the
// artifacts table or its columns (internal/artifacts owns it:
// docs/ARCHITECTURE.md, "Who owns which table").
package artifactstest

import (
	"context"
	"testing"

	"github.com/hearth-dev/hearth/internal/store"
	"github.com/hearth-dev/hearth/internal/store/storetest"
)

// Artifact is an artifact's row, as Insert writes it. Its blob is the
// caller's to write (or not: retention tolerates a missing one).
type Artifact struct {
	ID, Route, Name, Mime string
	Size                  int64
	// File is the blob's name in the artifacts directory.
	File string
	// Source is the primitive or future that produced it.
	Source    string
	CreatedAt int64 // unix milliseconds
}

// Insert writes the rows of as, as Store.Put does after writing a blob,
// failing the test on an error. Many rows are best written through a
// transaction (ex a *sql.Tx).
func Insert(t testing.TB, ex storetest.Execer, as ...Artifact) {
	t.Helper()
	ctx := context.Background()
	st, err := ex.PrepareContext(ctx, `INSERT INTO artifacts(id, route, name, mime, size, sha256, file, source, created_at) VALUES (?, ?, ?, ?, ?, '', ?, ?, ?)`)
	if err != nil {
		t.Fatalf("insert artifacts: %v", err)
	}
	defer st.Close()
	for _, a := range as {
		if _, err := st.ExecContext(ctx, a.ID, a.Route, a.Name, a.Mime, a.Size, a.File, a.Source, a.CreatedAt); err != nil {
			t.Fatalf("insert artifact %s: %v", a.ID, err)
		}
	}
}

// Count returns how many artifacts db indexes.
func Count(t testing.TB, db *store.DB) int {
	t.Helper()
	var n int
	if err := db.R.QueryRow(`SELECT COUNT(*) FROM artifacts`).Scan(&n); err != nil {
		t.Fatalf("count the artifacts: %v", err)
	}
	return n
}
