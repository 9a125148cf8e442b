// Package permits is the control panel's Permits page: the calls waiting
// for the operator, with their exact input and its digest, and the
// operator's allow-rules. Approve once, approve and always allow, deny and
// remove a rule are plain form POSTs, so they work without JavaScript.
package permits

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/web/ui"
)

// Handler serves the Permits page and its actions.
type Handler struct {
	Kit      *ui.Kit
	Gov      *govern.Governor
	Operator *govern.Operator
}

// Mount adds the page's routes.
func (h *Handler) Mount(r chi.Router) {
	r.Get("/permits", h.page)
	r.Post("/permits/{id}/approve", h.approve)
	r.Post("/permits/{id}/deny", h.deny)
	r.Post("/permits/rules/{id}/remove", h.removeRule)
}

// Item is a pending permit as the page shows it.
type Item struct {
	govern.Permit
	// Pretty is the exact input, indented.
	Pretty string
	// RuleProgram and RuleCwd prefill the "always allow" fields.
	RuleProgram, RuleCwd string
	// Interpreter is set when RuleProgram is a general interpreter.
	Interpreter bool
}

// View is what the page shows.
type View struct {
	Pending []Item
	Rules   []govern.Rule
}

// NewItem prepares a permit for display.
func NewItem(p govern.Permit) Item {
	it := Item{Permit: p, Pretty: p.Input}
	var buf bytes.Buffer
	if json.Indent(&buf, []byte(p.Input), "", "  ") == nil {
		it.Pretty = buf.String()
	}
	if len(p.Programs) > 0 {
		it.RuleProgram, it.RuleCwd = p.Programs[0].Command, p.Programs[0].Cwd
	}
	it.Interpreter = it.RuleProgram != "" && govern.IsInterpreter(it.RuleProgram)
	return it
}

func (h *Handler) page(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	pending, err := h.Operator.Permits(ctx, "pending")
	if err != nil {
		h.Kit.Fail(w, r, "list pending permits", err)
		return
	}
	rules, err := h.Gov.Rules(ctx)
	if err != nil {
		h.Kit.Fail(w, r, "list allow-rules", err)
		return
	}
	v := View{Rules: rules}
	for _, p := range pending {
		v.Pending = append(v.Pending, NewItem(p))
	}
	h.Kit.Render(w, r, http.StatusOK, Page(h.Kit.Chrome(r, "Permits", "permits"), v))
}

// pending returns the pending permit id, or false after telling the
// operator it is no longer pending (decided, expired or unknown).
func (h *Handler) pending(w http.ResponseWriter, r *http.Request, id string) (govern.Permit, bool) {
	all, err := h.Operator.Permits(r.Context(), "pending")
	if err != nil {
		h.Kit.Fail(w, r, "list pending permits", err)
		return govern.Permit{}, false
	}
	i := slices.IndexFunc(all, func(p govern.Permit) bool { return p.ID == id })
	if i < 0 {
		h.Kit.Refuse(w, r, "/permits", fmt.Sprintf("Permit %s is no longer pending: it was already decided, it expired, or it does not exist.", id))
		return govern.Permit{}, false
	}
	return all[i], true
}

func (h *Handler) approve(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	operator, ok := h.Kit.OperatorName(w, r, "/permits")
	if !ok {
		return
	}
	p, ok := h.pending(w, r, id)
	if !ok {
		return
	}
	var rule *govern.Rule
	switch r.PostFormValue("scope") {
	case "once", "":
	case "always":
		program := strings.TrimSpace(r.PostFormValue("program"))
		cwd := strings.TrimSpace(r.PostFormValue("cwd_root"))
		if program == "" {
			h.Kit.Refuse(w, r, "/permits", "To always allow a program, enter the program (a name such as git, an absolute path or a glob).")
			return
		}
		if cwd != "" && !filepath.IsAbs(cwd) {
			h.Kit.Refuse(w, r, "/permits", fmt.Sprintf("The working-directory root %q is not an absolute path; leave it empty to allow the program anywhere.", cwd))
			return
		}
		rule = &govern.Rule{Program: program, CwdRoot: cwd}
	default:
		h.Kit.Refuse(w, r, "/permits", "Choose Approve once or Approve and always allow.")
		return
	}
	if err := h.Operator.Approve(r.Context(), p.ID, operator, rule); err != nil {
		if errors.Is(err, govern.ErrExpired) {
			h.Kit.Refuse(w, r, "/permits", fmt.Sprintf("Permit %s expired before it was approved; the call arrives in its conversation as blocked.", p.ID))
			return
		}
		h.Kit.Fail(w, r, "approve permit "+p.ID, err)
		return
	}
	msg := fmt.Sprintf("Approved permit %s once: %s runs its exact input, and the result arrives in its conversation.", p.ID, p.Primitive)
	if rule != nil {
		msg += fmt.Sprintf(" Allow-rule added for %s", rule.Program)
		if rule.CwdRoot != "" {
			msg += " under " + rule.CwdRoot
		}
		msg += "."
		if govern.IsInterpreter(rule.Program) {
			msg += " Warning: it allows a general interpreter, which can run any code; remove it below if that was not intended."
		}
	}
	h.Kit.Done(w, r, "/permits", operator, msg)
}

func (h *Handler) deny(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	operator, ok := h.Kit.OperatorName(w, r, "/permits")
	if !ok {
		return
	}
	p, ok := h.pending(w, r, id)
	if !ok {
		return
	}
	if err := h.Operator.Deny(r.Context(), p.ID, operator); err != nil {
		h.Kit.Fail(w, r, "deny permit "+p.ID, err)
		return
	}
	h.Kit.Done(w, r, "/permits", operator, fmt.Sprintf("Denied permit %s: the call arrives in its conversation as blocked.", p.ID))
}

func (h *Handler) removeRule(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	operator, ok := h.Kit.OperatorName(w, r, "/permits")
	if !ok {
		return
	}
	rules, err := h.Gov.Rules(r.Context())
	if err != nil {
		h.Kit.Fail(w, r, "list allow-rules", err)
		return
	}
	i := slices.IndexFunc(rules, func(x govern.Rule) bool { return x.ID == id })
	if i < 0 {
		h.Kit.Refuse(w, r, "/permits", fmt.Sprintf("There is no allow-rule %s (already removed?).", id))
		return
	}
	if err := h.Operator.RemoveRule(r.Context(), operator, id); err != nil {
		h.Kit.Fail(w, r, "remove allow-rule "+id, err)
		return
	}
	h.Kit.Done(w, r, "/permits", operator, fmt.Sprintf("Removed the allow-rule for %s.", rules[i].Program))
}
