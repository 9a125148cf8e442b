package permits

import (
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/go-chi/chi/v5"

	"github.com/hearth-dev/hearth/internal/govern"
)

// The card's "Always allow hidden files and programs in this folder": the
// folder rule is added and the call allowed once, together or not at all
// (control.Operator.ApproveFolder); only the folder the card offered
// (govern.Governor.OfferedFolder) can be added.

// approveFolder adds the folder rule p's card offered and allows p once.
func (h *Handler) approveFolder(w http.ResponseWriter, r *http.Request, operator string, p govern.Permit) {
	folder := r.PostFormValue("folder")
	offered, ok := h.Gov.OfferedFolder(p)
	if !ok || folder != offered {
		h.Kit.Refuse(w, r, "/permits", "This request offers no folder to always allow; choose Allow once or Deny.")
		return
	}
	if _, err := h.Operator.ApproveFolder(r.Context(), operator, p, folder); err != nil {
		switch {
		case errors.Is(err, govern.ErrEStopLatched):
			h.Kit.Refuse(w, r, "/permits", "Nothing was allowed and no folder rule was added: the emergency stop is on, and nothing runs until it is reset. "+
				"The request is still waiting: reset the stop on the Safety page, then decide here.")
		case errors.Is(err, govern.ErrExpired):
			h.Kit.Refuse(w, r, "/permits", "Its time ran out before you allowed it, so nothing was allowed and no folder rule was added; ChatGPT is told it was not allowed.")
		default:
			h.Kit.Fail(w, r, "approve permit "+p.ID+" with a folder rule", err)
		}
		return
	}
	verb, what, _ := Describe(p)
	h.Kit.Done(w, r, "/permits", operator, fmt.Sprintf("You allowed it: Hearth will %s %s, and ChatGPT gets the result in its chat. "+
		"From now on ChatGPT may write hidden files and programs in %s without asking (remove that under Always allowed below).", verb, what, folder))
}

func (h *Handler) removeFolderRule(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	operator, ok := h.Kit.OperatorName(w, r, "/permits")
	if !ok {
		return
	}
	rules, err := h.Gov.FolderRules(r.Context())
	if err != nil {
		h.Kit.Fail(w, r, "list folder rules", err)
		return
	}
	i := slices.IndexFunc(rules, func(x govern.FolderRule) bool { return x.ID == id })
	if i < 0 {
		h.Kit.Refuse(w, r, "/permits", fmt.Sprintf("There is no folder rule %s (already removed?).", id))
		return
	}
	if err := h.Operator.RemoveFolderRule(r.Context(), operator, id); err != nil {
		h.Kit.Fail(w, r, "remove folder rule "+id, err)
		return
	}
	h.Kit.Done(w, r, "/permits", operator, fmt.Sprintf("Hearth asks you again before ChatGPT writes hidden files or programs in %s.", rules[i].Folder))
}
