// Package tunnel supervises OpenAI's tunnel-client, the program that
// connects ChatGPT to Hearth's MCP endpoint through the Secure MCP Tunnel
// (docs/DESIGN.md, "Tunnel, tray and recovery").
//
// Supervisor runs `tunnel-client run --profile <profile>` as a child of
// Hearth: contained so that it dies with Hearth (a kill-on-close Job
// Object on Windows, a process group elsewhere; see proc.Tree), with no
// console window, stdin a pipe (the child sees EOF when Hearth dies), and
// its output captured line by line into a rotated log. It restarts the
// child with exponential backoff, gives up after a crash loop and says
// so, and reports readiness from tunnel-client's own /readyz. It runs
// only the tunnel-client file the operator pinned, and only while that
// file still has its pinned SHA-256 (see PinClient).
//
// The tunnel runtime key lives in the secrets store (KeyName). It is read
// into memory only to start a child and passed only as
// CONTROL_PLANE_API_KEY in that child's environment: never in argv, never
// in a log, the database or a file Hearth writes. Every line Hearth keeps
// from the child, and every setup command's output, has the key replaced
// by Redacted in case tunnel-client ever printed it.
package tunnel

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/internal/secrets"
)

// KeyName is the name of the tunnel runtime key in the secrets store (in
// Windows Credential Manager it shows up as "Hearth/tunnel-key").
const KeyName = "tunnel-key"

// EnvKey is the environment variable tunnel-client reads its runtime key
// from.
const EnvKey = "CONTROL_PLANE_API_KEY"

// Ledger entry kinds for changes of the key (the entries carry at most its
// last four characters).
const (
	KindKeySet     = ledger.KindTunnelKeySet
	KindKeyCleared = "tunnel_key_cleared"
)

// ErrNotConfigured is returned by Start when the tunnel cannot run yet;
// the error (and Status.Reason) says what is missing.
var ErrNotConfigured = errors.New("secure mcp tunnel not configured")

// Journal records key changes; *ledger.Ledger is one.
type Journal interface {
	Append(ctx context.Context, kind string, data any) (ledger.Entry, error)
}

// Options are a Supervisor's dependencies.
type Options struct {
	// Config is the tunnel section of config.json.
	Config config.Tunnel
	// ConfigPath is config.json, where SetConfig persists changes; ""
	// keeps them in memory only.
	ConfigPath string
	// DataDir holds logs/tunnel.log and the health URL file.
	DataDir string
	Secrets secrets.Store
	Journal Journal
	Log     *slog.Logger
	// Roots are the fs tool's roots (config "roots"): the Setup page
	// warns about a tunnel-client found inside one (Candidates).
	Roots []string
	// OnPinned, when set, is called with the path of each tunnel-client
	// pinned (PinClient, PinBesideExe, AutoPin) once the pin is saved,
	// before it is journaled: Hearth denies that file to the fs tool from
	// then on, so that the model cannot stop the tunnel by rewriting it.
	// It runs while pins are serialized; it must not pin.
	OnPinned func(path string)
	// ProgramDir, when set, replaces hearth-tray's folder as the place of
	// the tunnel-client "beside hearth-tray" (tests).
	ProgramDir string
}

// timing holds the supervisor's delays and limits (tests shorten them).
type timing struct {
	backoffMin, backoffMax time.Duration
	// healthyAfter: a child that ran this long resets the backoff.
	healthyAfter time.Duration
	// loopFailures exits within loopWindow make a crash loop.
	loopFailures int
	loopWindow   time.Duration
	// pollMin..pollMax: readiness polls start fast and settle at pollMax.
	pollMin, pollMax time.Duration
	probeTimeout     time.Duration
	// pollFresh: how recent tunnel-client's last successful
	// control-plane poll must be for "ready".
	pollFresh time.Duration
	// startGrace: how long a new child may fail /readyz and still be
	// "starting" rather than "unhealthy".
	startGrace time.Duration
	// stopGrace: how long a child has to exit after the graceful signal
	// before it is killed.
	stopGrace time.Duration
	// setupTimeout bounds init and doctor.
	setupTimeout time.Duration
	logMax       int64
	logKeep      int
}

func defaultTiming() timing {
	return timing{
		backoffMin: time.Second, backoffMax: time.Minute,
		healthyAfter: time.Minute,
		loopFailures: 5, loopWindow: 5 * time.Minute,
		pollMin: 250 * time.Millisecond, pollMax: 5 * time.Second, probeTimeout: 2 * time.Second,
		pollFresh:    2 * time.Minute,
		startGrace:   time.Minute,
		stopGrace:    5 * time.Second,
		setupTimeout: time.Minute,
		logMax:       1 << 20, logKeep: 3,
	}
}

// Supervisor runs and watches one tunnel-client. Its methods are safe for
// concurrent use.
type Supervisor struct {
	dataDir    string
	configPath string
	secrets    secrets.Store
	journal    Journal
	log        *slog.Logger
	t          timing
	// roots are the fs tool's roots (Options.Roots).
	roots []string
	// exeDir is where hearth-tray lives, the one place Hearth pins a
	// tunnel-client from by itself (PinBesideExe); "" means the
	// directory of os.Executable.
	exeDir string
	// seams are what tests may set (fortest.go); zero in the program.
	seams seams
	// onPinned is Options.OnPinned.
	onPinned func(path string)

	// keyMu makes a key's store and its keyGen one step (SetKey), and a
	// child's read of both another (readKeyGen).
	keyMu sync.Mutex

	// pinMu serializes pins, so that an automatic pin never overwrites
	// the operator's.
	pinMu sync.Mutex

	// life serializes Start, Stop and UpdateConfig, so that a Stop waiting
	// for the child to exit cannot interleave with a Start, and so that
	// every change of cfg starts from the one before.
	life sync.Mutex

	mu sync.Mutex
	// cfg is written only by UpdateConfig, under life and mu.
	cfg    config.Tunnel
	status Status
	run    *run
	// version counts status changes; subs are the OnChange subscribers.
	version uint64
	subs    []*subscriber
	// firstCall is when ChatGPT's first call arrived (NoteChatGPTCall);
	// firstCallLoaded: the data directory's record was read.
	firstCall       time.Time
	firstCallLoaded bool
	// mcpURL is Hearth's MCP endpoint as it listens now (SetMCPURL).
	mcpURL string
	// movedFrom is the pin PreferBesideExe replaced at start ("": none).
	movedFrom string
	// heldBeside is the tunnel-client beside this hearth-tray that
	// PreferBesideExe did not switch to at start because it lies in an fs
	// root (heldRoot): the operator trusts it on the Setup page ("": none).
	heldBeside, heldRoot string
	// keyGen counts the keys saved (SetKey, under keyMu too): a child
	// started with an earlier key no longer reports the key refused.
	keyGen uint64
}

// run is one supervision, from Start until Stop or a terminal state.
type run struct {
	cancel  context.CancelFunc
	done    chan struct{}
	restart chan struct{}
}

// New returns a stopped Supervisor.
func New(o Options) *Supervisor {
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if o.Config.Profile == "" {
		o.Config.Profile = config.DefaultTunnelProfile
	}
	return &Supervisor{
		dataDir: o.DataDir, configPath: o.ConfigPath,
		secrets: o.Secrets, journal: o.Journal, log: log,
		roots:    slices.Clone(o.Roots),
		onPinned: o.OnPinned,
		exeDir:   o.ProgramDir,
		t:        defaultTiming(),
		cfg:      o.Config,
		status:   Status{State: StateStopped, Reason: "not started", Since: time.Now()},
	}
}

// Config returns the tunnel settings in effect (SetConfig changes them).
func (s *Supervisor) Config() config.Tunnel {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg
}

// LogPath is the tunnel log; older parts are LogPath()+".1", ".2".
func (s *Supervisor) LogPath() string { return filepath.Join(s.dataDir, "logs", "tunnel.log") }

func (s *Supervisor) healthURLFile() string { return filepath.Join(s.dataDir, "tunnel-health.url") }

// Start begins supervising tunnel-client, unless it is already supervised.
// It fails with ErrNotConfigured (saying what is missing) when there is no
// runtime key, no tunnel ID or no pinned tunnel-client, and with a
// *ClientChangedError (StateClientChanged) when the pinned file is gone or
// no longer has its pinned SHA-256. Every start of the child, the first
// and each restart, hashes the pinned file again; a file that cannot be
// read just then is tried again after the restart backoff.
//
// ctx bounds the supervision: when it ends the child is stopped as by
// Stop. Pass the application's context, not a request's. Start after a
// crash loop begins afresh.
func (s *Supervisor) Start(ctx context.Context) error {
	s.life.Lock()
	defer s.life.Unlock()
	s.mu.Lock()
	if s.run != nil {
		s.mu.Unlock()
		return nil
	}
	cfg := s.cfg
	s.mu.Unlock()

	missing, changed := s.check(cfg)
	if len(missing) > 0 {
		reason := strings.Join(missing, "; ")
		s.setState(nil, StateNotConfigured, reason)
		return fmt.Errorf("%w: %s", ErrNotConfigured, reason)
	}
	if changed != nil {
		s.setState(nil, StateClientChanged, changed.Error())
		s.log.Error("tunnel: not starting tunnel-client", "err", changed)
		return changed
	}
	logf, err := openRotatingLog(s.LogPath(), s.t.logMax, s.t.logKeep)
	if err != nil {
		s.setState(nil, StateStopped, "cannot open the tunnel log")
		return fmt.Errorf("start tunnel: %w", err)
	}
	rctx, cancel := context.WithCancel(ctx)
	r := &run{cancel: cancel, done: make(chan struct{}), restart: make(chan struct{}, 1)}
	s.mu.Lock()
	s.run = r
	s.mu.Unlock()
	s.update(r, func(st *Status) {
		*st = Status{State: StateStarting, Reason: "starting tunnel-client", Since: st.Since}
	})
	go s.supervise(rctx, r, logf)
	return nil
}

// Stop stops the child (graceful signal, then a kill after a grace period)
// and waits for it. It is a no-op when nothing is supervised.
func (s *Supervisor) Stop() {
	s.life.Lock()
	defer s.life.Unlock()
	s.stop()
}

func (s *Supervisor) stop() {
	s.mu.Lock()
	r := s.run
	s.mu.Unlock()
	if r == nil {
		return
	}
	r.cancel()
	<-r.done
}

// Restart makes a running tunnel-client exit gracefully and starts it again
// at once (a new key takes effect this way); it does not count as a crash.
// It reports whether a supervision was running to be restarted.
func (s *Supervisor) Restart() bool {
	s.mu.Lock()
	r := s.run
	s.mu.Unlock()
	if r == nil {
		return false
	}
	select {
	case r.restart <- struct{}{}:
	default:
	}
	return true
}

// Running reports whether a supervision is active (a child runs or is
// about to be restarted).
func (s *Supervisor) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.run != nil
}

// Check re-evaluates the configuration while nothing is supervised:
// not_configured (with what is missing), client_changed (the pinned file
// was hashed again and differs), or stopped with reason when everything
// is in place (a crash_loop is kept: it needs a Start). It is what Serve
// calls when autostart is off, and what SetKey, ClearKey, SetConfig and
// PinClient call.
func (s *Supervisor) Check(reason string) {
	s.mu.Lock()
	cfg := s.cfg
	s.mu.Unlock()
	missing, changed := s.check(cfg)
	s.update(nil, func(st *Status) {
		switch {
		case len(missing) > 0:
			st.State, st.Reason = StateNotConfigured, strings.Join(missing, "; ")
		case changed != nil:
			st.State, st.Reason = StateClientChanged, changed.Error()
		case st.State == StateNotConfigured || st.State == StateClientChanged:
			if reason == "" {
				reason = "configured; not started"
			}
			st.State, st.Reason = StateStopped, reason
		case st.State == StateStopped && reason != "":
			st.Reason = reason
		}
	})
}

// check reports what is missing for a start, or that the pinned
// tunnel-client changed (hashing it now). A pinned file that cannot be
// read just now is neither: a start tries it again. It never searches for
// a tunnel-client: only the pin is ever run.
func (s *Supervisor) check(cfg config.Tunnel) (missing []string, changed *ClientChangedError) {
	if cfg.TunnelID == "" {
		missing = append(missing, "no tunnel ID yet (enter it on the Setup page, or set tunnel.tunnel_id)")
	}
	if ok, err := s.KeyPresent(); err != nil {
		missing = append(missing, "the tunnel runtime key cannot be read from the secrets store")
		s.log.Warn("tunnel: read key presence", "err", err)
	} else if !ok {
		missing = append(missing, "no tunnel runtime key yet (enter it on the Setup page)")
	}
	c, err := s.openClient(cfg)
	switch {
	case err == nil:
		c.Close()
	case errors.As(err, &changed):
	case errors.Is(err, ErrClientUnreadable):
		s.log.Warn("tunnel: hash the pinned tunnel-client", "err", err)
	default:
		missing = append(missing, err.Error())
	}
	return missing, changed
}

// SetConfig validates t, writes it to config.json (re-read first, so other
// edits to the file are kept) and makes it the settings of the next start.
// A running tunnel-client keeps running with the old settings; Restart or
// Stop and Start apply the new ones (a changed tunnel ID restarts it at
// once, UpdateConfig). It replaces every field: to change
// some fields of the settings in effect, use UpdateConfig, which cannot
// undo a change made meanwhile.
func (s *Supervisor) SetConfig(t config.Tunnel) error {
	return s.updateConfig(func(c *config.Tunnel) error {
		*c = t
		return nil
	}, true)
}

// saveTunnel writes to config.json the tunnel settings that differ
// between old and t (every one of them with every), each one key of its
// "tunnel" object, and nothing else (config.SetNested): turning
// tunnel.autostart off or pinning a file never writes every default of
// this version into the person's file, nor undoes an edit of another key
// made there meanwhile. A missing file is created from the defaults first
// (config.Load).
func saveTunnel(path string, old, t config.Tunnel, every bool) error {
	if _, err := config.Load(path); err != nil {
		return err
	}
	var sets []config.Setting
	ov, nv, typ := reflect.ValueOf(old), reflect.ValueOf(t), reflect.TypeOf(t)
	for i := range typ.NumField() {
		if !every && reflect.DeepEqual(ov.Field(i).Interface(), nv.Field(i).Interface()) {
			continue
		}
		key, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		sets = append(sets, config.Setting{Keys: []string{"tunnel", key}, Value: nv.Field(i).Interface()})
	}
	if len(sets) == 0 {
		return nil
	}
	return config.SetNested(path, sets...)
}

// UpdateConfig applies change to the settings in effect now and saves the
// result as SetConfig does. Reading the settings, change and the write
// happen under the lock every change of the settings takes, so two
// updates of different fields (the tunnel ID saved by Init, a pin saved
// from another tab) both survive, in config.json and in memory. change
// must not call the Supervisor's methods. When change or the validation
// of its result fails, nothing changes.
func (s *Supervisor) UpdateConfig(change func(*config.Tunnel) error) error {
	return s.updateConfig(change, false)
}

// updateConfig is UpdateConfig; every writes all the tunnel settings into
// config.json (SetConfig), not only those change changed.
func (s *Supervisor) updateConfig(change func(*config.Tunnel) error, every bool) error {
	s.life.Lock()
	defer s.life.Unlock()
	s.mu.Lock()
	old := s.cfg
	s.mu.Unlock()
	t := old
	if err := change(&t); err != nil {
		return err
	}
	if err := t.Validate(); err != nil {
		return err
	}
	if s.configPath != "" {
		if err := saveTunnel(s.configPath, old, t, every); err != nil {
			return err
		}
	}
	s.mu.Lock()
	s.cfg = t
	s.mu.Unlock()
	if old.TunnelID != t.TunnelID || old.Profile != t.Profile {
		if old.TunnelID != "" && old.TunnelID != t.TunnelID {
			// ChatGPT reaches Hearth through the new tunnel only once
			// it is added to ChatGPT with the new ID.
			s.forgetFirstCall()
		}
		// The profile is made again before the next start (ensureProfile).
		if s.Restart() {
			s.log.Info("tunnel: the tunnel ID changed; restarting tunnel-client with it", "tunnel_id", t.TunnelID)
		}
	}
	s.Check("")
	return nil
}
