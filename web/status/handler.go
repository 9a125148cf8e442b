// Package status is the control panel's Status page: the MCP endpoint and
// the governance state at a glance, refreshed every 2 s by htmx.
package status

import (
	"context"
	"fmt"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/web/ui"
)

// Handler serves the Status page.
type Handler struct {
	Kit      *ui.Kit
	Gov      *govern.Governor
	Operator *govern.Operator
	Ledger   *ledger.Ledger
	// MCPURL is the MCP endpoint's address.
	MCPURL func() string
	// Tunnel, when set, reports the tunnel-client supervisor's state.
	Tunnel func() (state, reason string)
	// DataDir, when set, is where the last selftest report is read from.
	DataDir string
}

// Mount adds the page's routes.
func (h *Handler) Mount(r chi.Router) {
	r.Get("/", h.page)
	r.Get("/status/live", h.live)
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
	// SelfTest is the last selftest's summary; nil without a data directory.
	SelfTest *SelfTestSummary
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
	v := View{
		MCPURL: h.MCPURL(), Mode: st.Mode, EStop: st.EStop, QueueHeld: st.QueueHeld,
		PendingPermits: len(pending), OpenUnknowns: len(unknowns), LedgerSize: size,
	}
	if h.Tunnel != nil {
		v.TunnelState, v.TunnelReason = h.Tunnel()
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
