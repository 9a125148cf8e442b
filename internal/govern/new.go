package govern

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/hearth-dev/hearth/internal/callpath"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/internal/risk"
	"github.com/hearth-dev/hearth/internal/startup"
	"github.com/hearth-dev/hearth/internal/store"
)

// Options are what a Governor is built from (New); the fields mean what
// the Governor's fields of the same names mean.
type Options struct {
	DB           *store.DB
	Ledger       *ledger.Ledger
	Futures      callpath.Futures
	Log          *slog.Logger
	DefaultMode  string
	PermitTTL    time.Duration
	Now          func() time.Time
	Programs     map[string]func(json.RawMessage) []ProgramUse
	InlineBudget time.Duration
	SaveMode     func(mode string) error
	Rows         risk.Table
	Places       *risk.Places
	Writes       *risk.Writes
	Identities   *risk.Identities
	Startup      *startup.Index
}

// New builds the governor, the security choke point, and checks its
// parts: without its database or its ledger it could not journal what it
// lets run, and without a known mode or a permit lifetime it could not
// decide, so a missing part is a construction error, never a silent
// "off". A nil Log discards.
func New(o Options) (*Governor, error) {
	switch {
	case o.DB == nil:
		return nil, errors.New("build the governor: DB is required")
	case o.Ledger == nil:
		return nil, errors.New("build the governor: Ledger is required")
	case o.Futures == nil:
		return nil, errors.New("build the governor: Futures (the engine's future reader) is required")
	case o.Startup == nil:
		return nil, errors.New("build the governor: Startup (the index of what starts by itself) is required")
	case o.PermitTTL <= 0:
		return nil, fmt.Errorf("build the governor: PermitTTL is %v; a permit must be able to wait for the operator", o.PermitTTL)
	}
	switch o.DefaultMode {
	case config.ModeAsk, config.ModeTrusted, config.ModeReadOnly:
	default:
		return nil, fmt.Errorf("build the governor: DefaultMode %q is not a policy mode (ask, trusted, read-only)", o.DefaultMode)
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Governor{DB: o.DB, Ledger: o.Ledger, Futures: o.Futures, Log: log, DefaultMode: o.DefaultMode, PermitTTL: o.PermitTTL, Now: o.Now,
		Programs: o.Programs, InlineBudget: o.InlineBudget, SaveMode: o.SaveMode, Rows: o.Rows, Places: o.Places, Writes: o.Writes,
		Identities: o.Identities, Startup: o.Startup}, nil
}
