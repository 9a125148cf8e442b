// Package store opens Hearth's single SQLite database: one write connection,
// a pool of readers, WAL journaling verified at open, and numbered embedded
// migrations applied in one transaction.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// DB is Hearth's database. Writes go through W, a pool of exactly one
// connection, so that SQLite's single-writer rule is enforced by Go rather
// than discovered as SQLITE_BUSY; reads use R.
type DB struct {
	W    *sql.DB
	R    *sql.DB
	Path string

	stmtMu sync.Mutex
	stmts  map[string]*sql.Stmt
	// txStmts are writes prepared on the writer for use inside InTx
	// (TxExec); wanted are those seen in a transaction and not prepared
	// yet: the next InTx prepares them before it begins.
	txStmts map[string]*sql.Stmt
	wanted  map[string]bool

	// commits counts the transactions InTx has committed (Commits).
	commits atomic.Uint64

	// full is whether the disk is full (full.go).
	full fullState
}

// Commits is how many write transactions InTx has committed on this
// handle. It is raised after each commit has returned: a reader that saw
// the count unchanged since before its read began has missed no commit of
// an InTx of this process (another process's writes are not counted).
func (db *DB) Commits() uint64 { return db.commits.Load() }

// ReadStmt returns a prepared statement on the reader pool for query,
// prepared once and reused: hot read paths (every call's governance check
// and mailbox look-up) then skip SQLite's parse and plan.
func (db *DB) ReadStmt(ctx context.Context, query string) (*sql.Stmt, error) {
	db.stmtMu.Lock()
	defer db.stmtMu.Unlock()
	if st, ok := db.stmts[query]; ok {
		return st, nil
	}
	st, err := db.R.PrepareContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	if db.stmts == nil {
		db.stmts = map[string]*sql.Stmt{}
	}
	db.stmts[query] = st
	return st, nil
}

// NewerError is a database a newer Hearth wrote (its schema is newer than
// any this program knows): it is refused rather than read wrongly, for
// instance after going back to an older program by hand.
type NewerError struct {
	Schema, Known int
}

func (e *NewerError) Error() string {
	return fmt.Sprintf("this database was written by a newer version of Hearth (database schema %d; this program knows up to %d), so this older program does not open it: install the newer version again, or restore a backup made before it (hearth-tray backup --list, then hearth-tray restore)", e.Schema, e.Known)
}

// Open opens (creating if needed) the database at file and migrates it to
// the newest schema; BeforeMigrate runs a hook first when that changes it.
func Open(ctx context.Context, file string, opts ...Option) (*DB, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	w, err := openPool(file, 1)
	if err != nil {
		return nil, err
	}
	var mode string
	if err := w.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		w.Close()
		return nil, fmt.Errorf("open database %s: read journal mode: %w", file, err)
	}
	if !strings.EqualFold(mode, "wal") {
		w.Close()
		return nil, fmt.Errorf("open database %s: journal mode is %q, want wal", file, mode)
	}
	readers := max(4, runtime.NumCPU())
	r, err := openPool(file, readers)
	if err != nil {
		w.Close()
		return nil, err
	}
	db := &DB{W: w, R: r, Path: file}
	db.full.log = o.log
	if err := db.migrate(ctx, o); err != nil {
		db.Close()
		return nil, fmt.Errorf("migrate database %s: %w", file, err)
	}
	return db, nil
}

func openPool(file string, conns int) (*sql.DB, error) {
	q := url.Values{}
	// busy_timeout first: the later pragmas may themselves need to wait.
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(ON)")
	q.Set("_txlock", "immediate")
	dsn := "file:" + (&url.URL{Path: file}).EscapedPath() + "?" + q.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", file, err)
	}
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	db.SetConnMaxLifetime(0)
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, fmt.Errorf("open database %s: %w", file, err)
	}
	return db, nil
}

// Close closes the prepared statements and both pools.
func (db *DB) Close() error {
	db.stmtMu.Lock()
	var errs []error
	for _, st := range db.stmts {
		errs = append(errs, st.Close())
	}
	db.stmts = nil
	for _, st := range db.txStmts {
		errs = append(errs, st.Close())
	}
	db.txStmts = nil
	db.stmtMu.Unlock()
	return errors.Join(append(errs, db.R.Close(), db.W.Close())...)
}

// InTx runs fn in one write transaction, committing when fn returns nil and
// rolling back otherwise.
func (db *DB) InTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return db.inTx(ctx, true, fn)
}

// inTx is InTx; probe says whether a commit made while the disk was found
// full looks for room again (full.go), which the probe's own transaction
// does not.
func (db *DB) inTx(ctx context.Context, probe bool, fn func(tx *sql.Tx) error) error {
	db.prepareWanted(ctx)
	tx, err := db.W.BeginTx(ctx, nil)
	if err != nil {
		db.full.note(err)
		return fmt.Errorf("begin transaction: %w", err)
	}
	if err := fn(tx); err != nil {
		db.full.note(err)
		if IsFull(err) {
			// SQLite has rolled the transaction back already.
			_ = tx.Rollback()
			return err
		}
		return errors.Join(err, tx.Rollback())
	}
	err = tx.Commit()
	// Counted even when Commit fails: a failed commit may still have
	// committed, and a count too many only costs a reader a read.
	db.commits.Add(1)
	db.full.note(err)
	if err != nil {
		return fmt.Errorf("commit transaction: %w", err)
	}
	if probe {
		db.probe(ctx)
	}
	return nil
}

// Collect reads every row of a query (rows, err as QueryContext returns
// them) with scan, closing the rows before it returns, so the caller may
// write afterwards on the one write connection.
func Collect[T any](rows *sql.Rows, err error, scan func(*sql.Rows) (T, error)) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// EachText passes to add every column of every row of a query (rows, err
// as QueryContext returns them), each read as text, closing the rows
// before it returns. Retention reads the live rows' text with it.
func EachText(rows *sql.Rows, err error, add func(text string)) error {
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	texts := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range texts {
		ptrs[i] = &texts[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		for _, t := range texts {
			add(t.String)
		}
	}
	return rows.Err()
}

// maxTxStmts bounds how many distinct statements TxExec keeps prepared
// (a query built with a varying number of placeholders is one each).
const maxTxStmts = 256

// TxExec runs query inside tx (a transaction of InTx) as tx.ExecContext
// would, through a statement prepared once on the writer: a hot write is
// parsed once per process rather than once per call. A query is prepared
// by the first InTx after the one that first ran it (a statement cannot be
// prepared on the writer while a transaction holds its one connection).
func (db *DB) TxExec(ctx context.Context, tx *sql.Tx, query string, args ...any) (sql.Result, error) {
	if st := db.txStmt(ctx, tx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return tx.ExecContext(ctx, query, args...)
}

// TxQueryRow is TxExec for a query of one row. Unlike tx.QueryRowContext,
// every use of one query text shares one prepared statement: scan (or
// close) a row of it before the same text runs again in the transaction.
func (db *DB) TxQueryRow(ctx context.Context, tx *sql.Tx, query string, args ...any) *sql.Row {
	if st := db.txStmt(ctx, tx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return tx.QueryRowContext(ctx, query, args...)
}

// TxQuery is TxExec for a query of rows. Unlike tx.QueryContext, every
// use of one query text shares one prepared statement: close its rows
// before the same text runs again in the transaction (a nested run would
// reset the open cursor).
func (db *DB) TxQuery(ctx context.Context, tx *sql.Tx, query string, args ...any) (*sql.Rows, error) {
	if st := db.txStmt(ctx, tx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return tx.QueryContext(ctx, query, args...)
}

// txStmt returns query's writer statement bound to tx, or nil (and marks
// it wanted) when it is not prepared yet.
func (db *DB) txStmt(ctx context.Context, tx *sql.Tx, query string) *sql.Stmt {
	db.stmtMu.Lock()
	st, ok := db.txStmts[query]
	if !ok && len(db.txStmts)+len(db.wanted) < maxTxStmts {
		if db.wanted == nil {
			db.wanted = map[string]bool{}
		}
		db.wanted[query] = true
	}
	db.stmtMu.Unlock()
	if !ok {
		return nil
	}
	return tx.StmtContext(ctx, st)
}

// prepareWanted prepares on the writer the statements transactions have
// asked for, before a transaction takes its connection. A statement that
// does not prepare stays unprepared: its callers keep executing it
// directly, which reports the error where it belongs.
func (db *DB) prepareWanted(ctx context.Context) {
	db.stmtMu.Lock()
	if len(db.wanted) == 0 {
		db.stmtMu.Unlock()
		return
	}
	qs := make([]string, 0, len(db.wanted))
	for q := range db.wanted {
		qs = append(qs, q)
	}
	db.stmtMu.Unlock()
	for _, q := range qs {
		st, err := db.W.PrepareContext(ctx, q)
		db.stmtMu.Lock()
		delete(db.wanted, q)
		if err == nil && db.txStmts[q] == nil {
			if db.txStmts == nil {
				db.txStmts = map[string]*sql.Stmt{}
			}
			db.txStmts[q], st = st, nil
		}
		db.stmtMu.Unlock()
		if st != nil {
			st.Close() // prepared twice by concurrent transactions
		}
	}
}

// Migration is one numbered schema step.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Migrations returns the embedded migrations in order. File names are
// NNNN_name.sql; numbers must be unique and increasing.
func Migrations() ([]Migration, error) {
	entries, err := fs.ReadDir(migrationFS, "migrations")
	if err != nil {
		return nil, err
	}
	var ms []Migration
	for _, e := range entries {
		name := e.Name()
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || !strings.HasSuffix(name, ".sql") {
			return nil, fmt.Errorf("migration file %s: name must be NNNN_name.sql", name)
		}
		body, err := migrationFS.ReadFile(path.Join("migrations", name))
		if err != nil {
			return nil, err
		}
		ms = append(ms, Migration{Version: v, Name: name, SQL: string(body)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	for i := 1; i < len(ms); i++ {
		if ms[i].Version == ms[i-1].Version {
			return nil, fmt.Errorf("migrations %s and %s share version %d", ms[i-1].Name, ms[i].Name, ms[i].Version)
		}
	}
	return ms, nil
}

func (db *DB) migrate(ctx context.Context, o options) error {
	ms, err := Migrations()
	if err != nil {
		return err
	}
	if err := o.beforeMigrate(ctx, db, ms); err != nil {
		return err
	}
	return db.applyMigrations(ctx, ms)
}

func (db *DB) applyMigrations(ctx context.Context, ms []Migration) error {
	return db.InTx(ctx, func(tx *sql.Tx) error {
		var current int
		if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&current); err != nil {
			return fmt.Errorf("read schema version: %w", err)
		}
		newest := 0
		if len(ms) > 0 {
			newest = ms[len(ms)-1].Version
		}
		if current > newest {
			return &NewerError{Schema: current, Known: newest}
		}
		for _, m := range ms {
			if m.Version <= current {
				continue
			}
			if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
				return fmt.Errorf("apply %s: %w", m.Name, err)
			}
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", newest)); err != nil {
			return fmt.Errorf("write schema version: %w", err)
		}
		return nil
	})
}

// SchemaVersion reports the applied migration version.
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := db.R.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v)
	return v, err
}

// QueryPlan returns SQLite's plan for query (EXPLAIN QUERY PLAN), one
// detail line per step, such as "SEARCH futures USING INDEX
// futures_command (command_id=?)". Tests use it to hold hot queries to
// their indexes.
func (db *DB) QueryPlan(ctx context.Context, query string, args ...any) ([]string, error) {
	rows, err := db.R.QueryContext(ctx, "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			return nil, err
		}
		plan = append(plan, detail)
	}
	return plan, rows.Err()
}
