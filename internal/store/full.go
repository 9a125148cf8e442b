package store

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"sync"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// A full disk: the disk holding the database has no room for a write
// (SQLITE_FULL). Every write then fails and Hearth refuses what it cannot
// record, which is right, but a person has to hear of it once, in words,
// and hear when it is over: the store notes it on each write it commits
// or fails (InTx), says it in its log once per change, and clears it by
// itself when a probe write goes through again (at most every
// probeFullEvery, after a write commits or when the Status page asks).

// IsFull reports whether err (anywhere in its chain) is SQLite saying the
// database or its disk is full (SQLITE_FULL). Such an error heals by
// itself once there is room again.
func IsFull(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_FULL
}

// DiskFull is what the store knows of the room for its writes.
type DiskFull struct {
	// Full is set from a write that failed for lack of room until a write
	// goes through again.
	Full bool
	// Since is when the first write failed.
	Since time.Time
	// Err is SQLite's own words, for Details and the log.
	Err string
}

// probeFullEvery bounds how often DiskFull tries a write to see whether
// there is room again.
const probeFullEvery = 2 * time.Second

// probeBytes is what a probe writes (and deletes in the same
// transaction): a call's records take about as much.
const probeBytes = 32 << 10

// fullState is the DB's DiskFull under its lock.
type fullState struct {
	mu        sync.Mutex
	now       DiskFull
	lastProbe time.Time
	log       *slog.Logger
}

// note records a write that failed: a full disk sets the state (logged
// once). A write that went through clears nothing by itself: near a full
// disk small writes pass while larger ones fail, so only a probe of
// probeBytes clears it (probe).
func (f *fullState) note(err error) {
	if !IsFull(err) {
		return
	}
	f.mu.Lock()
	was := f.now.Full
	if !was {
		f.now = DiskFull{Full: true, Since: time.Now(), Err: err.Error()}
	}
	log := f.log
	f.mu.Unlock()
	if !was && log != nil {
		log.Error("the disk holding Hearth's data is full: Hearth records nothing and runs no call that changes anything until there is room again (said once until it changes)", "sqlite", err.Error())
	}
}

// dueProbe reports whether the state is full and a probe is due, and if
// so counts one as made now.
func (f *fullState) dueProbe() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.now.Full || time.Since(f.lastProbe) < probeFullEvery {
		return false
	}
	f.lastProbe = time.Now()
	return true
}

// probe, when the disk was found full and no probe was made for
// probeFullEvery, writes probeBytes (and deletes them in the same
// transaction): if that commits there is room again, and the state
// clears (logged once).
func (db *DB) probe(ctx context.Context) {
	if !db.full.dueProbe() {
		return
	}
	err := db.inTx(ctx, false, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO store_probe(b) VALUES (zeroblob(?))`, probeBytes); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM store_probe`)
		return err
	})
	if err != nil {
		return
	}
	db.full.mu.Lock()
	was := db.full.now.Full
	db.full.now = DiskFull{}
	log := db.full.log
	db.full.mu.Unlock()
	if was && log != nil {
		log.Info("the disk holding Hearth's data has room again: Hearth records and runs calls again")
	}
}

// DiskFull reports whether the disk holding the database is full. While
// it is, it first probes for room (at most every probeFullEvery), so the
// answer clears by itself once room returns even when nothing else
// writes.
func (db *DB) DiskFull(ctx context.Context) DiskFull {
	db.probe(ctx)
	db.full.mu.Lock()
	defer db.full.mu.Unlock()
	return db.full.now
}

// QuietFull wraps h so that a record logging an error that is only the
// full disk (IsFull) is dropped: the store has said it once already, and
// says when it is over. Everything else passes.
func QuietFull(h slog.Handler) slog.Handler { return quietFull{h} }

type quietFull struct{ slog.Handler }

func (q quietFull) Handle(ctx context.Context, r slog.Record) error {
	full := false
	r.Attrs(func(a slog.Attr) bool {
		if err, ok := a.Value.Any().(error); ok && IsFull(err) {
			full = true
			return false
		}
		return true
	})
	if full {
		return nil
	}
	return q.Handler.Handle(ctx, r)
}

func (q quietFull) WithAttrs(as []slog.Attr) slog.Handler {
	return quietFull{q.Handler.WithAttrs(as)}
}

func (q quietFull) WithGroup(name string) slog.Handler {
	return quietFull{q.Handler.WithGroup(name)}
}
