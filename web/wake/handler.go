// Package wake is the control panel's ChatGPT window page: open Hearth's
// own ChatGPT window, see its state and the conversations bound to its
// tabs (with their last wake and attempts), unbind one, arm or disarm
// automatic wake and set its timing. Every action is a plain form POST
// (CSRF-checked by the panel) under the operator's name; nothing here is
// reachable through a tool.
package wake

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	iwake "github.com/hearth-dev/hearth/internal/wake"
	"github.com/hearth-dev/hearth/web/ui"
)

// Service is the read side of the wake service (*wake.Service).
type Service interface {
	Window() iwake.Window
	Bindings() []iwake.Binding
	Armed() bool
	Settings() iwake.Settings
	Stats() iwake.Stats
	Unbind(ctx context.Context, operator, route string) error
}

// Handler serves the page and its actions.
type Handler struct {
	Kit  *ui.Kit
	Wake Service
	// Open starts the window (App.OpenChatGPT).
	Open func(ctx context.Context) error
	// SetArmed and SetTimings change and persist the wake.* config
	// (App.SetWakeArmed, App.SetWakeTimings).
	SetArmed   func(ctx context.Context, operator string, armed bool) error
	SetTimings func(ctx context.Context, operator string, debounceMS, quietMS, cooldownMS, maxAttempts int) error
}

// Path is the page's address.
const Path = "/chatgpt"

// Mount adds the page's routes.
func (h *Handler) Mount(r chi.Router) {
	r.Get(Path, h.page)
	r.Post(Path+"/open", h.open)
	r.Post(Path+"/arm", h.arm)
	r.Post(Path+"/timings", h.timings)
	r.Post(Path+"/unbind", h.unbind)
}

// View is what the page shows.
type View struct {
	Window   iwake.Window
	Armed    bool
	Settings iwake.Settings
	Bindings []iwake.Binding
	Stats    iwake.Stats
}

func (h *Handler) page(w http.ResponseWriter, r *http.Request) {
	v := View{Window: h.Wake.Window(), Armed: h.Wake.Armed(), Settings: h.Wake.Settings(), Bindings: h.Wake.Bindings(), Stats: h.Wake.Stats()}
	h.Kit.Render(w, r, http.StatusOK, Page(h.Kit.Chrome(r, "ChatGPT window", "chatgpt"), v))
}

func (h *Handler) open(w http.ResponseWriter, r *http.Request) {
	operator, ok := h.Kit.OperatorName(w, r, Path)
	if !ok {
		return
	}
	if err := h.Open(r.Context()); err != nil {
		h.Kit.Log.Warn("panel: open the ChatGPT window", "err", err)
		msg := "The ChatGPT window did not open."
		if why := h.Wake.Window().Error; why != "" {
			msg += " " + why
		}
		h.Kit.Refuse(w, r, Path, msg)
		return
	}
	h.Kit.Done(w, r, Path, operator, "The ChatGPT window is open. Sign in to ChatGPT there once; Hearth keeps that window's sign-in for next time.")
}

func (h *Handler) arm(w http.ResponseWriter, r *http.Request) {
	operator, ok := h.Kit.OperatorName(w, r, Path)
	if !ok {
		return
	}
	var armed bool
	switch r.PostFormValue("armed") {
	case "true":
		armed = true
	case "false":
	default:
		h.Kit.Refuse(w, r, Path, "Choose whether Hearth wakes chats when their results are ready.")
		return
	}
	if err := h.SetArmed(r.Context(), operator, armed); err != nil {
		h.Kit.Fail(w, r, "set wake.armed", err)
		return
	}
	if armed {
		h.Kit.Done(w, r, Path, operator, "Hearth now wakes chats: a quiet chat found in this window, with finished results waiting, will be prompted in its tab.")
		return
	}
	h.Kit.Done(w, r, Path, operator, "Hearth no longer wakes chats: no conversation will be prompted.")
}

// timingFields are the timing form's fields, their config keys and
// bounds (the same as the config file's).
var timingFields = []struct{ field, key string }{
	{"debounce_ms", "wake.debounce_ms"},
	{"quiet_ms", "wake.quiet_ms"},
	{"cooldown_ms", "wake.cooldown_ms"},
	{"max_attempts", "wake.max_attempts"},
}

func (h *Handler) timings(w http.ResponseWriter, r *http.Request) {
	operator, ok := h.Kit.OperatorName(w, r, Path)
	if !ok {
		return
	}
	vals := make([]int, len(timingFields))
	for i, f := range timingFields {
		n, err := strconv.Atoi(strings.TrimSpace(r.PostFormValue(f.field)))
		if err != nil {
			h.Kit.Refuse(w, r, Path, fmt.Sprintf("%s must be a whole number.", f.key))
			return
		}
		vals[i] = n
	}
	if err := h.SetTimings(r.Context(), operator, vals[0], vals[1], vals[2], vals[3]); err != nil {
		// A value out of range names its key; nothing was changed.
		h.Kit.Refuse(w, r, Path, "The wake timing was not changed: "+err.Error())
		return
	}
	h.Kit.Done(w, r, Path, operator, "Wake timing saved.")
}

func (h *Handler) unbind(w http.ResponseWriter, r *http.Request) {
	operator, ok := h.Kit.OperatorName(w, r, Path)
	if !ok {
		return
	}
	route := r.PostFormValue("route")
	if err := h.Wake.Unbind(r.Context(), operator, route); err != nil {
		h.Kit.Refuse(w, r, Path, "Nothing changed: Hearth had already forgotten that chat.")
		return
	}
	h.Kit.Done(w, r, Path, operator, "Hearth forgot that chat: it no longer prompts its tab.")
}

// ms renders a duration setting in milliseconds for the form.
func ms(d interface{ Milliseconds() int64 }) string { return strconv.FormatInt(d.Milliseconds(), 10) }
