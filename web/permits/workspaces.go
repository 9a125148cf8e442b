package permits

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/hearth-dev/hearth/internal/govern"
)

// The card's "Allow, and let ChatGPT change code and settings in this
// folder": the workspace is added and the call allowed once, together or
// not at all (control.Operator.ApproveWorkspace); only the folder the
// card offered (govern.Governor.OfferedWorkspace) can be added. The
// Safety page lists the workspaces and removes them.

// approveWorkspace adds the workspace p's card offered and allows p once.
func (h *Handler) approveWorkspace(w http.ResponseWriter, r *http.Request, operator string, p govern.Permit) {
	folder := r.PostFormValue("folder")
	offered, ok := h.Gov.OfferedWorkspace(p)
	if !ok || folder != offered {
		h.Kit.Refuse(w, r, "/permits", "This request offers no folder for code and settings; choose Allow once or Deny.")
		return
	}
	if _, err := h.Operator.ApproveWorkspace(r.Context(), operator, p, folder); err != nil {
		switch {
		case errors.Is(err, govern.ErrEStopLatched):
			h.Kit.Refuse(w, r, "/permits", "Nothing was allowed and no workspace was added: the emergency stop is on, and nothing runs until it is reset. "+
				"The request is still waiting: reset the stop on the Safety page, then decide here.")
		case errors.Is(err, govern.ErrExpired):
			h.Kit.Refuse(w, r, "/permits", "Its time ran out before you allowed it, so nothing was allowed and no workspace was added; ChatGPT is told it was not allowed.")
		default:
			h.Kit.Fail(w, r, "approve permit "+p.ID+" with a workspace", err)
		}
		return
	}
	h.Kit.Done(w, r, "/permits", operator, fmt.Sprintf("You allowed it: Hearth will %s, and ChatGPT gets the result in its chat. "+
		"From now on ChatGPT may change code and settings in %s without asking; files that start programs by themselves still ask (remove the folder on the Safety page).", Words(p), folder))
}
