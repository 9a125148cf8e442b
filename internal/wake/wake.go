// Package wake brings ChatGPT back to a conversation when its detached work
// is done (seed "Secure MCP Tunnel hookup", docs/DESIGN.md, "Wake").
//
// It has four parts:
//
//   - a route probe: an early pending answer in a conversation routed by
//     _meta["openai/session"] carries route_probe {nonce, expires_at}, a
//     random nonce reusable until it expires and bound to the route hash
//     only (RouteProbe), given only while automatic wake is armed or the
//     window below is open or opening;
//   - a ChatGPT window Hearth owns: Edge or Chrome started as Hearth's own
//     child with a dedicated profile under the data directory, speaking the
//     Chrome DevTools Protocol over --remote-debugging-pipe (descriptors 3
//     and 4; on Windows the C runtime's inherited handle table), never a
//     TCP port, so no other process or user can attach (Open, Launch);
//   - a binder: over that connection only, it lists the page targets on
//     allow-listed origins (chatgpt.com, chat.openai.com), reads each with
//     one fixed read-only script that looks for a live probe nonce in the
//     page's visible text, and binds route hash ↔ target id ↔ stable
//     /c/<id> URL. Only those three are stored. A nonce seen in two tabs
//     binds neither; a binding follows its conversation's /c/<id> to a new
//     target after a reload, a navigation or a restart;
//   - a waker: off until the operator arms it (panel or config, never a
//     tool), it wakes a bound, quiet conversation (no call for
//     wake.quiet_ms, no reply being generated in its tab) that has
//     undelivered terminal arrivals, after a debounce, with a cooldown per
//     tab and at most wake.max_attempts wakes until the conversation calls
//     again. A wake types one fixed prompt (WakePrompt) into the tab's
//     composer and sends it.
//
// Every bind, unbind, wake and give-up is journaled in the ledger with the
// route hash and the target id only.
//
// How the nonce reaches the page: the pending answer's text (which ChatGPT
// shows as the tool's output) names it, and asks the model to repeat it
// once in its reply, because ChatGPT does not always render a tool's
// output in the page. The binder finds it either way: it reads the page's
// visible text.
//
// The binder does not poll pages in a loop: it reads pages only when a
// probe is live and unbound (every ScanEvery) or when the browser reports
// a target change, and at wake time the one tab it is about to wake. While
// armed, the waker's periodic check is one small database read.
package wake

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"regexp"
	"sync"
	"time"

	"github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/internal/store"
)

// Ledger kinds of wake entries. Their data carries the route hash and the
// target id only.
const (
	KindBind    = "wake_bind"
	KindUnbind  = "wake_unbind"
	KindWake    = "wake_sent"
	KindGiveUp  = "wake_give_up"
	KindArmed   = "wake_armed"
	KindSetting = "wake_settings"
)

// WakePrompt is the one prompt an automatic wake types into a tab.
const WakePrompt = "Hearth: detached work you started in this conversation has finished. Call machine.host_info once (its answer carries the results as arrivals), then continue the task from them."

// Timing of the binder and the waker (not settings: they bound Hearth's
// own cost, see the package comment).
const (
	// ScanEvery is how often pages are read while a probe is live and
	// unbound.
	ScanEvery = 2 * time.Second
	// CheckEvery is how often an armed waker looks for due wakes (a
	// database read; pages are read only for a due wake).
	CheckEvery = time.Second
)

// AllowedOrigins are the only origins whose pages the binder reads.
var allowedOrigins = []string{"https://chatgpt.com", "https://chat.openai.com"}

// Settings are the operator's wake settings (config keys wake.*).
type Settings struct {
	// BrowserPath overrides the browser found in the standard places.
	BrowserPath string
	// Debounce is how long the newest undelivered arrival must have waited
	// before a wake, so that a burst of results is one wake.
	Debounce time.Duration
	// Quiet is how long a conversation must not have called Hearth.
	Quiet time.Duration
	// Cooldown is the least time between two wakes of one tab.
	Cooldown time.Duration
	// MaxAttempts bounds the wakes sent until the conversation calls again.
	MaxAttempts int
	// ProbeTTL is how long a route probe nonce lives.
	ProbeTTL time.Duration
}

// DefaultSettings are the defaults of the wake.* config keys.
func DefaultSettings() Settings {
	return Settings{Debounce: 3 * time.Second, Quiet: 20 * time.Second, Cooldown: 5 * time.Minute, MaxAttempts: 3, ProbeTTL: time.Hour}
}

// Journal appends ledger entries (*ledger.Ledger).
type Journal interface {
	Append(ctx context.Context, kind string, data any) (ledger.Entry, error)
}

// Options build a Service.
type Options struct {
	DB      *store.DB
	Journal Journal
	// Undelivered says how many terminal arrivals a conversation has that
	// no response offered yet, and when the newest arrived (the engine
	// owns the mailboxes: dispatch.Undelivered). Required.
	Undelivered func(ctx context.Context, route string) (int, time.Time, error)
	Log         *slog.Logger
	// DataDir holds the browser profile (DataDir/chatgpt-profile).
	DataDir  string
	Armed    bool
	Settings Settings
}

// Binding is one conversation bound to one tab.
type Binding struct {
	Route      string
	TargetID   string
	ConvURL    string
	BoundAt    time.Time
	LastWakeAt *time.Time
	// Attempts counts the wakes sent since the conversation last called.
	Attempts int
	// GaveUp is set when Attempts reached the limit with results still
	// waiting; it clears when the conversation calls again.
	GaveUp bool
	// Live reports whether the tab is open in Hearth's window now.
	Live bool
}

// Window is the state of Hearth's ChatGPT window.
type Window struct {
	Open    bool
	Pid     int
	Browser string
	// Error is why the last open failed ("" if it did not).
	Error string
}

type probe struct {
	nonce   string
	expires time.Time
}

// Service is the route probe, Hearth's ChatGPT window, the binder and the
// waker.
type Service struct {
	db          *store.DB
	journal     Journal
	undelivered func(ctx context.Context, route string) (int, time.Time, error)
	log         *slog.Logger
	profile     string
	seams       seams // what tests may set (fortest.go); zero in the program
	kick        chan struct{}

	mu       sync.Mutex
	armed    bool
	settings Settings
	probes   map[string]probe // route → probe
	lastCall map[string]time.Time
	started  time.Time
	bindings map[string]*Binding
	browser  *Browser
	window   Window
	opening  int  // Opens under way (a window that is opening can bind)
	serving  bool // between Start and Stop
	dirty    bool // targets changed since the last scan
	lastScan time.Time
	nextDue  time.Time // when the waker's next seen wake falls due
	stats    Stats

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Stats count what the binder and the waker did (shown in the panel and
// read by tests).
type Stats struct {
	Steps      int // loop passes
	Checks     int // armed waker passes
	Scans      int
	PageReads  map[string]int // target id → reads
	Wakes      int
	GiveUps    int
	Ambiguous  int // nonces seen in more than one tab
	SkippedGen int // due wakes skipped because a reply was being generated
}

// New builds the service; nothing runs until Start.
func New(o Options) (*Service, error) {
	if o.DB == nil || o.Journal == nil || o.Undelivered == nil {
		return nil, errors.New("wake: a database, a journal and Undelivered are required")
	}
	if o.DataDir == "" {
		return nil, errors.New("wake: a data directory is required")
	}
	if err := o.Settings.Validate(); err != nil {
		return nil, err
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{
		db: o.DB, journal: o.Journal, undelivered: o.Undelivered, log: log,
		profile:  filepath.Join(o.DataDir, "chatgpt-profile"),
		kick:     make(chan struct{}, 1),
		armed:    o.Armed,
		settings: o.Settings,
		probes:   map[string]probe{},
		lastCall: map[string]time.Time{},
		bindings: map[string]*Binding{},
		stats:    Stats{PageReads: map[string]int{}},
	}, nil
}

// Validate checks the settings; a problem names its wake.* key.
func (s Settings) Validate() error {
	checks := []struct {
		key    string
		v      time.Duration
		lo, hi time.Duration
	}{
		{"wake.debounce_ms", s.Debounce, 0, time.Hour},
		{"wake.quiet_ms", s.Quiet, 0, 24 * time.Hour},
		{"wake.cooldown_ms", s.Cooldown, 0, 24 * time.Hour},
		{"wake.probe_ttl_ms", s.ProbeTTL, time.Second, 7 * 24 * time.Hour},
	}
	for _, c := range checks {
		if c.v < c.lo || c.v > c.hi {
			return fmt.Errorf("%s: %d is out of range [%d, %d]", c.key, c.v.Milliseconds(), c.lo.Milliseconds(), c.hi.Milliseconds())
		}
	}
	if s.MaxAttempts < 1 || s.MaxAttempts > 100 {
		return fmt.Errorf("wake.max_attempts: %d is out of range [1, 100]", s.MaxAttempts)
	}
	return nil
}

func (s *Service) poke() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// Start loads the bindings and runs the binder and the waker until Stop.
func (s *Service) Start(ctx context.Context) error {
	bs, err := s.loadBindings(ctx)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.mu.Lock()
	s.started = time.Now()
	for _, b := range bs {
		s.bindings[b.Route] = b
	}
	s.cancel, s.serving = cancel, true
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.run(ctx)
	}()
	return nil
}

// Stop ends the loop and closes Hearth's browser window.
func (s *Service) Stop() {
	s.mu.Lock()
	cancel := s.cancel
	s.serving = false
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	s.wg.Wait()
	s.mu.Lock()
	b := s.browser
	s.browser = nil
	s.mu.Unlock()
	if b != nil {
		if err := b.Close(); err != nil {
			s.log.Warn("wake: close the ChatGPT window", "err", err)
		}
	}
}

// Armed reports whether automatic wake is armed.
func (s *Service) Armed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.armed
}

// SetArmed arms or disarms automatic wake for the operator (journaled).
// Persisting the choice in config.json is the caller's.
func (s *Service) SetArmed(ctx context.Context, operator string, armed bool) error {
	if _, err := s.journal.Append(ctx, KindArmed, map[string]any{"armed": armed, "operator": operator}); err != nil {
		return fmt.Errorf("journal wake arming: %w", err)
	}
	s.mu.Lock()
	s.armed = armed
	s.mu.Unlock()
	s.poke()
	return nil
}

// Settings returns the live settings.
func (s *Service) Settings() Settings {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settings
}

// SetSettings replaces the settings for the operator (journaled).
func (s *Service) SetSettings(ctx context.Context, operator string, set Settings) error {
	if err := set.Validate(); err != nil {
		return err
	}
	if _, err := s.journal.Append(ctx, KindSetting, map[string]any{
		"operator": operator, "debounce_ms": set.Debounce.Milliseconds(), "quiet_ms": set.Quiet.Milliseconds(),
		"cooldown_ms": set.Cooldown.Milliseconds(), "max_attempts": set.MaxAttempts, "probe_ttl_ms": set.ProbeTTL.Milliseconds(),
	}); err != nil {
		return fmt.Errorf("journal wake settings: %w", err)
	}
	s.mu.Lock()
	s.settings = set
	s.mu.Unlock()
	s.poke()
	return nil
}

// Stats returns a copy of the counters.
func (s *Service) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.stats
	c.PageReads = make(map[string]int, len(s.stats.PageReads))
	for k, v := range s.stats.PageReads {
		c.PageReads[k] = v
	}
	return c
}

// nonceRE is the shape of a route probe nonce; the page script looks for
// the same pattern.
var nonceRE = regexp.MustCompile(`^hrp_[0-9a-f]{32}$`)
