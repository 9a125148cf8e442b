// Package app wires Hearth's parts together and runs them: one app
// context, dependencies passed as fields, and an explicit shutdown order
// (stop accepting → cancel work → wait → close the database).
package app

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/hearth-dev/hearth/internal/artifacts"
	"github.com/hearth-dev/hearth/internal/atomicfile"
	"github.com/hearth-dev/hearth/internal/autostart"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/control"
	"github.com/hearth-dev/hearth/internal/desktop"
	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/document"
	"github.com/hearth-dev/hearth/internal/evidence"
	"github.com/hearth-dev/hearth/internal/fsops"
	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/jobs"
	"github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/internal/machine"
	"github.com/hearth-dev/hearth/internal/mcpserver"
	"github.com/hearth-dev/hearth/internal/peeruser"
	"github.com/hearth-dev/hearth/internal/periodic"
	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/proc"
	"github.com/hearth-dev/hearth/internal/recipes"
	"github.com/hearth-dev/hearth/internal/runs"
	"github.com/hearth-dev/hearth/internal/screen"
	"github.com/hearth-dev/hearth/internal/session"
	"github.com/hearth-dev/hearth/internal/store"
	"github.com/hearth-dev/hearth/internal/tunnel"
	"github.com/hearth-dev/hearth/internal/uia"
	"github.com/hearth-dev/hearth/internal/update"
	"github.com/hearth-dev/hearth/internal/wake"
	"github.com/hearth-dev/hearth/web"
)

// Options are the start-up inputs of serve.
type Options struct {
	DataDir    string
	ConfigPath string
	// MCPAddr and PanelAddr override the config when non-empty.
	MCPAddr   string
	PanelAddr string
	Version   string
	Log       *slog.Logger
	// UIProvider replaces this host's UI Automation (tests inject a
	// uiatest.FakeProvider); nil uses uia.DefaultProvider.
	UIProvider uia.Provider
	// TunnelProgramDir, when set, is where the tunnel-client "beside
	// hearth-tray" is looked for, instead of hearth-tray's own folder
	// (tests put a fake there).
	TunnelProgramDir string
	// Instance (Start): one Hearth per user and data directory: take the
	// instance lock before opening anything, and publish instance.json
	// once listening.
	Instance bool
	// Listening (Start), when set, runs once both listeners are bound,
	// before instance.json is published and serving begins (the tray
	// publishes its control endpoint there).
	Listening func(*App) error
	// BudgetEvery is how often the running Hearth enforces
	// storage_budget_bytes in the background: zero means the package's
	// BudgetEvery, a negative value never (a test that enforces by hand
	// and must not race the background pass).
	BudgetEvery time.Duration
	// UpdateURL and UpdateKey are the release manifest's address and the
	// release verifier key built into the program by the release scripts
	// (-ldflags); config update.url overrides the address.
	UpdateURL, UpdateKey string
	// Handoff, when set, stops this Hearth and applies an update plan once
	// it has stopped (update.Apply); nil means Hearth cannot update itself
	// (test instances, the demo).
	Handoff func(update.Plan)
	// BackupEvery is how often the running Hearth asks whether the daily
	// backup is due (the first time at start): zero means
	// BackupCheckEvery, a negative value never (a disposable Hearth, the
	// selftest's, whose data directory is removed when it stops, needs no
	// backup, and one still being written would hold a file there open).
	BackupEvery time.Duration
	// DispatchHooksForTest are the dispatcher's seams for crash tests
	// (which kill the process at a point in a future's life); a program
	// leaves them zero (dispatch.New stops one that does not).
	DispatchHooksForTest dispatch.Hooks
}

// App is a running Hearth.
type App struct {
	Config    config.Config
	DataDir   string
	DB        *store.DB
	Artifacts *artifacts.Store
	// Pruner deletes old artifacts that nothing alive names; each table's
	// owner says what of its rows is still alive.
	Pruner     *artifacts.Pruner
	Registry   *primitive.Registry
	Dispatcher *dispatch.Dispatcher
	Jobs       *jobs.Queue
	MCP        *mcpserver.Server
	Log        *slog.Logger
	Ledger     *ledger.Ledger
	FS         *fsops.Engine
	Gov        *govern.Governor
	// Operator is the human operator's API (panel, tray): governance
	// records each decision and Operator carries it out on the engines; no
	// tool reaches it.
	Operator *control.Operator
	Runs     *runs.Service
	Recipes  *recipes.Book
	// Tunnel supervises tunnel-client (docs/DESIGN.md, "Tunnel, tray and recovery"); see StartTunnel.
	Tunnel *tunnel.Supervisor
	// Logon is the logon task's state (Windows), read from Task Scheduler
	// once and again after Hearth changes it: the Setup page shows it and
	// the tray's "Start at logon" changes it through it.
	Logon *autostart.LogonState
	// UI runs the ui tool's work on its one serialized worker.
	UI *uia.Service
	// Screen runs ui.screenshot and the clipboard primitives.
	Screen *screen.Service
	// Wake is the route probe, the ChatGPT window, the binder and the
	// waker (internal/wake).
	Wake *wake.Service
	// Sessions are the model's interactive programs (machine.session_*).
	Sessions *session.Manager
	// Opened are the apps Hearth started for the person (ui.open): the
	// desktop opener adds them, the e-stop kills them with what they
	// started.
	Opened *proc.Started
	// Updates checks for and installs new versions (internal/update).
	Updates *update.Service

	cfgFile *configFile
	// explicitMCP and explicitPanel: the address came from the command
	// line (Options.MCPAddr, Options.PanelAddr), so Listen does not move
	// it to a free port when it is taken.
	explicitMCP, explicitPanel bool
	// moves are the addresses Listen moved, for the Status page.
	moves       []AddrMove
	budgetEvery time.Duration
	backupEvery time.Duration

	panel          *web.Panel
	tunnelServe    tunnelServe
	mcpLn, panelLn net.Listener
	ready          chan struct{}
	// mcpInFlight counts MCP requests being answered (quietMoment).
	mcpInFlight atomic.Int64

	// served is the account the guarded listeners serve (guardListeners).
	served peeruser.Account
}

// Open loads the config, opens the database and builds every part, but
// serves nothing yet. It reads as the recipe it is: each part is built
// complete, from the parts built before it, in dependency order; Serve
// starts them in that order and stops them in reverse.
func Open(ctx context.Context, opts Options) (_ *App, err error) {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg, err := loadConfig(opts)
	if err != nil {
		return nil, err
	}
	db, err := store.Open(ctx, filepath.Join(opts.DataDir, "hearth.db"), migrationBackup(opts.DataDir, cfg.BackupKeep, log), store.Logger(log))
	if err != nil {
		return nil, err
	}
	// A full disk fails every write; the store says so once per change,
	// so the parts' own errors about it are not repeated on every call.
	log = slog.New(store.QuietFull(log.Handler()))
	defer func() {
		if err != nil {
			db.Close()
		}
	}()
	led, err := openLedger(db, opts.DataDir)
	if err != nil {
		return nil, err
	}
	// The data directory and the config file are never reachable through
	// fs, even under a root: the model must not rewrite its own policy.
	roots, err := fsops.NewRoots(cfg.Roots, deniedPaths(opts, cfg))
	if err != nil {
		return nil, fmt.Errorf("config key \"roots\": %w", err)
	}
	wk, err := newWake(db, led, log, opts.DataDir, cfg.Wake)
	if err != nil {
		return nil, err
	}
	tun, err := newTunnel(cfg, opts, led, log, roots)
	if err != nil {
		return nil, err
	}
	cfgFile := &configFile{path: opts.ConfigPath}
	gov, err := newGovernor(cfg, db, led, log, cfgFile)
	if err != nil {
		return nil, err
	}
	if err := gov.AdoptConfigMode(ctx); err != nil {
		return nil, fmt.Errorf("adopt the configured policy mode: %w", err)
	}
	arts := &artifacts.Store{DB: db, Dir: filepath.Join(opts.DataDir, "artifacts")}
	// One arrival writer for everything that arrives in a mailbox: the
	// dispatcher's futures, the queue's jobs, the runs' continuations.
	arrivals := &dispatch.Arrivals{Artifacts: arts, MaxResultBytes: cfg.MaxResultBytes, Log: log}
	provider := opts.UIProvider
	if provider == nil {
		provider = uia.DefaultProvider()
	}
	ui := &uia.Service{Provider: provider, Log: log}
	scr := &screen.Service{Log: log, IsPanel: ui.ShowsPanel}
	sessions, err := session.New(session.Options{DB: db, Ledger: led, Artifacts: arts, Log: log,
		MaxSessions: cfg.MaxSessions, BufferBytes: cfg.SessionBufferBytes, TranscriptBytes: cfg.SessionTranscriptBytes,
		IdleTimeout: time.Duration(cfg.SessionIdleTimeoutMS) * time.Millisecond, MaxReadBytes: cfg.MaxOutputBytes})
	if err != nil {
		return nil, err
	}
	a := &App{
		Config: cfg, DataDir: opts.DataDir, DB: db, Log: log, Ledger: led,
		FS: &fsops.Engine{DB: db, Roots: roots, SpillDir: filepath.Join(opts.DataDir, "receipts"), Replacer: atomicfile.Replacer{Remove: fsops.MoveToTrash},
			Writes: gov.Writes, Startup: gov.Startup, Documents: document.Reader{CacheDir: filepath.Join(opts.DataDir, "cache", "pdf")}},
		Wake: wk, Tunnel: tun, Logon: autostart.NewLogonState(), Gov: gov,
		Artifacts: arts, UI: ui, Screen: scr, Runs: newRuns(db, log, cfg, wk, arrivals), Sessions: sessions, Opened: proc.NewStarted(),
		cfgFile: cfgFile, ready: make(chan struct{}), budgetEvery: opts.BudgetEvery, backupEvery: opts.BackupEvery,
		explicitMCP: opts.MCPAddr != "", explicitPanel: opts.PanelAddr != "",
	}
	exec := newMachine(cfg, arts, cfg.MaxConcurrentExec, opts.Version, a.status)
	a.Jobs = a.newJobs(cfg, newMachine(cfg, arts, cfg.MaxConcurrentJobs, "", nil))
	jobClass, err := a.Jobs.EngineClass()
	if err != nil {
		return nil, err
	}

	var specs []*primitive.Spec
	specs = append(specs, exec.Specs()...)
	specs = append(specs, sessions.Specs()...)
	specs = append(specs, a.FS.Specs()...)
	specs = append(specs, arts.Specs()...)
	specs = append(specs, a.Jobs.Specs()...)
	specs = append(specs, ui.Specs()...)
	specs = append(specs, scr.Specs()...)
	desk, err := desktop.New(roots, ui.ShowsPanel, a.Opened, log)
	if err != nil {
		return nil, err
	}
	specs = append(specs, desk.Specs()...)
	specs = append(specs, control.EStopSpec(gov, sessions, a.Opened, log))
	specs = append(specs, control.ReconcileSpec(gov))
	// Recipes offer the step primitives registered with everything else.
	base, err := primitive.NewRegistry(specs...)
	if err != nil {
		return nil, err
	}
	a.Recipes = recipes.New(db, base, a.Runs.Events, cfg.RecipeMaxSteps, log)
	if a.Registry, err = withRunTools(specs, a.Recipes, a.Runs); err != nil {
		return nil, err
	}
	// The primitives that drive the dispatcher (run.scatter, recipe.run,
	// task.*, machine.estop) receive it with each call they run
	// (dispatch.WithEngine), so the registry is complete before it.
	a.Dispatcher, err = dispatch.New(dispatch.Options{
		DB: db, Registry: a.Registry, Artifacts: arts, Log: log, Gov: gov, Gates: a.gates(),
		Budget:          time.Duration(cfg.DispatchInlineBudgetMS) * time.Millisecond,
		Arrivals:        arrivals,
		MaxArrivals:     cfg.MaxArrivalsPerResponse,
		MaxArrivalBytes: cfg.MaxArrivalBytes,
		MaxFutures:      cfg.MaxConcurrentFutures,
		Classes:         []dispatch.Class{jobClass},
		HooksForTest:    opts.DispatchHooksForTest,
	})
	if err != nil {
		return nil, err
	}
	// The operator's decisions are recorded by the governor and carried out
	// on the engines: built over both.
	if a.Operator, err = control.New(gov, a.Dispatcher, sessions, a.Opened, log); err != nil {
		return nil, err
	}

	// Retention asks each owner of live rows what they still name.
	if a.Pruner, err = artifacts.NewPruner(arts, dispatch.LiveText, govern.LiveText, jobs.LiveText, runs.LiveText); err != nil {
		return nil, err
	}

	ev, err := evidence.New(gov, led, arts, evidence.Limits{})
	if err != nil {
		return nil, err
	}
	a.MCP = &mcpserver.Server{
		Registry: a.Registry, Dispatcher: a.Dispatcher, Log: log, Version: opts.Version,
		Disclosure: a.disclosure, Probes: wk, Evidence: ev,
		// Setup's last step waits for ChatGPT's first call: one carrying
		// _meta["openai/session"] over the tunnel-client's connection.
		OnOpenAISession: a.noteChatGPTCall,
	}
	if err := a.MCP.Build(); err != nil {
		return nil, err
	}
	// The control panel, over the operator's API and the read side of every
	// part, is served on its own loopback listener, never the MCP one.
	a.Updates = a.newUpdater(opts)
	if a.panel, err = web.New(a.PanelDeps()); err != nil {
		return nil, err
	}
	return a, nil
}

// loadConfig loads config.json (creating the data directory first) with
// the command line's address overrides, and validates the result.
func loadConfig(opts Options) (config.Config, error) {
	if err := os.MkdirAll(opts.DataDir, 0o700); err != nil {
		return config.Config{}, fmt.Errorf("create data directory %s: %w", opts.DataDir, err)
	}
	cfg, err := config.Load(opts.ConfigPath)
	if err != nil {
		return config.Config{}, err
	}
	if opts.MCPAddr != "" {
		cfg.MCPAddr = opts.MCPAddr
	}
	if opts.PanelAddr != "" {
		cfg.PanelAddr = opts.PanelAddr
	}
	if err := cfg.Validate(); err != nil {
		return config.Config{}, err
	}
	return cfg, nil
}

// newMachine is a machine.Machine with slots run slots and the config's
// output bounds and timeouts: machine.exec's, and the job queue's own
// (so queued work never takes the slots of interactive calls). status is
// what host_info reports (nil for the queue's, which serves no host_info).
func newMachine(cfg config.Config, arts *artifacts.Store, slots int, version string, status func() map[string]any) *machine.Machine {
	m := machine.New(slots)
	m.Version, m.Status = version, status
	m.Artifacts = arts
	m.MaxOutputBytes = cfg.MaxOutputBytes
	m.MaxCaptureBytes = cfg.MaxArtifactBytes
	m.DefaultTimeout = time.Duration(cfg.ExecTimeoutMS) * time.Millisecond
	m.MaxTimeout = time.Duration(cfg.MaxExecTimeoutMS) * time.Millisecond
	return m
}

// Ready is closed once Serve has recovered the previous run's state and
// serves requests.
func (a *App) Ready() <-chan struct{} { return a.ready }

// MCPURL is the endpoint's real URL once listening.
func (a *App) MCPURL() string { return "http://" + a.mcpLn.Addr().String() + "/mcp" }

// PanelURL is the control panel's URL once listening.
func (a *App) PanelURL() string { return "http://" + a.panelLn.Addr().String() + "/" }

// Close releases the database.
func (a *App) Close() error {
	a.FS.Documents.Close()
	return a.DB.Close()
}

// CheckpointEvery is how often a running Hearth signs a ledger checkpoint
// when entries were appended since the last one, so that evidence of a
// run that ends in a crash is signed up to at most this long before it.
const CheckpointEvery = 5 * time.Minute

// startCheckpoints signs a checkpoint every CheckpointEvery until ctx
// ends; the returned channel closes when it has stopped.
func (a *App) startCheckpoints(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		periodic.Run(ctx, CheckpointEvery, false, func(ctx context.Context) {
			if _, err := a.Ledger.Checkpoint(ctx); err != nil && ctx.Err() == nil {
				a.Log.Error("sign ledger checkpoint", "err", err)
			}
		})
	}()
	return done
}

// deniedPaths are never reachable through fs, even under a root: the data
// directory and the config file (the model must not rewrite its own
// policy), the running executable and the tunnel-client Hearth would start
// from beside it, and the per-user install directory — so the model
// cannot plant a tunnel-client (which is handed the runtime key) or
// replace hearth-tray itself. The tunnel-client pinned at start is denied
// too: a changed pin is refused anyway, but the model must not be able to
// stop the tunnel by rewriting it. A tunnel-client pinned while Hearth
// runs is denied from the moment it is pinned (denyPinnedToFS).
func deniedPaths(opts Options, cfg config.Config) []string {
	denied := []string{opts.DataDir, opts.ConfigPath}
	if cfg.Tunnel.ClientPath != "" && cfg.Tunnel.ClientSHA256 != "" {
		denied = append(denied, cfg.Tunnel.ClientPath)
	}
	if exe, err := os.Executable(); err == nil {
		dir := filepath.Dir(exe)
		denied = append(denied, exe, filepath.Join(dir, "tunnel-client"), filepath.Join(dir, "tunnel-client.exe"))
	}
	if dir, err := autostart.ProgramDir(); err == nil {
		denied = append(denied, dir)
	}
	return denied
}
