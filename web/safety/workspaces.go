package safety

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/go-chi/chi/v5"

	"github.com/hearth-dev/hearth/internal/govern"
)

// Workspaces on the Safety page: the folders where the operator let
// ChatGPT change code and settings (made from a write's card on the
// Permits page, govern.Decisions.ApproveWorkspace), each with Remove.

// removeWorkspace removes a workspace: writes of code and settings there
// ask again.
func (h *Handler) removeWorkspace(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	operator, ok := h.Kit.OperatorName(w, r, back)
	if !ok {
		return
	}
	all, err := h.Gov.Workspaces(r.Context())
	if err != nil {
		h.Kit.Fail(w, r, "list workspaces", err)
		return
	}
	i := slices.IndexFunc(all, func(x govern.Workspace) bool { return x.ID == id })
	if i < 0 {
		h.Kit.Refuse(w, r, back, fmt.Sprintf("There is no workspace %s (already removed?).", id))
		return
	}
	if err := h.Operator.RemoveWorkspace(r.Context(), operator, id); err != nil {
		h.Kit.Fail(w, r, "remove workspace "+id, err)
		return
	}
	h.Kit.Done(w, r, back, operator, fmt.Sprintf("Hearth asks you again before ChatGPT changes code or settings in %s.", all[i].Folder))
}
