package web

import (
	"net/http"
	"net/url"
	"os/user"
	"strings"

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

// chats labels conversations from the database's read side.
func (p *Panel) chats() ui.Chats {
	if p.deps.DB == nil {
		return ui.Chats{}
	}
	return ui.Chats{DB: p.deps.DB.R}
}

// maxTitle bounds the page title the badge's poll echoes.
const maxTitle = 64

// pendingLive answers the navigation badge's poll: the count of waiting
// permits and the tab title with it. The title is one of the panel's page
// titles; anything else falls back to the panel's name.
func (p *Panel) pendingLive(w http.ResponseWriter, r *http.Request) {
	title := r.URL.Query().Get("title")
	known := false
	for _, it := range ui.Nav {
		if it.Label == title {
			known = true
		}
	}
	if !known || len(title) > maxTitle {
		title = "Hearth"
	}
	n := 0
	if pending, err := p.deps.Operator.Permits(r.Context(), "pending"); err != nil {
		ui.LogError(p.log, r, "panel: count pending permits", err)
	} else {
		n = len(pending)
	}
	kit := &ui.Kit{Chrome: p.chrome, Log: p.log}
	kit.Render(w, r, http.StatusOK, ui.PendingLive(title, n))
}
