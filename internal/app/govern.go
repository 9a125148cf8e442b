package app

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/risk"
	"github.com/hearth-dev/hearth/internal/startup"
	"github.com/hearth-dev/hearth/internal/store"

	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/fsops"
	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/jobs"
	"github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/internal/machine"
	"github.com/hearth-dev/hearth/internal/secrets"
)

// PermitTTL is how long a permit waits for the operator (docs/DESIGN.md, "Governance").
const PermitTTL = 15 * time.Minute

// openLedger opens the host ledger with its signing key, generated on
// first run and kept DPAPI-protected on Windows (0600 file elsewhere).
func openLedger(db *store.DB, dataDir string) (*ledger.Ledger, error) {
	ks := secrets.ProtectedFileKeyStore{Path: filepath.Join(dataDir, "ledger.key")}
	skey, _, err := ledger.LoadOrCreateKey(ks)
	if err != nil {
		return nil, fmt.Errorf("ledger signing key: %w", err)
	}
	return ledger.Open(db, skey)
}

// programsOf tells governance which programs an exec-class call would
// start, for allow-rule matching and the permit card: each in the folder
// it would run in (machine.WorkingDir), also when the call names none.
func programsOf() map[string]func(json.RawMessage) []govern.ProgramUse {
	one := func(in machine.ExecInput) govern.ProgramUse {
		return govern.ProgramUse{Command: in.Command, Args: in.Args, Cwd: machine.WorkingDir(in.Cwd), EnvKeys: slices.Collect(maps.Keys(in.Env))}
	}
	return map[string]func(json.RawMessage) []govern.ProgramUse{
		"machine.exec": func(raw json.RawMessage) []govern.ProgramUse {
			var in machine.ExecInput
			if json.Unmarshal(raw, &in) != nil {
				return nil
			}
			return []govern.ProgramUse{one(in)}
		},
		// A session's program is matched as exec's is: the same fields.
		"machine.session_start": func(raw json.RawMessage) []govern.ProgramUse {
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
				out = append(out, govern.ProgramUse{Command: in.Job.Command, Args: in.Job.Args, Cwd: machine.WorkingDir(in.Job.Cwd), EnvKeys: slices.Collect(maps.Keys(in.Job.Env))})
			}
			for _, j := range in.Jobs {
				out = append(out, govern.ProgramUse{Command: j.Command, Args: j.Args, Cwd: machine.WorkingDir(j.Cwd), EnvKeys: slices.Collect(maps.Keys(j.Env))})
			}
			return out
		},
	}
}

// newGovernor builds the governor. It holds no engine: what an operator's
// decision leaves to do to running or parked work is carried out by the
// operator's controls (internal/control), built once the engines exist.
func newGovernor(cfg config.Config, db *store.DB, led *ledger.Ledger, log *slog.Logger, cfgFile *configFile) (*govern.Governor, error) {
	// Governance reads the engine's futures through the engine's reader,
	// which needs only the database: the dispatcher is built later, over
	// the governor.
	futures, err := dispatch.NewFutureReader(db)
	if err != nil {
		return nil, err
	}
	// What starts by itself on this PC: the files its entries name are
	// persistence places, looked at again while Hearth runs.
	autoruns, err := startup.New(startup.Options{Env: risk.KnownFolderEnv(os.Getenv), Real: fsops.RealPrefix, Refresh: startup.Refresh})
	if err != nil {
		return nil, err
	}
	return govern.New(govern.Options{
		SaveMode: func(mode string) error {
			return cfgFile.edit(func(c *config.Config) error { c.Policy.Mode = mode; return nil })
		},
		DB: db, Ledger: led, Log: log, Futures: futures,
		DefaultMode:  cfg.Policy.Mode,
		PermitTTL:    PermitTTL,
		Programs:     programsOf(),
		Places:       risk.NewPlacesResolved(risk.KnownFolderEnv(os.Getenv), fsops.RealPrefix),
		Writes:       risk.NewWrites(risk.KnownFolderEnv(os.Getenv), fsops.RealPrefix),
		Startup:      autoruns,
		InlineBudget: time.Duration(cfg.DispatchInlineBudgetMS) * time.Millisecond,
	})
}

// governanceStatus is the governance part of host_info.
func (a *App) governanceStatus(ctx context.Context) map[string]any {
	st, err := a.Gov.Status(ctx)
	out := map[string]any{"policy_mode": st.Mode, "estop": st.EStop.Latched, "queue_held": st.QueueHeld,
		"policy": risk.Describe(st.Mode)}
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
// It has no engine, so its Operator only records decisions: a permit
// decided here would be carried out by the serve's next start
// (control.Operator.Recover).
type Offline struct {
	DB       *store.DB
	Ledger   *ledger.Ledger
	Gov      *govern.Governor
	Operator *govern.Decisions
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
	led, err := openLedger(db, dataDir)
	if err != nil {
		db.Close()
		return nil, err
	}
	g, err := newGovernor(cfg, db, led, slog.New(slog.DiscardHandler), &configFile{path: configPath})
	if err != nil {
		db.Close()
		return nil, err
	}
	return &Offline{DB: db, Ledger: led, Gov: g, Operator: &govern.Decisions{G: g}}, nil
}

// Close closes the database.
func (o *Offline) Close() error { return o.DB.Close() }

// configFile is config.json as the operator's changes edit it: re-read,
// changed, validated and written under one lock, so that two changes
// (the policy mode, the wake timings) never drop each other.
type configFile struct {
	path string
	mu   sync.Mutex
}

// setStrings sets string values of the config file by key, keeping the
// rest of its bytes (config.SetStrings), under the same lock as edit: no
// other config.json edit of this Hearth interleaves.
func (f *configFile) setStrings(set map[string]string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return config.SetStrings(f.path, set)
}

// edit applies change to the config file's current content.
func (f *configFile) edit(change func(*config.Config) error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, err := config.Load(f.path)
	if err != nil {
		return err
	}
	if err := change(&c); err != nil {
		return err
	}
	if err := c.Validate(); err != nil {
		return err
	}
	return config.Write(f.path, c)
}
