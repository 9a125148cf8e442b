package app

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/store"

	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/jobs"
	"github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/internal/machine"
	"github.com/hearth-dev/hearth/internal/secrets"
)

// PermitTTL is how long a permit waits for the operator (DESIGN §5).
const PermitTTL = 15 * time.Minute

// openLedger opens the host ledger with its signing key, generated on
// first run and kept DPAPI-protected on Windows (0600 file elsewhere).
func (a *App) openLedger() error {
	ks := secrets.ProtectedFileKeyStore{Path: filepath.Join(a.DataDir, "ledger.key")}
	skey, _, err := ledger.LoadOrCreateKey(ks)
	if err != nil {
		return fmt.Errorf("ledger signing key: %w", err)
	}
	l, err := ledger.Open(a.DB, skey)
	if err != nil {
		return err
	}
	a.Ledger = l
	return nil
}

// programsOf tells governance which programs an exec-class call would
// start, for allow-rule matching.
func programsOf() map[string]func(json.RawMessage) []govern.ProgramUse {
	one := func(in machine.ExecInput) govern.ProgramUse {
		return govern.ProgramUse{Command: in.Command, Cwd: in.Cwd, EnvKeys: slices.Collect(maps.Keys(in.Env))}
	}
	return map[string]func(json.RawMessage) []govern.ProgramUse{
		"machine.exec": func(raw json.RawMessage) []govern.ProgramUse {
			var in machine.ExecInput
			if json.Unmarshal(raw, &in) != nil {
				return nil
			}
			return []govern.ProgramUse{one(in)}
		},
		"machine.batch": func(raw json.RawMessage) []govern.ProgramUse {
			var in struct {
				Commands []machine.ExecInput `json:"commands"`
			}
			if json.Unmarshal(raw, &in) != nil {
				return nil
			}
			var out []govern.ProgramUse
			for _, c := range in.Commands {
				out = append(out, one(c))
			}
			return out
		},
		"task.submit": func(raw json.RawMessage) []govern.ProgramUse {
			var in struct {
				Job  *jobs.JobInput  `json:"job"`
				Jobs []jobs.JobInput `json:"jobs"`
			}
			if json.Unmarshal(raw, &in) != nil {
				return nil
			}
			var out []govern.ProgramUse
			if in.Job != nil {
				out = append(out, govern.ProgramUse{Command: in.Job.Command, Cwd: in.Job.Cwd, EnvKeys: slices.Collect(maps.Keys(in.Job.Env))})
			}
			for _, j := range in.Jobs {
				out = append(out, govern.ProgramUse{Command: j.Command, Cwd: j.Cwd, EnvKeys: slices.Collect(maps.Keys(j.Env))})
			}
			return out
		},
	}
}

// newGovernor builds the governor; hooks are connected once the
// dispatcher and queue exist.
func (a *App) newGovernor() *govern.Governor {
	return &govern.Governor{
		DB: a.DB, Ledger: a.Ledger, Log: a.Log,
		DefaultMode:  a.Config.Policy.Mode,
		PermitTTL:    PermitTTL,
		Programs:     programsOf(),
		InlineBudget: time.Duration(a.Config.DispatchInlineBudgetMS) * time.Millisecond,
	}
}

func (a *App) connectGovernor() {
	g := a.Gov
	// What the governor reaches, all here: the parked work an operator's
	// permit decision releases or settles, and what an e-stop stops and a
	// resume restarts.
	g.Futures, g.Jobs = a.Dispatcher, a.Jobs
	g.OnEStop = []func(){
		func() { a.Jobs.Hold(estopJobReason) },
		func() { a.Dispatcher.CancelRunning(dispatch.ErrEStop) },
	}
	g.OnQueueResume = []func(){a.Jobs.Resume}
	a.Operator = &govern.Operator{G: g}
}

// governanceStatus is the governance part of host_info.
func (a *App) governanceStatus(ctx context.Context) map[string]any {
	st, err := a.Gov.Status(ctx)
	out := map[string]any{"policy_mode": st.Mode, "estop": st.EStop.Latched, "queue_held": st.QueueHeld}
	if err != nil {
		out["governance_error"] = "could not read the governance state"
		a.Log.Error("read governance state", "err", err)
	}
	if st.EStop.Latched {
		out["estop_reason"] = st.EStop.Reason
	}
	return out
}

// Offline is the governance side of Hearth opened without serving: for the
// operator's CLI (safety reset, ledger export/verify) while serve may be
// running in another process. SQLite serializes the two writers, and the
// running serve reads the e-stop latch from the database on every check.
type Offline struct {
	DB       *store.DB
	Ledger   *ledger.Ledger
	Gov      *govern.Governor
	Operator *govern.Operator
}

// OpenOffline opens the database, ledger and governor of dataDir.
func OpenOffline(ctx context.Context, dataDir, configPath string) (*Offline, error) {
	cfg, err := config.Load(configPath)
	if err != nil {
		return nil, err
	}
	db, err := store.Open(ctx, filepath.Join(dataDir, "hearth.db"), migrationBackup(dataDir, cfg.BackupKeep, slog.New(slog.DiscardHandler)))
	if err != nil {
		return nil, err
	}
	a := &App{Config: cfg, DataDir: dataDir, DB: db, Log: slog.New(slog.DiscardHandler)}
	if err := a.openLedger(); err != nil {
		db.Close()
		return nil, err
	}
	g := a.newGovernor()
	return &Offline{DB: db, Ledger: a.Ledger, Gov: g, Operator: &govern.Operator{G: g}}, nil
}

// Close closes the database.
func (o *Offline) Close() error { return o.DB.Close() }
