// Package govern is Hearth's governance (docs/DESIGN.md, "Governance"): the e-stop latch, the
// policy mode, operator allow-rules and permits, the UNKNOWN gate, command
// ids and the journal that records every side effect in the host ledger
// before it runs. The model reaches it only through the dispatcher's
// Governor interface, task.reconcile and the e-stop latch (machine.estop,
// built in internal/control); everything an operator decides goes through
// Operator, which no tool can reach.
//
// Governance records decisions and never holds the engines it governs: an
// operator's permit decision, a permit's expiry, an e-stop or a resumed
// queue is committed here, and what it leaves to do to running or parked
// work (a Decision to release or settle, work to stop) is done by the
// caller, internal/control, which holds the engines.
//
// By responsibility: govern.go is the admission choke point and the
// operator-controlled settings; estop.go the latch, its reset and the
// queue hold; policy.go the mode; rules.go the allow-rules; permits.go the
// permit row and every statement on the permits table; decisions.go
// permit requests, the operator's approvals and denials, expiry and the
// decisions they leave to carry out; denial.go a denial's hold;
// unknowns.go open UNKNOWN outcomes and their reconciliation; journal.go
// intent, outcome, UNKNOWN and recovery; replay.go command-id replay;
// scheduled.go the named differences of a scheduled future's (a durable
// job's) runs.
package govern

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/hearth-dev/hearth/internal/callpath"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/risk"
	"github.com/hearth-dev/hearth/internal/startup"
	"github.com/hearth-dev/hearth/internal/store"
)

// Governor implements callpath.Governor.
type Governor struct {
	DB     *store.DB
	Ledger *ledger.Ledger
	// Futures reads the engine's futures (replay, recovery, the UNKNOWN
	// gate, parked work); internal/dispatch owns them.
	Futures callpath.Futures
	Log     *slog.Logger
	// DefaultMode is the config's policy mode; an operator change stored in
	// the database overrides it.
	DefaultMode string
	PermitTTL   time.Duration
	Now         func() time.Time
	// Programs extracts the programs an exec-class primitive would start,
	// keyed by primitive name; a primitive without an extractor always needs
	// a permit in ask mode.
	Programs map[string]func(json.RawMessage) []ProgramUse
	// InlineBudget is the dispatcher's inline budget: a retry of a command
	// still racing it waits that long (plus a margin) for its future.
	InlineBudget time.Duration
	// SaveMode keeps a mode the operator sets in config.json (policy.mode)
	// before it is in force; nil only where there is no config file (tests
	// of governance alone).
	SaveMode func(mode string) error
	// Rows are the risk table's rows Admit decides by: nil is the one
	// table, risk.Rows. Only a test of the engines, with primitives of its
	// own, gives risk.Rows.With(its rows).
	Rows risk.Table
	// Places is the persistence table (internal/risk); nil is this OS's
	// table from the process environment.
	Places *risk.Places
	// Writes is the allowlist of ordinary writes (internal/risk); nil is
	// this OS's from the process environment.
	Writes *risk.Writes
	// Identities tells the programs of the exec tables by what a file is
	// (internal/risk); nil is this OS's from the process environment.
	Identities *risk.Identities
	// Startup is the index of what starts by itself on this PC
	// (internal/startup): the files its entries name are persistence
	// places beside the table's.
	Startup *startup.Index

	placesOnce, writesOnce, identitiesOnce sync.Once
	// digests are the SHA-256 of the files allow-rules pin (rulepins.go).
	digests digests

	mu sync.Mutex
	// requested is signalled when a permit is requested (PermitRequested).
	requested chan struct{}
}

func (g *Governor) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

// Setting keys.
const (
	keyEStop     = "estop"
	keyQueueHeld = "queue_held"
	keyPolicy    = "policy_mode"
)

func getSetting(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, key string, v any) (bool, error) {
	var raw string
	err := q.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read setting %s: %w", key, err)
	}
	return true, json.Unmarshal([]byte(raw), v)
}

// prepared reads through statements prepared once: inside tx on the
// writer (store.DB.TxQueryRow), or on the reader pool when tx is nil.
type prepared struct {
	db *store.DB
	tx *sql.Tx
}

func (p prepared) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if p.tx != nil {
		return p.db.TxQueryRow(ctx, p.tx, query, args...)
	}
	st, err := p.db.ReadStmt(ctx, query)
	if err != nil {
		return p.db.R.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

func putSetting(ctx context.Context, tx *sql.Tx, key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO settings(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`, key, string(b))
	return err
}

// Status is the operator-controlled state, read in one query.
type Status struct {
	EStop     EStopState
	QueueHeld bool
	Mode      string
}

// Status reads the e-stop latch, the queue hold and the policy mode.
func (g *Governor) Status(ctx context.Context) (Status, error) {
	st := Status{Mode: g.DefaultMode}
	stmt, err := g.DB.ReadStmt(ctx, `SELECT key, value FROM settings WHERE key IN (?, ?, ?)`)
	if err != nil {
		return st, err
	}
	rows, err := stmt.QueryContext(ctx, keyEStop, keyQueueHeld, keyPolicy)
	if err != nil {
		return st, fmt.Errorf("read settings: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return st, err
		}
		switch k {
		case keyEStop:
			err = json.Unmarshal([]byte(v), &st.EStop)
		case keyQueueHeld:
			err = json.Unmarshal([]byte(v), &st.QueueHeld)
		case keyPolicy:
			var m string
			if err = json.Unmarshal([]byte(v), &m); err == nil && m != "" {
				st.Mode = m
			}
		}
		if err != nil {
			return st, fmt.Errorf("decode setting %s: %w", k, err)
		}
	}
	return st, rows.Err()
}

// Admit implements callpath.Governor: the risk table (internal/risk)
// decides what the mode does with the call's case; the e-stop and the
// UNKNOWN gate refuse every call that is not a read. An attempt of a
// scheduled future has the differences scheduled.go names.
func (g *Governor) Admit(ctx context.Context, a *callpath.Admission) error {
	if kind, ok := g.rows().KindOf(a.Spec.Name()); ok && (kind == risk.KindRead || kind == risk.KindControl || kind == risk.KindSeveral) {
		// These run in every mode and under the e-stop (a call several
		// submits is admitted on its own).
		return nil
	}
	st, err := g.Status(ctx)
	if err != nil {
		return err
	}
	if st.EStop.Latched {
		return g.refuseUnderEStop(ctx, a, st.EStop.Reason)
	}
	mode := st.Mode
	c, err := g.classify(ctx, mode, a)
	if err != nil {
		return err
	}
	verdict := c.Verdict(mode)
	if verdict == risk.Refused {
		if mode == config.ModeReadOnly {
			return primitive.Blocked("read_only", "policy mode is read-only; %s is refused (it would %s)", a.Spec.Name(), a.Said)
		}
		return primitive.Blocked("refused", "policy mode %s refuses %s (it would %s)", mode, a.Spec.Name(), a.Said)
	}
	// Request-scoped (anonymous) calls share one gate: a client cannot step
	// around an open UNKNOWN by dropping its conversation id.
	siblingsOf := ""
	if a.Scheduled {
		siblingsOf = a.Parent
	}
	if open, err := g.openUnknown(ctx, a.Route, siblingsOf); err != nil {
		return err
	} else if open != "" {
		return primitive.Blocked("unknown_open", "command %s has an UNKNOWN outcome; re-read the state it may have changed, then call task.reconcile {id: %q, observed}", open, open).
			WithDetails(map[string]any{"command_id": open})
	}
	a.Flagged = c.Flagged && verdict == risk.Runs
	if a.Scheduled && !a.Approved {
		if a.Approved, err = g.scheduledApproved(ctx, a); err != nil {
			return err
		}
	}
	if a.Approved || verdict == risk.Runs {
		return nil
	}
	if err := g.deniedRepeat(ctx, a); err != nil {
		return err
	}
	return callpath.ErrPermitRequired
}

// openUnknown returns the oldest open UNKNOWN of route's gate, or "" when
// it is open. An UNKNOWN of a scheduled future queued by siblingsOf (a
// sibling of the call's own future: the command that queued them covers
// both) does not close the gate for it; the engine says which futures
// those are. Open UNKNOWNs are rare, so the usual answer is one read
// through the partial index of open ones.
func (g *Governor) openUnknown(ctx context.Context, route, siblingsOf string) (string, error) {
	cond, arg := primitive.RouteMatch("route", route)
	st, err := g.DB.ReadStmt(ctx, `SELECT command_id FROM unknowns WHERE `+cond+` AND reconciled_at IS NULL ORDER BY created_at`)
	if err != nil {
		return "", err
	}
	rows, err := st.QueryContext(ctx, arg)
	ids, err := store.Collect(rows, err, func(r *sql.Rows) (id string, err error) { return id, r.Scan(&id) })
	if err != nil {
		return "", fmt.Errorf("read unknown outcomes: %w", err)
	}
	for _, id := range ids {
		f, ok, err := g.Futures.Future(ctx, id)
		if err != nil {
			return "", fmt.Errorf("read unknown outcomes: %w", err)
		}
		if ok && f.Parent.Valid && f.Parent.String == siblingsOf {
			continue
		}
		return id, nil
	}
	return "", nil
}
