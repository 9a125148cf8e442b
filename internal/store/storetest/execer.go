package storetest

import (
	"context"
	"database/sql"
)

// Execer is where the owners' fixture packages (dispatchtest, governtest,
// …) write rows for another package's test: a database's write pool
// (store.DB.W), a transaction (to write many rows in one commit, as a
// benchmark's history wants), or a database an earlier Hearth left
// (AtVersion), so that the fixture's SQL stays with the table's owner
// whatever the test writes through.
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
}

var (
	_ Execer = (*sql.DB)(nil)
	_ Execer = (*sql.Tx)(nil)
	_ Execer = (*DB)(nil)
)
