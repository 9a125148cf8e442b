package permits

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/go-chi/chi/v5"

	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/risk"
)

// The card's "Always allow hidden files and programs in this folder": the
// folder rule is added, then the call is allowed once; only the folder
// the card offered (govern.Governor.OfferedFolder) can be added.

// approveFolder adds the folder rule p's card offered and allows p once.
func (h *Handler) approveFolder(w http.ResponseWriter, r *http.Request, operator string, p govern.Permit) {
	folder := r.PostFormValue("folder")
	offered, ok := h.Gov.OfferedFolder(p)
	if !ok || folder != offered {
		h.Kit.Refuse(w, r, "/permits", "This request offers no folder to always allow; choose Allow once or Deny.")
		return
	}
	if _, err := h.Operator.AddFolderRule(r.Context(), operator, p, folder); err != nil {
		h.Kit.Fail(w, r, "add folder rule", err)
		return
	}
	msg := fmt.Sprintf("From now on ChatGPT may write hidden files and programs in %s without asking (remove that under Always allowed below).", folder)
	if err := h.Operator.Approve(r.Context(), p.ID, operator, nil); err != nil {
		if errors.Is(err, govern.ErrExpired) || errors.Is(err, govern.ErrEStopLatched) {
			h.Kit.Refuse(w, r, "/permits", msg+" This request itself was not allowed: its time ran out, or the emergency stop is on.")
			return
		}
		h.Kit.Fail(w, r, "approve permit "+p.ID, err)
		return
	}
	verb, what, _ := Describe(p)
	h.Kit.Done(w, r, "/permits", operator, fmt.Sprintf("You allowed it: Hearth will %s %s, and ChatGPT gets the result in its chat. %s", verb, what, msg))
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

// whatRuns says what a waiting write to a persistence place would run,
// read from the content it writes (risk.WhatRuns): a write's data, or
// the new text of a patch's replacements.
func whatRuns(p govern.Permit) string {
	var in struct {
		Data         *string `json:"data"`
		Encoding     string  `json:"encoding"`
		Replacements []struct {
			New string `json:"new"`
		} `json:"replacements"`
	}
	if json.Unmarshal([]byte(p.Input), &in) != nil {
		return ""
	}
	var content []byte
	switch {
	case in.Data != nil && in.Encoding == "base64":
		b, err := base64.StdEncoding.DecodeString(*in.Data)
		if err != nil {
			return ""
		}
		content = b
	case in.Data != nil:
		content = []byte(*in.Data)
	default:
		for _, r := range in.Replacements {
			content = append(append(content, r.New...), '\n')
		}
	}
	return risk.WhatRuns(p.Subject, content)
}
