package update

import (
	"bytes"
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

// StaleAfter is the age of the newest manifest Hearth could get past which
// the Status page no longer says "up to date": a release server that is
// down, or one replaying an old manifest, must not keep a PC on an old
// version without anyone knowing.
const StaleAfter = 30 * 24 * time.Hour

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
	// BeforeQuiet records an update Run starts at a quiet moment, before
	// it starts: an automatic one (update.auto), or the one the operator
	// asked for when the work in progress is done (asked true), whose
	// click was recorded earlier: the start is recorded too, naming the
	// same version, so the record of the update has both ends. An error
	// stops that update (it is tried again at the next quiet moment). nil
	// records nothing.
	BeforeQuiet func(ctx context.Context, from, to string, asked bool) error
	Log         *slog.Logger
	Now         func() time.Time
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
	// Waiting: the operator asked to update when the work in progress is
	// done (InstallWhenDone); the install starts at the first quiet
	// moment.
	Waiting bool
	// Refused is the release now published when it rolled back on this
	// PC: it is not offered or installed again until a newer one is.
	Refused *Refused
	// NoPackage is the newer version now published when it has no
	// package for this computer's platform.
	NoPackage string
	// Stale is when the newest update information Hearth has was
	// published, when that is over StaleAfter ago; zero otherwise.
	Stale time.Time
}

// Service checks for updates at start and every day, and installs one on
// the operator's request (or by itself with update.auto, at a quiet
// moment).
type Service struct {
	opts Options
	log  *slog.Logger
	off  string
	prog Progress

	// wake tells Run to look again at once (InstallWhenDone).
	wake chan struct{}

	mu      sync.Mutex
	checked time.Time
	offer   *Offer
	phase   string
	problem *Problem
	last    *Outcome
	// accepted is the newest signed manifest accepted, kept (with its
	// signature, in manifest.signed) across restarts: what an offer is
	// installed from, and the floor below which a manifest is a replay.
	accepted    *Manifest
	acceptedMsg []byte
	refused     *Refused
	waiting     bool
}

// New makes the Service; it checks nothing until Run.
func New(opts Options) *Service {
	if opts.Client == nil {
		opts.Client = &http.Client{}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Service{opts: opts, log: opts.Log, wake: make(chan struct{}, 1)}
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
	if r, ok, err := ReadRefused(opts.DataDir); err != nil {
		s.log.Warn("update: read the release that rolled back", "err", err)
	} else if ok {
		s.refused = &r
	}
	if b, err := os.ReadFile(filepath.Join(Dir(opts.DataDir), acceptedFile)); err == nil && opts.Key != "" {
		if m, err := OpenManifest(b, opts.Key); err != nil {
			s.log.Warn("update: the kept manifest does not open", "err", err)
		} else if m.Published.After(opts.Now().Add(PublishedSkew)) {
			// Kept before such dates were refused: it would block every
			// real release.
			s.log.Warn("update: the kept manifest is dated in the future; ignored", "published", m.Published)
		} else {
			s.accepted, s.acceptedMsg = &m, b
			s.offer = s.offerOf(m)
		}
	}
	return s
}

// acceptedFile keeps the newest accepted signed manifest in the update
// folder.
const acceptedFile = "manifest.signed"

// State is the service's state now.
func (s *Service) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := State{Off: s.off, Version: s.opts.Version, Checked: s.checked, Phase: s.phase, Problem: s.problem, Last: s.last}
	if s.offer != nil {
		o := *s.offer
		st.Offer = &o
		st.CanInstall = o.Blocked == "" && s.phase == PhaseIdle && s.opts.Handoff != nil
		st.Waiting = s.waiting
	}
	if m := s.accepted; m != nil {
		if s.isRefused(*m) {
			r := *s.refused
			st.Refused = &r
		}
		if _, ok := m.Platforms[Platform()]; !ok && Compare(m.Version, s.opts.Version) > 0 {
			st.NoPackage = m.Version
		}
		if s.opts.Now().Sub(m.Published) > StaleAfter {
			st.Stale = m.Published
		}
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
		st := s.State()
		if (s.opts.Auto || st.Waiting) && st.CanInstall && s.opts.Quiet != nil && s.opts.Quiet() {
			if err := s.installQuiet(ctx, st); err != nil {
				s.log.Warn("update: update at a quiet moment", "err", err)
			}
		}
		wait := every
		if s.opts.Auto || st.Waiting {
			wait = quietEvery
		}
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		case <-time.After(wait):
		}
	}
}

// InstallWhenDone installs the offered update at the first quiet moment
// (no call in flight, no task queued or running, no approval waiting),
// as update.auto does, instead of stopping the work in progress; Run
// starts it. Install (Update now) still may start it at once.
func (s *Service) InstallWhenDone() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.canInstallLocked(); err != nil {
		return err
	}
	s.waiting = true
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return nil
}

// installQuiet starts the update of st's offer at a quiet moment
// (automatic, or asked for when the work is done), recorded first.
func (s *Service) installQuiet(ctx context.Context, st State) error {
	if s.opts.BeforeQuiet != nil {
		if err := s.opts.BeforeQuiet(ctx, st.Version, st.Offer.Version, st.Waiting); err != nil {
			return fmt.Errorf("record the update's start: %w", err)
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
	m, msg, err := FetchManifest(ctx, s.opts.Client, s.opts.URL, s.opts.Key, s.opts.Version, s.opts.Limits)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.phase = PhaseIdle
	s.checked = s.opts.Now()
	if err == nil {
		err = s.acceptLocked(m, msg)
	}
	if err != nil {
		s.problem = asProblem(err)
		s.log.Warn("update: check", "err", err)
		return
	}
	s.problem = nil
}

// PublishedSkew is how far in the future a manifest's published time may
// be: a signer's clock a little ahead, or this PC's a little behind, is
// tolerated; further, the manifest is refused, because an accepted
// manifest is the floor for every later one and a date far ahead would
// block every real release until someone deleted manifest.signed.
const PublishedSkew = 24 * time.Hour

// acceptLocked takes m (signed as msg) as the newest release information,
// unless it was published before the one accepted last (an older signed
// manifest served again would keep this PC on an old version), at the
// same time with another signed text (of two manifests signed in the same
// second, either could otherwise be served again), or more than
// PublishedSkew after now. The accepted manifest is kept in the update
// folder with its signature.
func (s *Service) acceptLocked(m Manifest, msg []byte) error {
	if now := s.opts.Now(); m.Published.After(now.Add(PublishedSkew)) {
		return &Problem{
			Plain:  "The update information is dated in the future (the release was signed with a wrong date, or this computer's clock is wrong), so Hearth ignored it; check the date and time on this computer",
			Detail: fmt.Sprintf("manifest version %s published %s; this computer's time %s; at most %s ahead is accepted", m.Version, m.Published.Format(time.RFC3339), now.UTC().Format(time.RFC3339), PublishedSkew),
		}
	}
	if old := s.accepted; old != nil {
		if bytes.Equal(msg, s.acceptedMsg) {
			return nil
		}
		if !m.Published.After(old.Published) {
			return &Problem{
				Plain:  "The update server sent update information that is not newer than what Hearth already had, so Hearth ignored it",
				Detail: fmt.Sprintf("manifest version %s published %s; Hearth accepted version %s published %s (a different manifest must be published later)", m.Version, m.Published.Format(time.RFC3339), old.Version, old.Published.Format(time.RFC3339)),
			}
		}
	}
	if err := os.MkdirAll(Dir(s.opts.DataDir), 0o700); err == nil {
		err = writeFileAtomic(filepath.Join(Dir(s.opts.DataDir), acceptedFile), msg)
		if err != nil {
			s.log.Warn("update: keep the manifest", "err", err)
		}
	}
	s.accepted, s.acceptedMsg = &m, msg
	if s.offer == nil || s.offer.Version != m.Version {
		// What the operator asked for is not what is offered now.
		s.waiting = false
	}
	s.offer = s.offerOf(m)
	return nil
}

// isRefused reports whether m's package for this platform is the release
// that rolled back on this PC.
func (s *Service) isRefused(m Manifest) bool {
	if s.refused == nil || !s.refused.refuses() {
		return false
	}
	a, ok := m.Platforms[Platform()]
	return ok && Compare(m.Version, s.refused.Version) == 0 && a.SHA256 == s.refused.SHA256
}

// offerOf is what m offers this Hearth: nil for a version not newer than
// the running one (no downgrade), without a package for this platform, or
// the release that rolled back here (until a newer one is published).
func (s *Service) offerOf(m Manifest) *Offer {
	if Compare(m.Version, s.opts.Version) <= 0 {
		return nil
	}
	if _, ok := m.Platforms[Platform()]; !ok {
		return nil
	}
	if s.isRefused(m) {
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
// background, then hands over (Options.Handoff). What it installs is the
// manifest the offer came from; it reads the published one again first,
// and if that changed, it stops and offers the new one instead (the
// operator approved what they saw, not whatever is newest).
func (s *Service) Install(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.canInstallLocked(); err != nil {
		return err
	}
	s.waiting = false
	s.phase = PhaseDownloading
	s.problem = nil
	s.prog.done.Store(0)
	s.prog.total.Store(0)
	go s.install(context.WithoutCancel(ctx))
	return nil
}

// canInstallLocked is why the offer cannot be installed now, or nil.
func (s *Service) canInstallLocked() error {
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
	s.mu.Lock()
	kept, keptMsg := s.accepted, s.acceptedMsg
	s.mu.Unlock()
	if kept == nil {
		return Plan{}, errors.New("no update information is kept")
	}
	m := *kept
	now, msg, err := FetchManifest(ctx, s.opts.Client, s.opts.URL, s.opts.Key, s.opts.Version, s.opts.Limits)
	if err != nil {
		return Plan{}, err
	}
	if !bytes.Equal(msg, keptMsg) {
		s.mu.Lock()
		err := s.acceptLocked(now, msg)
		s.mu.Unlock()
		if err != nil {
			return Plan{}, err
		}
		return Plan{}, &Problem{
			Plain:  "The update changed on the update server after Hearth offered it, so Hearth did not install it; look at the update offered now",
			Detail: fmt.Sprintf("offered version %s published %s; now published: version %s published %s", m.Version, m.Published.Format(time.RFC3339), now.Version, now.Published.Format(time.RFC3339)),
		}
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

// writeFileAtomic replaces path with b through Hearth's one atomic
// writer.
func writeFileAtomic(path string, b []byte) error {
	err := atomicfile.Replacer{Private: true}.WriteWith(path, 0o600, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
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
	return writeFileAtomic(path, append(b, '\n'))
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
