// Package status is the control panel's Status page: one sentence first
// (ChatGPT can reach Hearth / Finish setting up / ChatGPT cannot reach
// Hearth: why), then the governance state in plain words, the exact
// values behind "Details"; refreshed every 2 s by htmx.
package status

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/hearth-dev/hearth/internal/artifacts"
	"github.com/hearth-dev/hearth/internal/control"
	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/internal/store"
	"github.com/hearth-dev/hearth/web/ui"
)

// Handler serves the Status page.
type Handler struct {
	Kit      *ui.Kit
	Gov      *govern.Governor
	Operator *control.Operator
	Ledger   *ledger.Ledger
	// MCPURL is the MCP endpoint's address.
	MCPURL func() string
	// Tunnel, when set, reports the tunnel-client supervisor's state.
	Tunnel func() (state, reason string)
	// LastBackup, when set, reports the newest verified backup.
	LastBackup func() Backup
	// AnyAccount: loopback_same_user is false (see AnyAccountNotice).
	AnyAccount bool
	// Storage, when set, reports the space stored copies take and the
	// budget (storage_budget_bytes).
	Storage func(ctx context.Context) (used, budget int64, err error)
	// Undo, when set, reports undo copies' space and reach (UndoLine).
	Undo func(ctx context.Context) (Undo, error)
	// Reach, when set, says whether setup is finished and ChatGPT can
	// reach Hearth, with the tunnel's state in a sentence (setup.Summary).
	Reach func() (setupDone, ready bool, sentence string)
	// DataDir, when set, is where the last selftest report is read from.
	DataDir string
	// Ports, when set, reports the listeners Hearth moved off a taken port.
	Ports func() []PortMove
	// Update, when set, is the update card's handler (update.go).
	Update *UpdateHandler
	// DiskFull, when set, reports whether the disk holding Hearth's data
	// is full (store.DB.DiskFull, which looks again while it is).
	DiskFull func(ctx context.Context) store.DiskFull
}

// Mount adds the page's routes.
func (h *Handler) Mount(r chi.Router) {
	r.Get("/", h.page)
	r.Get("/status/live", h.live)
	if h.Update != nil {
		h.Update.Mount(r)
	}
	if h.DataDir != "" {
		r.Get("/status/selftest-report", h.selfTestReport)
	}
}

// View is what the page shows.
type View struct {
	MCPURL         string
	Mode           string
	EStop          govern.EStopState
	QueueHeld      bool
	PendingPermits int
	OpenUnknowns   int
	LedgerSize     int64
	TunnelState    string
	TunnelReason   string
	Backup         Backup
	AnyAccount     bool
	// Storage is "used of budget" for stored copies; empty hides it.
	Storage string
	// Undo is the undo copies' line (UndoLine); Now is when the page was read.
	Undo Undo
	Now  time.Time
	// Reach: Reach was set; SetupDone, Ready and Sentence are its answer.
	Reach     bool
	SetupDone bool
	Ready     bool
	Sentence  string
	// SelfTest is the last selftest's summary; nil without a data directory.
	SelfTest *SelfTestSummary
	// Flagged are the latest writes that ask in ask mode (a program that
	// starts by itself, a hidden file, a program),
	// run without asking because the mode trusted them.
	Flagged []govern.FlaggedWrite
	// Ports are the listeners moved off a taken port (PortsNotice).
	Ports []PortMove
	// Update is the update card; nil hides it.
	Update *UpdateView
	// DiskFull says whether the disk holding Hearth's data is full; while
	// it is, the page leads with that.
	DiskFull store.DiskFull
}

func (h *Handler) load(ctx context.Context) (View, error) {
	st, err := h.Gov.Status(ctx)
	if err != nil {
		return View{}, fmt.Errorf("read governance status: %w", err)
	}
	pending, err := h.Operator.Permits(ctx, "pending")
	if err != nil {
		return View{}, fmt.Errorf("list pending permits: %w", err)
	}
	unknowns, err := h.Gov.Unknowns(ctx, "")
	if err != nil {
		return View{}, fmt.Errorf("list open unknowns: %w", err)
	}
	size, err := h.Ledger.Size(ctx)
	if err != nil {
		return View{}, err
	}
	flagged, err := h.Gov.Flagged(ctx, 5)
	if err != nil {
		return View{}, err
	}
	v := View{
		Flagged: flagged,
		MCPURL:  h.MCPURL(), Mode: st.Mode, EStop: st.EStop, QueueHeld: st.QueueHeld,
		PendingPermits: len(pending), OpenUnknowns: len(unknowns), LedgerSize: size,
		AnyAccount: h.AnyAccount,
	}
	if h.Ports != nil {
		v.Ports = h.Ports()
	}
	if h.DiskFull != nil {
		v.DiskFull = h.DiskFull(ctx)
	}
	if h.Tunnel != nil {
		v.TunnelState, v.TunnelReason = h.Tunnel()
	}
	if h.LastBackup != nil {
		v.Backup = h.LastBackup()
	}
	if h.Storage != nil {
		used, budget, err := h.Storage(ctx)
		if err != nil {
			return View{}, fmt.Errorf("measure storage: %w", err)
		}
		v.Storage = artifacts.StorageLine(used, budget)
	}
	if h.Undo != nil {
		if v.Undo, err = h.Undo(ctx); err != nil {
			return View{}, fmt.Errorf("measure undo copies: %w", err)
		}
		v.Now = time.Now()
	}
	if h.Reach != nil {
		v.Reach = true
		v.SetupDone, v.Ready, v.Sentence = h.Reach()
	}
	return v, nil
}

func (h *Handler) page(w http.ResponseWriter, r *http.Request) {
	v, err := h.load(r.Context())
	if err != nil {
		h.Kit.Fail(w, r, "status page", err)
		return
	}
	// The selftest report is read for the page, not its live part.
	if h.DataDir != "" {
		st := h.selfTest()
		v.SelfTest = &st
	}
	if h.Update != nil {
		u := h.Update.view(r)
		v.Update = &u
	}
	h.Kit.Render(w, r, http.StatusOK, Page(h.Kit.Chrome(r, "Status", "status"), v))
}

func (h *Handler) live(w http.ResponseWriter, r *http.Request) {
	v, err := h.load(r.Context())
	if err != nil {
		h.Kit.Fail(w, r, "status fragment", err)
		return
	}
	h.Kit.Render(w, r, http.StatusOK, Facts(v))
}

// ModeLabel says a policy mode in words: what the risk table
// (internal/risk) makes it ask, in one line (TestModeLabelSaysWhatAsks
// holds the two together).
func ModeLabel(mode string) string {
	switch mode {
	case "ask":
		return "Asks you before it runs a program or writes anything but a document (code, settings, hidden files, anything that would start by itself); " +
			"it writes documents in your folders, and code and settings in the workspaces you named, without asking"
	case "read-only":
		return "Only reads: it changes nothing on this computer"
	case "trusted":
		return "Runs programs and writes any file without asking"
	}
	return mode
}

// waitingSentence leads the page while calls wait for the operator.
func waitingSentence(n int) string {
	if n == 1 {
		return "ChatGPT is waiting for you to decide"
	}
	return "ChatGPT is waiting for you to decide on " + strconv.Itoa(n) + " requests"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
