// Package safety is the control panel's Safety page: the emergency stop,
// its reset (the operator types "reset", in any case), offered as "Reset
// and let queued jobs run" beside a reset that keeps them paused, resuming the held job queue,
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

// ResetWord is what the operator must type to reset the e-stop; case and
// surrounding spaces do not matter ("Reset" is the word too).
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
	r.Post("/safety/workspaces/{id}/remove", h.removeWorkspace)
}

// View is what the page shows.
type View struct {
	Status   govern.Status
	Unknowns []govern.Unknown
	// Chats are the readable labels of the Unknowns' conversations, by
	// route.
	Chats map[string]string
	// Workspaces are the folders where ChatGPT may change code and
	// settings.
	Workspaces []govern.Workspace
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
	spaces, err := h.Gov.Workspaces(r.Context())
	if err != nil {
		h.Kit.Fail(w, r, "list workspaces", err)
		return
	}
	v := View{Status: st, Unknowns: unknowns, Chats: map[string]string{}, Workspaces: spaces}
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
	h.Kit.Done(w, r, back, operator, "The emergency stop is on: what ChatGPT was running is stopped, queued jobs are paused, and ChatGPT can only read until you reset it.")
}

func (h *Handler) reset(w http.ResponseWriter, r *http.Request) {
	operator, ok := h.Kit.OperatorName(w, r, back)
	if !ok {
		return
	}
	if !strings.EqualFold(strings.TrimSpace(r.PostFormValue("confirm")), ResetWord) {
		h.Kit.Refuse(w, r, back, `The emergency stop is still on: type the word reset in the box, then press the button again.`)
		return
	}
	st, err := h.Gov.EStop(r.Context())
	if err != nil {
		h.Kit.Fail(w, r, "read e-stop", err)
		return
	}
	if !st.Latched {
		h.Kit.Refuse(w, r, back, "The emergency stop is already off: there is nothing to reset.")
		return
	}
	if err := h.Operator.Reset(r.Context(), operator); err != nil {
		h.Kit.Fail(w, r, "reset e-stop", err)
		return
	}
	if r.PostFormValue("then") != "resume" {
		h.Kit.Done(w, r, back, operator, "The emergency stop is off. Queued jobs stay paused until you resume them below.")
		return
	}
	// "Reset and let queued jobs run": one action for the usual case.
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
	h.Kit.Done(w, r, back, operator, "The emergency stop is off, and queued jobs run again.")
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
		h.Kit.Refuse(w, r, back, "Reset the emergency stop first; then queued jobs can run again.")
		return
	case !st.QueueHeld:
		h.Kit.Refuse(w, r, back, "Queued jobs are not paused: there is nothing to resume.")
		return
	}
	if err := h.Operator.ResumeQueue(r.Context(), operator); err != nil {
		h.Kit.Fail(w, r, "resume job queue", err)
		return
	}
	h.Kit.Done(w, r, back, operator, "Queued jobs run again.")
}

func (h *Handler) reconcile(w http.ResponseWriter, r *http.Request) {
	operator, ok := h.Kit.OperatorName(w, r, back)
	if !ok {
		return
	}
	id := strings.TrimSpace(r.PostFormValue("command_id"))
	observed := strings.TrimSpace(r.PostFormValue("observed"))
	if observed == "" {
		h.Kit.Refuse(w, r, back, "Describe what you found (for example what the file or program looks like now), then press Tell Hearth.")
		return
	}
	if len(observed) > maxObserved {
		h.Kit.Refuse(w, r, back, fmt.Sprintf("What you found is too long (at most %d characters).", maxObserved))
		return
	}
	open, err := h.Gov.Unknowns(r.Context(), "")
	if err != nil {
		h.Kit.Fail(w, r, "list open unknowns", err)
		return
	}
	if !slices.ContainsFunc(open, func(u govern.Unknown) bool { return u.CommandID == id }) {
		h.Kit.Refuse(w, r, back, "That interrupted action is not waiting for a check any more (it was already checked).")
		return
	}
	if err := h.Operator.Reconcile(r.Context(), operator, id, observed); err != nil {
		h.Kit.Fail(w, r, "reconcile "+id, err)
		return
	}
	h.Kit.Done(w, r, back, operator, "Hearth recorded what you found: the chat that asked can act again.")
}

func (h *Handler) policy(w http.ResponseWriter, r *http.Request) {
	operator, ok := h.Kit.OperatorName(w, r, back)
	if !ok {
		return
	}
	mode := r.PostFormValue("mode")
	if !slices.ContainsFunc(Modes, func(m Mode) bool { return m.Value == mode }) {
		h.Kit.Refuse(w, r, back, "Choose one of the choices under What Hearth may do.")
		return
	}
	if err := h.Operator.SetPolicy(r.Context(), operator, mode); err != nil {
		h.Kit.Fail(w, r, "set policy mode", err)
		return
	}
	h.Kit.Done(w, r, back, operator, fmt.Sprintf("Hearth now: %s.", modeLabel(mode)))
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
