package web

import (
	"net/http"
	"net/url"
	"os/user"
	"strings"

	"github.com/hearth-dev/hearth/internal/risk"
	"github.com/hearth-dev/hearth/web/permits"
	"github.com/hearth-dev/hearth/web/session"
	"github.com/hearth-dev/hearth/web/ui"
)

// osUserName is the signed-in user's name for the operator fields: the
// full name when the system has one, else the account name without its
// domain ("" when neither can be read).
func osUserName() string {
	u, err := user.Current()
	if err != nil {
		return ""
	}
	if n := strings.TrimSpace(u.Name); n != "" && len(n) <= ui.MaxOperatorName {
		return n
	}
	name := u.Username
	if i := strings.LastIndexByte(name, '\\'); i >= 0 {
		name = name[i+1:]
	}
	if len(name) > ui.MaxOperatorName {
		return ""
	}
	return name
}

// operator is the name the operator fields are filled with: the one last
// used in this session, else in this browser (its cookie), else the
// signed-in user's. The operator can change it on any form.
func (p *Panel) operator(r *http.Request, sess *session.Session) string {
	if n := sess.Operator(); n != "" {
		return n
	}
	if c, err := r.Cookie(session.OperatorCookieName); err == nil {
		if n, err := url.QueryUnescape(c.Value); err == nil {
			if n = strings.TrimSpace(n); n != "" && len(n) <= ui.MaxOperatorName {
				return n
			}
		}
	}
	return p.osUser
}

// chats labels conversations from the engine's calls.
func (p *Panel) chats() ui.Chats { return ui.Chats{Futures: p.deps.Dispatcher} }

// maxTitle bounds the page title the badge's poll echoes.
const maxTitle = 64

// pendingLive answers the navigation badge's poll: the count of waiting
// permits, the tab title with it and the banner of the call waiting. The
// title is one of the panel's page titles; anything else falls back to
// the panel's name.
func (p *Panel) pendingLive(w http.ResponseWriter, r *http.Request) {
	title := r.URL.Query().Get("title")
	active := ""
	for _, it := range ui.Nav {
		if it.Label == title {
			active = it.Key
		}
	}
	if active == "" || len(title) > maxTitle {
		title = "Hearth"
	}
	sess := session.FromContext(r.Context())
	n, waiting := p.waiting(r)
	kit := &ui.Kit{Chrome: p.chrome, Log: p.log}
	kit.Render(w, r, http.StatusOK, ui.PendingLive(title, active, sess.CSRFToken(), p.operator(r, sess), n, waiting))
}

// waiting counts the calls waiting for the operator and describes the
// oldest, for the banner; a failed read is logged and shows none.
func (p *Panel) waiting(r *http.Request) (int, *ui.Waiting) {
	pending, err := p.deps.Operator.Permits(r.Context(), "pending")
	if err != nil {
		ui.LogError(p.log, r, "panel: count pending permits", err)
		return 0, nil
	}
	if len(pending) == 0 {
		return 0, nil
	}
	oldest := pending[0]
	for _, q := range pending[1:] {
		if q.CreatedAt.Before(oldest.CreatedAt) {
			oldest = q
		}
	}
	w := &ui.Waiting{ID: oldest.ID, Persist: oldest.Case == string(risk.CasePersist), More: len(pending) - 1}
	w.Verb, w.What, w.Where = permits.Describe(oldest)
	if st, err := p.deps.Gov.EStop(r.Context()); err != nil {
		ui.LogError(p.log, r, "panel: read the e-stop", err)
	} else {
		w.EStop = st.Latched
	}
	return len(pending), w
}
