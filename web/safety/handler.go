// Package safety is the control panel's Safety page: the emergency stop,
// its reset (the operator types "reset"), offered as "Reset and resume
// the queue" beside a reset alone, resuming the held job queue,
// reconciling open UNKNOWN outcomes and the policy mode. Every action is a
// plain form POST, so the essentials work without JavaScript.
package safety

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/control"
	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/risk"
	"github.com/hearth-dev/hearth/web/ui"
)

// ResetWord is what the operator must type to reset the e-stop.
const ResetWord = "reset"

// Bounds of the free-text fields.
const (
	maxReason   = 500
	maxObserved = 4000
)

// Mode is a policy mode as the page offers it.
type Mode struct{ Value, Label, Help string }

// Modes are the policy modes the operator can choose, in order, each
// described from the risk table (internal/risk), which decides what the
// mode does.
var Modes = []Mode{
	{config.ModeAsk, risk.ModeLabel(config.ModeAsk), risk.Describe(config.ModeAsk).Plain()},
	{config.ModeTrusted, risk.ModeLabel(config.ModeTrusted), risk.Describe(config.ModeTrusted).Plain()},
	{config.ModeReadOnly, risk.ModeLabel(config.ModeReadOnly), risk.Describe(config.ModeReadOnly).Plain()},
}

// Handler serves the Safety page and its actions.
type Handler struct {
	Kit      *ui.Kit
	Gov      *govern.Governor
	Operator *control.Operator
	// Chats labels the conversation of each interrupted call.
	Chats ui.Chats
}

// Mount adds the page's routes.
func (h *Handler) Mount(r chi.Router) {
	r.Get("/safety", h.page)
	r.Post("/safety/estop", h.estop)
	r.Post("/safety/reset", h.reset)
	r.Post("/safety/resume", h.resume)
	r.Post("/safety/reconcile", h.reconcile)
	r.Post("/safety/policy", h.policy)
}

// View is what the page shows.
type View struct {
	Status   govern.Status
	Unknowns []govern.Unknown
	// Chats are the readable labels of the Unknowns' conversations, by
	// route.
	Chats map[string]string
}

func (h *Handler) page(w http.ResponseWriter, r *http.Request) {
	st, err := h.Gov.Status(r.Context())
	if err != nil {
		h.Kit.Fail(w, r, "read governance status", err)
		return
	}
	unknowns, err := h.Gov.Unknowns(r.Context(), "")
	if err != nil {
		h.Kit.Fail(w, r, "list open unknowns", err)
		return
	}
	v := View{Status: st, Unknowns: unknowns, Chats: map[string]string{}}
	for _, u := range unknowns {
		if _, ok := v.Chats[u.Route]; !ok {
			v.Chats[u.Route] = h.Chats.Label(r.Context(), u.Route)
		}
	}
	h.Kit.Render(w, r, http.StatusOK, Page(h.Kit.Chrome(r, "Safety", "safety"), v))
}

const back = "/safety"

func (h *Handler) estop(w http.ResponseWriter, r *http.Request) {
	operator, ok := h.Kit.OperatorName(w, r, back)
	if !ok {
		return
	}
	reason := strings.TrimSpace(r.PostFormValue("reason"))
	if len(reason) > maxReason {
		h.Kit.Refuse(w, r, back, fmt.Sprintf("The reason is too long (at most %d characters).", maxReason))
		return
	}
	if err := h.Operator.EStop(r.Context(), operator, reason); err != nil {
		h.Kit.Fail(w, r, "latch e-stop", err)
		return
	}
	h.Kit.Done(w, r, back, operator, "Emergency stop latched: running work was cancelled, the job queue is held, and every action but reading is refused.")
}

func (h *Handler) reset(w http.ResponseWriter, r *http.Request) {
	operator, ok := h.Kit.OperatorName(w, r, back)
	if !ok {
		return
	}
	if strings.TrimSpace(r.PostFormValue("confirm")) != ResetWord {
		h.Kit.Refuse(w, r, back, `The e-stop was not reset: type the word reset in the confirmation field to reset it.`)
		return
	}
	st, err := h.Gov.EStop(r.Context())
	if err != nil {
		h.Kit.Fail(w, r, "read e-stop", err)
		return
	}
	if !st.Latched {
		h.Kit.Refuse(w, r, back, "The e-stop is not latched; there is nothing to reset.")
		return
	}
	if err := h.Operator.Reset(r.Context(), operator); err != nil {
		h.Kit.Fail(w, r, "reset e-stop", err)
		return
	}
	if r.PostFormValue("then") != "resume" {
		h.Kit.Done(w, r, back, operator, "Emergency stop reset. Queued jobs stay paused until you resume them below.")
		return
	}
	// "Reset and resume the queue": one action for the usual case.
	st, err = h.Gov.EStop(r.Context())
	if err != nil {
		h.Kit.Fail(w, r, "read e-stop", err)
		return
	}
	if !st.Latched {
		if err := h.Operator.ResumeQueue(r.Context(), operator); err != nil {
			h.Kit.Fail(w, r, "resume job queue", err)
			return
		}
	}
	h.Kit.Done(w, r, back, operator, "Emergency stop reset and queued jobs resumed.")
}

func (h *Handler) resume(w http.ResponseWriter, r *http.Request) {
	operator, ok := h.Kit.OperatorName(w, r, back)
	if !ok {
		return
	}
	st, err := h.Gov.Status(r.Context())
	if err != nil {
		h.Kit.Fail(w, r, "read governance status", err)
		return
	}
	switch {
	case st.EStop.Latched:
		h.Kit.Refuse(w, r, back, "Reset the e-stop before resuming the queue.")
		return
	case !st.QueueHeld:
		h.Kit.Refuse(w, r, back, "The job queue is not held.")
		return
	}
	if err := h.Operator.ResumeQueue(r.Context(), operator); err != nil {
		h.Kit.Fail(w, r, "resume job queue", err)
		return
	}
	h.Kit.Done(w, r, back, operator, "Queued jobs resumed.")
}

func (h *Handler) reconcile(w http.ResponseWriter, r *http.Request) {
	operator, ok := h.Kit.OperatorName(w, r, back)
	if !ok {
		return
	}
	id := strings.TrimSpace(r.PostFormValue("command_id"))
	observed := strings.TrimSpace(r.PostFormValue("observed"))
	if observed == "" {
		h.Kit.Refuse(w, r, back, "Describe what you observed (for example what the file or process looks like now) before reconciling.")
		return
	}
	if len(observed) > maxObserved {
		h.Kit.Refuse(w, r, back, fmt.Sprintf("The observation is too long (at most %d characters).", maxObserved))
		return
	}
	open, err := h.Gov.Unknowns(r.Context(), "")
	if err != nil {
		h.Kit.Fail(w, r, "list open unknowns", err)
		return
	}
	if !slices.ContainsFunc(open, func(u govern.Unknown) bool { return u.CommandID == id }) {
		h.Kit.Refuse(w, r, back, fmt.Sprintf("There is no open UNKNOWN outcome %s (already reconciled?).", id))
		return
	}
	if err := h.Operator.Reconcile(r.Context(), operator, id, observed); err != nil {
		h.Kit.Fail(w, r, "reconcile "+id, err)
		return
	}
	h.Kit.Done(w, r, back, operator, fmt.Sprintf("Reconciled %s: its conversation may act again.", id))
}

func (h *Handler) policy(w http.ResponseWriter, r *http.Request) {
	operator, ok := h.Kit.OperatorName(w, r, back)
	if !ok {
		return
	}
	mode := r.PostFormValue("mode")
	if !slices.ContainsFunc(Modes, func(m Mode) bool { return m.Value == mode }) {
		h.Kit.Refuse(w, r, back, "Choose one of the policy modes.")
		return
	}
	if err := h.Operator.SetPolicy(r.Context(), operator, mode); err != nil {
		h.Kit.Fail(w, r, "set policy mode", err)
		return
	}
	h.Kit.Done(w, r, back, operator, fmt.Sprintf("Policy mode is now %s.", mode))
}

// modeLabel is a policy mode's label (the value itself when unknown).
func modeLabel(mode string) string {
	for _, m := range Modes {
		if m.Value == mode {
			return m.Label
		}
	}
	return mode
}
