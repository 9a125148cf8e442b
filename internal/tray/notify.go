package tray

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/periodic"
)

// Notifications: the tray tells the user, with a Windows notification,
// when ChatGPT starts waiting for a permit, when the emergency stop
// latches and when a safety setting is lowered; clicking the notification opens that page of the control panel,
// signed in. Which notification to show is decided here, portably
// (Notifier, tested on Linux); showing it is Windows code
// (notify_windows.go).

// Notice is one notification.
type Notice struct {
	Kind  NoticeKind
	Title string
	Text  string
	// Page is the control panel page a click opens, signed in.
	Page string
}

// NoticeKind says what a notice is about.
type NoticeKind int

// The kinds of notice.
const (
	NoticePermit NoticeKind = iota + 1
	NoticeEStop
	// NoticeLowered: a safety setting was lowered (see LoweredSetting).
	NoticeLowered
)

// DefaultDebounce is the least time between two permit notifications: a
// burst of requests becomes one notification, then one more for those
// that arrived meanwhile.
const DefaultDebounce = 10 * time.Second

// WaitingPermit is a pending permit as the Notifier sees it.
type WaitingPermit struct {
	ID string
	// Summary says in plain words what ChatGPT asks to do.
	Summary string
}

// LoweredSetting is a lowered safety setting (trusted mode, an
// always-rule or folder rule, an e-stop reset) as the Notifier sees it:
// each is announced once.
type LoweredSetting struct {
	// Seq is its ledger entry, which orders and names it.
	Seq int64
	// What says it in plain words; By is who made it.
	What, By string
	// At is when it was made.
	At time.Time
}

// Observation is what one poll of Hearth saw.
type Observation struct {
	// Permits are the pending permits.
	Permits     []WaitingPermit
	EStop       bool
	EStopReason string
	// Lowered are the lowered safety settings the operator has not
	// marked seen in the panel.
	Lowered []LoweredSetting
}

// Notifier decides which notices to show from successive Observations:
// a permit is announced once, when it is first seen waiting (at the
// earliest Debounce after the previous permit notice, together with any
// others that started waiting meanwhile and are still waiting); the
// e-stop is announced when it goes from released to latched, never while
// it stays latched. The first observation announces the permits already
// waiting (ChatGPT waits for them now) but not an e-stop already latched
// (the icon shows it; nothing just happened). The zero value is ready.
type Notifier struct {
	// Debounce is the least time between permit notices; 0 means
	// DefaultDebounce.
	Debounce time.Duration
	// Since is when this Hearth started: the first observation announces
	// the lowerings made since (Hearth itself makes one while starting
	// when config.json was edited to trusted), not older ones.
	Since time.Time

	started   bool
	estop     bool
	seen      map[string]bool // pending permits seen so far
	waiting   []WaitingPermit // seen, not yet announced
	lastPermN time.Time       // when the last permit notice was shown
	lowSeq    int64           // the newest lowering announced (its ledger entry)
}

// Observe returns the notices that obs, seen at now, calls for.
func (n *Notifier) Observe(now time.Time, obs Observation) []Notice {
	var out []Notice
	if n.started && obs.EStop && !n.estop {
		out = append(out, estopNotice(obs.EStopReason))
	}
	n.estop = obs.EStop
	out = append(out, n.lowered(obs.Lowered)...)

	pending := make(map[string]bool, len(obs.Permits))
	for _, p := range obs.Permits {
		pending[p.ID] = true
		if !n.seen[p.ID] {
			n.waiting = append(n.waiting, p)
		}
	}
	// Forget what is no longer pending: a permit decided before it was
	// announced needs no notice, and the seen set stays as small as the
	// list of pending permits.
	n.seen = pending
	still := n.waiting[:0]
	for _, p := range n.waiting {
		if pending[p.ID] {
			still = append(still, p)
		}
	}
	n.waiting = still
	n.started = true

	debounce := n.Debounce
	if debounce <= 0 {
		debounce = DefaultDebounce
	}
	if len(n.waiting) > 0 && (n.lastPermN.IsZero() || now.Sub(n.lastPermN) >= debounce || now.Before(n.lastPermN)) {
		out = append(out, permitNotice(n.waiting, len(obs.Permits)))
		n.waiting = nil
		n.lastPermN = now
	}
	return out
}

func permitNotice(fresh []WaitingPermit, total int) Notice {
	nt := Notice{Kind: NoticePermit, Page: "/permits", Title: "ChatGPT is waiting for your permission"}
	switch {
	case len(fresh) == 1 && total <= 1:
		nt.Text = fresh[0].Summary
	case len(fresh) == 1:
		nt.Text = fmt.Sprintf("%s (%d requests are waiting)", fresh[0].Summary, total)
	default:
		nt.Title = fmt.Sprintf("ChatGPT is waiting for your permission (%d requests)", total)
		nt.Text = fmt.Sprintf("%d new requests, the first: %s", len(fresh), fresh[0].Summary)
	}
	nt.Text = clip(nt.Text+" Click to decide.", maxNoticeText)
	return nt
}

func estopNotice(reason string) Notice {
	text := "Hearth refuses everything that would change this PC until you reset it."
	if reason != "" {
		text = clip("Reason: "+reason+". "+text, maxNoticeText)
	}
	return Notice{Kind: NoticeEStop, Page: "/safety", Title: "Emergency stop is on", Text: text}
}

// lowered returns one notice for each lowering newer than the last one
// announced. The first observation announces only those made since
// Since (one Hearth made while starting, from config.json); the older
// ones were announced by an earlier run, and the panel's banner shows
// them.
func (n *Notifier) lowered(list []LoweredSetting) []Notice {
	var out []Notice
	for _, l := range list {
		if l.Seq <= n.lowSeq {
			continue
		}
		if n.started || !n.Since.IsZero() && !l.At.Before(n.Since) {
			out = append(out, Notice{Kind: NoticeLowered, Page: "/safety", Title: "Safety was lowered",
				Text: clip(l.What+" ("+l.By+"). Not you? Click, then press the emergency stop.", maxNoticeText)})
		}
		n.lowSeq = l.Seq
	}
	return out
}

// Notice text limits, in characters: Windows shows at most 63 of the
// title and 255 of the text, and fewer fit on the screen.
const (
	maxNoticeText  = 200
	maxSummaryPart = 80
)

// PermitSummary says in plain words what a pending permit asks for:
// "ChatGPT wants to run ls -la in C:\src".
func PermitSummary(p govern.Permit) string {
	var in struct {
		Command  string            `json:"command"`
		Args     []string          `json:"args"`
		Cwd      string            `json:"cwd"`
		Commands []json.RawMessage `json:"commands"`
		Path     string            `json:"path"`
	}
	_ = json.Unmarshal([]byte(p.Input), &in)
	switch {
	case in.Command != "":
		verb, after := "run ", ""
		if p.Primitive == "machine.session_start" {
			// Approved, ChatGPT types into it without asking again.
			verb, after = "start ", " and type into it"
		}
		s := "ChatGPT wants to " + verb + clip(strings.Join(append([]string{in.Command}, in.Args...), " "), maxSummaryPart)
		cwd := in.Cwd
		if len(p.Programs) == 1 && p.Programs[0].Cwd != "" {
			// The folder it would run in, also when the call names none.
			cwd = p.Programs[0].Cwd
		}
		if cwd != "" {
			s += " in " + clip(cwd, maxSummaryPart)
		}
		return s + after
	case len(in.Commands) > 0:
		return fmt.Sprintf("ChatGPT wants to run %d commands", len(in.Commands))
	case strings.HasPrefix(p.Primitive, "fs.") && in.Path != "":
		return "ChatGPT wants to change " + clip(in.Path, maxSummaryPart)
	case strings.HasPrefix(p.Primitive, "ui."):
		return "ChatGPT wants to use an app on your screen"
	}
	return "ChatGPT asks to use " + p.Primitive
}

// Notifications polls a running Hearth and shows what its Notifier
// decides. Set the fields, then call Run.
type Notifications struct {
	// Permits lists the pending permits; Status reads the e-stop.
	Permits func(ctx context.Context) ([]govern.Permit, error)
	Status  func(ctx context.Context) (govern.Status, error)
	// Lowered lists the lowered safety settings not yet marked seen; nil
	// announces none.
	Lowered func(ctx context.Context) ([]govern.Lowering, error)
	// Since is when this Hearth started (Notifier.Since).
	Since time.Time
	// Show shows a notice (a Windows notification).
	Show func(Notice) error
	// Every is how often Hearth is polled; 0 means DefaultEvery.
	Every    time.Duration
	Debounce time.Duration
	Log      *slog.Logger
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time

	n       Notifier
	readErr bool
	showErr bool
}

// NotificationsFor is the Notifications of a running Hearth, showing
// through show.
func NotificationsFor(h Hearth, show func(Notice) error) *Notifications {
	return &Notifications{Permits: h.Permits, Status: h.Status, Lowered: h.Lowered, Since: h.Started, Show: show}
}

func (w *Notifications) log() *slog.Logger {
	if w.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return w.Log
}

// Run polls until ctx ends.
func (w *Notifications) Run(ctx context.Context) {
	every := w.Every
	if every <= 0 {
		every = DefaultEvery
	}
	periodic.Run(ctx, every, true, func(ctx context.Context) { w.Poll(ctx) })
}

// Poll reads Hearth's state once and shows the notices it calls for. A
// failed read decides nothing (the state is unknown, not "no permits").
func (w *Notifications) Poll(ctx context.Context) []Notice {
	now := time.Now
	if w.Now != nil {
		now = w.Now
	}
	w.n.Debounce, w.n.Since = w.Debounce, w.Since
	perms, err := w.Permits(ctx)
	st, serr := w.Status(ctx)
	var lowered []govern.Lowering
	var lerr error
	if w.Lowered != nil {
		lowered, lerr = w.Lowered(ctx)
	}
	if err = errors.Join(err, serr, lerr); err != nil {
		if !w.readErr && ctx.Err() == nil {
			w.log().Error("tray notifications: read hearth state", "err", err)
		}
		w.readErr = true
		return nil
	}
	w.readErr = false
	obs := Observation{EStop: st.EStop.Latched, EStopReason: st.EStop.Reason}
	for _, p := range perms {
		obs.Permits = append(obs.Permits, WaitingPermit{ID: p.ID, Summary: PermitSummary(p)})
	}
	for _, l := range lowered {
		by := l.By
		if w := govern.SessionWords(l.Session); w != "" {
			by += ", " + w
		}
		obs.Lowered = append(obs.Lowered, LoweredSetting{Seq: l.Seq, What: l.What, By: by, At: l.At})
	}
	notices := w.n.Observe(now(), obs)
	for _, nt := range notices {
		if err := w.Show(nt); err != nil {
			// Logged once while it keeps failing (no notification area).
			if !w.showErr {
				w.log().Warn("tray: show a notification", "title", nt.Title, "err", err)
			}
			w.showErr = true
			continue
		}
		w.showErr = false
	}
	return notices
}
