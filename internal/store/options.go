package store

import (
	"context"
	"fmt"
	"log/slog"
)

// Option adjusts Open.
type Option func(*options)

type options struct {
	before func(ctx context.Context, db *DB, from, to int) error
	log    *slog.Logger
}

// Logger makes the store say in log when the disk holding the database
// becomes full and when it has room again (once per change, full.go).
func Logger(log *slog.Logger) Option {
	return func(o *options) { o.log = log }
}

// BeforeMigrate makes Open call fn before it migrates an existing database
// (schema version from, at least 1) to a newer schema (version to), with
// the database open and nothing changed yet; Hearth backs the database up
// there. An error from fn fails Open and leaves the database as it was. A
// new database (version 0) or one already current does not call fn.
func BeforeMigrate(fn func(ctx context.Context, db *DB, from, to int) error) Option {
	return func(o *options) { o.before = fn }
}

func (o options) beforeMigrate(ctx context.Context, db *DB, ms []Migration) error {
	if o.before == nil || len(ms) == 0 {
		return nil
	}
	var current int
	if err := db.W.QueryRowContext(ctx, "PRAGMA user_version").Scan(&current); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	newest := ms[len(ms)-1].Version
	if current == 0 || current >= newest {
		return nil
	}
	if err := o.before(ctx, db, current, newest); err != nil {
		return fmt.Errorf("before migrating from schema version %d to %d: %w", current, newest, err)
	}
	return nil
}
