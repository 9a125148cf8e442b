package web

import (
	"net/http"
	"strconv"

	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/web/session"
	"github.com/hearth-dev/hearth/web/ui"
)

// loweredView reads the lowered safety settings not yet seen for the
// banner of the page back (a failed read is logged and shows none).
func (p *Panel) loweredView(r *http.Request, csrf, operator, back string) ui.LoweredView {
	if session.ValidateNext(back) != nil {
		back = "/"
	}
	v := ui.LoweredView{CSRF: csrf, Operator: operator, Back: back}
	list, err := p.deps.Gov.Lowered(r.Context())
	if err != nil {
		ui.LogError(p.log, r, "panel: read lowered safety settings for the banner", err)
		return v
	}
	for _, l := range list {
		v.List = append(v.List, ui.Lowered{Seq: l.Seq, What: l.What, By: ui.Who(l.By, p.osUser), When: ui.When(l.At), Session: govern.SessionWords(l.Session)})
	}
	return v
}

// loweredLive answers the banner slot's poll: 204 while the lowerings
// not yet seen are the ones the page shows (its v), else the slot anew,
// so the banner appears and goes without a reload.
func (p *Panel) loweredLive(w http.ResponseWriter, r *http.Request) {
	sess := session.FromContext(r.Context())
	v := p.loweredView(r, sess.CSRFToken(), p.operator(r, sess), r.URL.Query().Get("back"))
	if q := r.URL.Query(); q.Has("v") && q.Get("v") == v.Version() {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	kit := &ui.Kit{Chrome: p.chrome, Log: p.log}
	kit.Render(w, r, http.StatusOK, ui.LoweredSlot(v))
}

// loweredSeen marks the announced lowerings seen (POST, CSRF-checked by
// the middleware, under the operator's name) and goes back to the page
// the banner was on.
func (p *Panel) loweredSeen(kit *ui.Kit) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		back := r.PostFormValue("back")
		if session.ValidateNext(back) != nil {
			back = "/"
		}
		through, err := strconv.ParseInt(r.PostFormValue("through"), 10, 64)
		if err != nil || through < 0 {
			kit.Refuse(w, r, back, "The form could not be read (through is not a ledger entry number). Reload the page and try again.")
			return
		}
		operator, ok := kit.OperatorName(w, r, back)
		if !ok {
			return
		}
		if err := p.deps.Operator.SeenLowered(r.Context(), operator, through); err != nil {
			kit.Fail(w, r, "mark lowered safety settings seen", err)
			return
		}
		kit.Done(w, r, back, operator, "Marked as seen. Every change is still in the ledger.")
	}
}
