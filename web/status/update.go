package status

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/hearth-dev/hearth/internal/update"
	"github.com/hearth-dev/hearth/web/session"
	"github.com/hearth-dev/hearth/web/ui"
)

// Updates is the update service as the Status page sees it.
type Updates interface {
	State() update.State
}

// UpdateHandler serves the Status page's update line: what is available,
// the Update button and the download's progress, and what became of the
// last update. It is its own handler so that the page's other parts stay
// apart from it.
type UpdateHandler struct {
	Kit     *ui.Kit
	Updates Updates
	// Install starts the offered update on the operator's behalf
	// (journaled under their name): at once, or, with whenDone, at the
	// first quiet moment.
	Install func(ctx context.Context, operator string, whenDone bool) error
	// Busy says what an update now would stop ("2 tasks are running and
	// 1 approval is waiting"); "" when nothing. nil: nothing is counted.
	Busy func(ctx context.Context) string
}

// Mount adds the update line's routes: its live fragment and the Update
// button's POST (CSRF-checked by the panel, operator named).
func (h *UpdateHandler) Mount(r chi.Router) {
	r.Get("/status/update", h.live)
	r.Post("/status/update", h.install)
}

// UpdateView is the update line's content.
type UpdateView struct {
	State    update.State
	CSRF     string
	Operator string
	// Outcome is shown for a week after the update (unless Refused says
	// the same rollback).
	Outcome *update.Outcome
	// Busy is what an update now would stop, in words; "" when nothing.
	Busy string
}

func (h *UpdateHandler) view(r *http.Request) UpdateView {
	st := h.Updates.State()
	v := UpdateView{State: st}
	if sess := session.FromContext(r.Context()); sess != nil {
		v.CSRF = sess.CSRFToken()
		v.Operator = sess.Operator()
	}
	if st.Last != nil && time.Since(st.Last.When) < 7*24*time.Hour {
		v.Outcome = st.Last
		if r := st.Refused; r != nil && st.Last.Result == update.ResultRolledBack && update.Compare(st.Last.To, r.Version) == 0 {
			v.Outcome = nil // the refused release's line says it
		}
	}
	if h.Busy != nil && st.Offer != nil && (st.CanInstall || st.Waiting) {
		v.Busy = h.Busy(r.Context())
	}
	return v
}

func (h *UpdateHandler) live(w http.ResponseWriter, r *http.Request) {
	h.Kit.Render(w, r, http.StatusOK, UpdateLine(h.view(r)))
}

func (h *UpdateHandler) install(w http.ResponseWriter, r *http.Request) {
	operator, ok := h.Kit.OperatorName(w, r, "/")
	if !ok {
		return
	}
	whenDone := r.FormValue("when") == "done"
	if err := h.Install(r.Context(), operator, whenDone); err != nil {
		h.Kit.Refuse(w, r, "/", "The update did not start: "+err.Error())
		return
	}
	if whenDone {
		h.Kit.Done(w, r, "/", operator, "Hearth will update when the work in progress is done; nothing is stopped.")
		return
	}
	h.Kit.Done(w, r, "/", operator, "Hearth is downloading the update; it restarts by itself when the download is verified.")
}

// sentence ends s with one period.
func sentence(s string) string {
	s = strings.TrimRight(s, " ")
	if strings.HasSuffix(s, ".") || strings.HasSuffix(s, "!") || strings.HasSuffix(s, "?") {
		return s
	}
	return s + "."
}

// day is a date as the card says it ("1 May 2026").
func day(t time.Time) string { return t.Local().Format("2 January 2006") }

// percent is the download's progress for the bar.
func percent(done, total int64) string {
	if total <= 0 {
		return "0"
	}
	return strconv.FormatInt(done*100/total, 10)
}

// mib is a byte count in MiB, one decimal.
func mib(n int64) string {
	return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MB"
}

// waitingText says that an update waits for the work in progress.
func waitingText(v UpdateView) string {
	s := "Hearth will update to " + update.Display(v.State.Offer.Version) + " when the work in progress is done"
	if v.Busy != "" {
		s += " (" + v.Busy + ")"
	}
	return s + ". Nothing is stopped meanwhile."
}
