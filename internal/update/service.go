package update

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hearth-dev/hearth/internal/atomicfile"
)

// CheckEvery is how often a running Hearth asks for the manifest (and
// once at start).
const CheckEvery = 24 * time.Hour

// QuietEvery is how often an automatic update looks for a quiet moment.
const QuietEvery = 30 * time.Second

// Options configure the Service.
type Options struct {
	// Version is the running program's version ("dev" for a development
	// build).
	Version string
	// URL is the manifest's address: config update.url, else the one
	// built in. Key is the release verifier key built in.
	URL string
	Key string
	// Check is update.check; Auto is update.auto.
	Check bool
	Auto  bool
	// DataDir holds the update folder (Dir).
	DataDir string
	Client  *http.Client
	Limits  Limits
	// Every is how often to check; zero means CheckEvery.
	Every time.Duration
	// QuietEvery is how often Auto looks for a quiet moment; zero means
	// the package's QuietEvery.
	QuietEvery time.Duration
	// Quiet reports a quiet moment for an automatic update: no call in
	// flight, no open session, no approval waiting. nil is never quiet.
	Quiet func() bool
	// Handoff, when set, stops this Hearth and applies p (Apply) once it
	// has stopped; nil means this Hearth cannot restart itself (a test
	// instance), and Install refuses.
	Handoff func(p Plan)
	// BeforeAuto records an automatic update (update.auto) before it
	// starts, as an operator's Update click is recorded; an error stops
	// that update. nil records nothing.
	BeforeAuto func(ctx context.Context, from, to string) error
	Log        *slog.Logger
	Now        func() time.Time
}

// Offer is an update available to install.
type Offer struct {
	Version string
	Changes string
	// Blocked, when set, says why it cannot be installed from this
	// version (older than the release's min_version).
	Blocked string
}

// Phases of an update.
const (
	PhaseIdle        = ""
	PhaseChecking    = "checking"
	PhaseDownloading = "downloading"
	PhaseRestarting  = "restarting"
)

// State is what the Status page and the tray show.
type State struct {
	// Off says why Hearth does not check for updates; "" when it does.
	Off     string
	Version string
	Checked time.Time
	Offer   *Offer
	Phase   string
	// Done and Total are the download's progress in bytes.
	Done, Total int64
	// Problem is why the last check or update did not happen.
	Problem *Problem
	// Last is the last update's outcome, when there was one.
	Last *Outcome
	// CanInstall: Install would start (an offer, not blocked, idle, and
	// this Hearth can restart itself).
	CanInstall bool
}

// Service checks for updates at start and every day, and installs one on
// the operator's request (or by itself with update.auto, at a quiet
// moment).
type Service struct {
	opts Options
	log  *slog.Logger
	off  string
	prog Progress

	mu      sync.Mutex
	checked time.Time
	offer   *Offer
	phase   string
	problem *Problem
	last    *Outcome
}

// New makes the Service; it checks nothing until Run.
func New(opts Options) *Service {
	if opts.Client == nil {
		opts.Client = &http.Client{}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Service{opts: opts, log: opts.Log}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	switch {
	case !opts.Check:
		s.off = "Hearth does not look for updates: update.check is off in config.json."
	case !ValidVersion(opts.Version) && opts.URL == "":
		s.off = "Updates are off in a development build."
	case opts.URL == "":
		s.off = "This copy of Hearth has no update address built in."
	case opts.Key == "":
		s.off = "This copy of Hearth has no release key built in, so it cannot check updates."
	}
	if o, ok, err := ReadOutcome(opts.DataDir); err != nil {
		s.log.Warn("update: read the last outcome", "err", err)
	} else if ok {
		s.last = &o
	}
	return s
}

// State is the service's state now.
func (s *Service) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := State{Off: s.off, Version: s.opts.Version, Checked: s.checked, Phase: s.phase, Problem: s.problem, Last: s.last}
	if s.offer != nil {
		o := *s.offer
		st.Offer = &o
		st.CanInstall = o.Blocked == "" && s.phase == PhaseIdle && s.opts.Handoff != nil
	}
	if s.phase == PhaseDownloading || s.phase == PhaseRestarting {
		st.Done, st.Total = s.prog.Load()
	}
	return st
}

// Run checks at once and then every day until ctx ends; with update.auto
// it installs an offer at the first quiet moment.
func (s *Service) Run(ctx context.Context) {
	if s.off != "" {
		return
	}
	s.removeLeftovers()
	every := orDefault(s.opts.Every, CheckEvery)
	quietEvery := orDefault(s.opts.QuietEvery, QuietEvery)
	next := time.Time{}
	for {
		if !s.opts.Now().Before(next) {
			s.Check(ctx)
			next = s.opts.Now().Add(every)
		}
		if st := s.State(); s.opts.Auto && st.CanInstall && s.opts.Quiet != nil && s.opts.Quiet() {
			if err := s.installAuto(ctx, st); err != nil {
				s.log.Warn("update: automatic update", "err", err)
			}
		}
		wait := every
		if s.opts.Auto {
			wait = quietEvery
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// installAuto starts the automatic update of st's offer, recorded first.
func (s *Service) installAuto(ctx context.Context, st State) error {
	if s.opts.BeforeAuto != nil {
		if err := s.opts.BeforeAuto(ctx, st.Version, st.Offer.Version); err != nil {
			return fmt.Errorf("record the automatic update: %w", err)
		}
	}
	return s.Install(ctx)
}

// Unrecorded is the last update's outcome when the running Hearth has not
// yet recorded it (RecordedOutcome); ok is false otherwise.
func (s *Service) Unrecorded() (o Outcome, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last == nil || s.last.Recorded {
		return Outcome{}, false
	}
	return *s.last, true
}

// RecordedOutcome marks the last outcome recorded (in the ledger), in
// outcome.json, so the next start does not record it again.
func (s *Service) RecordedOutcome() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last == nil {
		return nil
	}
	o := *s.last
	o.Recorded = true
	if err := writeOutcome(s.opts.DataDir, o); err != nil {
		return fmt.Errorf("mark the update's outcome recorded: %w", err)
	}
	s.last = &o
	return nil
}

// Check reads the manifest once and records what it offers.
func (s *Service) Check(ctx context.Context) {
	if s.off != "" {
		return
	}
	s.mu.Lock()
	if s.phase != PhaseIdle {
		s.mu.Unlock()
		return
	}
	s.phase = PhaseChecking
	s.mu.Unlock()
	m, err := FetchManifest(ctx, s.opts.Client, s.opts.URL, s.opts.Key, s.opts.Version, s.opts.Limits)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.phase = PhaseIdle
	s.checked = s.opts.Now()
	if err != nil {
		s.problem = asProblem(err)
		s.log.Warn("update: check", "err", err)
		return
	}
	s.problem = nil
	s.offer = s.offerOf(m)
}

// offerOf is what m offers this Hearth: nil for a version not newer than
// the running one (no downgrade) or without a package for this platform.
func (s *Service) offerOf(m Manifest) *Offer {
	if Compare(m.Version, s.opts.Version) <= 0 {
		return nil
	}
	if _, ok := m.Platforms[Platform()]; !ok {
		return nil
	}
	o := &Offer{Version: m.Version, Changes: m.Changes}
	if ValidVersion(s.opts.Version) && Compare(s.opts.Version, m.MinVersion) < 0 {
		o.Blocked = fmt.Sprintf("Version %s cannot update straight to %s: install Hearth %s or later first (download it from the Hearth website).", Display(s.opts.Version), Display(m.Version), Display(m.MinVersion))
	}
	return o
}

// ErrBusy refuses an Install while one runs, or when there is nothing to
// install.
var ErrBusy = errors.New("an update is already under way")

// Install downloads, verifies and unpacks the offered update in the
// background, then hands over (Options.Handoff). It reads the manifest
// again first, so what is installed is what is signed now, and refuses a
// version not newer than the running one.
func (s *Service) Install(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.off != "":
		return errors.New(s.off)
	case s.opts.Handoff == nil:
		return errors.New("this Hearth cannot restart itself")
	case s.phase != PhaseIdle:
		return ErrBusy
	case s.offer == nil:
		return errors.New("no update is available")
	case s.offer.Blocked != "":
		return errors.New(s.offer.Blocked)
	}
	s.phase = PhaseDownloading
	s.problem = nil
	s.prog.done.Store(0)
	s.prog.total.Store(0)
	go s.install(context.WithoutCancel(ctx))
	return nil
}

func (s *Service) install(ctx context.Context) {
	plan, err := s.prepare(ctx)
	s.mu.Lock()
	if err != nil {
		s.phase = PhaseIdle
		s.problem = asProblem(err)
		s.mu.Unlock()
		s.log.Warn("update: not installed", "err", err)
		return
	}
	s.phase = PhaseRestarting
	s.mu.Unlock()
	s.log.Info("update: handing over", "from", plan.From, "to", plan.To)
	s.opts.Handoff(plan)
}

// prepare is Install's work up to the hand-over.
func (s *Service) prepare(ctx context.Context) (Plan, error) {
	m, err := FetchManifest(ctx, s.opts.Client, s.opts.URL, s.opts.Key, s.opts.Version, s.opts.Limits)
	if err != nil {
		return Plan{}, err
	}
	if Compare(m.Version, s.opts.Version) <= 0 {
		return Plan{}, &Problem{Plain: "The update server now offers no newer version, so Hearth keeps version " + Display(s.opts.Version), Detail: fmt.Sprintf("manifest version %s, running %s", m.Version, s.opts.Version)}
	}
	if o := s.offerOf(m); o == nil || o.Blocked != "" {
		if o != nil {
			return Plan{}, &Problem{Plain: o.Blocked, Detail: "min_version " + m.MinVersion}
		}
		return Plan{}, &Problem{Plain: "The update has no package for this computer", Detail: "no platforms." + Platform() + " in the manifest"}
	}
	a := m.Platforms[Platform()]
	dir := Dir(s.opts.DataDir)
	zipPath, err := Download(ctx, s.opts.Client, a, dir, s.opts.Version, s.opts.Limits, &s.prog)
	if err != nil {
		return Plan{}, err
	}
	defer os.Remove(zipPath)
	return Stage(zipPath, dir, s.opts.Version, m, a)
}

// removeLeftovers deletes the downloads and unpacked programs an update
// that did not finish left in the update folder.
func (s *Service) removeLeftovers() {
	for _, pat := range []string{"download-*.zip", "staged-*"} {
		matches, _ := filepath.Glob(filepath.Join(Dir(s.opts.DataDir), pat))
		for _, m := range matches {
			os.Remove(m)
		}
	}
}

func asProblem(err error) *Problem {
	var p *Problem
	if errors.As(err, &p) {
		return p
	}
	return &Problem{Plain: "The update did not happen", Detail: err.Error()}
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteWith(path, 0o600, func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	}); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func readJSON(path string, v any) (bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	return true, nil
}
