package web

import (
	"net/http"
	"strconv"

	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/web/session"
	"github.com/hearth-dev/hearth/web/ui"
)

// addLoweredBanner puts the lowered-safety banner into c.
func (p *Panel) addLoweredBanner(r *http.Request, c *ui.Chrome) {
	list, err := p.deps.Gov.Lowered(r.Context())
	if err != nil {
		ui.LogError(p.log, r, "panel: read lowered safety settings for the banner", err)
		return
	}
	if len(list) == 0 {
		return
	}
	shown := make([]ui.Lowered, 0, len(list))
	for _, l := range list {
		shown = append(shown, ui.Lowered{What: l.What, By: ui.Who(l.By, p.osUser), When: ui.When(l.At), Session: govern.SessionWords(l.Session)})
	}
	back := r.URL.Path
	if session.ValidateNext(back) != nil {
		back = "/"
	}
	c.Banners = append(c.Banners, ui.LoweredBanner(shown, list[len(list)-1].Seq, c.CSRF, c.Operator, back))
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
