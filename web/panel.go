// Package web is Hearth's local control panel (docs/DESIGN.md, "The panel"): where the human
// operator decides (permits, e-stop and reset, UNKNOWN reconciliation,
// policy) and watches (status, tasks, ledger, recipes and runs). It is
// served on its own loopback listener, never through the MCP endpoint or
// the tunnel, so no tool of the model can reach it.
//
// Access: serve prints (and the tray opens) a one-time login URL; its
// token opens a session kept in memory and named by an HttpOnly,
// SameSite=Strict cookie. A login link may carry next=/permits (any panel
// path, see session.ValidateNext) to land there; a page opened without a
// session is remembered, briefly, as the next login's landing page.
// Every request must name a loopback Host; every page carries a strict
// CSP and no inline script or style; every state-changing request is a
// POST that passes Go's cross-origin protection and carries the session's
// CSRF token. GET never changes Hearth's state.
//
// Each page is a feature folder (web/<feature>: handler.go, view.templ and
// the generated view_templ.go); this file is the router and middleware.
package web

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/hearth-dev/hearth/assets"
	"github.com/hearth-dev/hearth/internal/control"
	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/fsops"
	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/httpbound"
	"github.com/hearth-dev/hearth/internal/jobs"
	hledger "github.com/hearth-dev/hearth/internal/ledger"
	hrecipes "github.com/hearth-dev/hearth/internal/recipes"
	"github.com/hearth-dev/hearth/internal/runs"
	"github.com/hearth-dev/hearth/internal/store"
	"github.com/hearth-dev/hearth/internal/tunnel"
	"github.com/hearth-dev/hearth/web/changes"
	"github.com/hearth-dev/hearth/web/ledger"
	"github.com/hearth-dev/hearth/web/permits"
	"github.com/hearth-dev/hearth/web/recipes"
	"github.com/hearth-dev/hearth/web/safety"
	"github.com/hearth-dev/hearth/web/session"
	"github.com/hearth-dev/hearth/web/setup"
	"github.com/hearth-dev/hearth/web/status"
	"github.com/hearth-dev/hearth/web/tasks"
	"github.com/hearth-dev/hearth/web/ui"
	wakepage "github.com/hearth-dev/hearth/web/wake"
)

// CSP is the Content-Security-Policy of every response: scripts, styles
// and requests only from the panel itself, no inline code, no framing.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// maxForm bounds a posted form.
const maxForm = 64 << 10

// Deps are the parts of Hearth the panel drives.
type Deps struct {
	Gov        *govern.Governor
	Operator   *control.Operator
	Ledger     *hledger.Ledger
	DB         *store.DB
	Jobs       *jobs.Queue
	Dispatcher *dispatch.Dispatcher
	Runs       *runs.Service
	Recipes    *hrecipes.Book
	// MCPURL is the MCP endpoint's address, for the Status page and the
	// Setup page's tunnel-client init.
	MCPURL func() string
	Log    *slog.Logger
	// Now is the sessions' clock (nil: time.Now); tests move it.
	Now func() time.Time

	// Tunnel supervises tunnel-client, for the Setup page.
	Tunnel *tunnel.Supervisor
	// StartTunnel and StopTunnel start and stop tunnel-client under
	// Hearth's own lifetime (App.StartTunnel, App.StopTunnel), never a
	// request's.
	StartTunnel func() error
	StopTunnel  func()
	// StartAtLogon reports whether Hearth starts when the user logs on;
	// nil where that is not available (the Setup page says so).
	StartAtLogon func() (bool, error)
	// LastBackup reports the newest verified database backup, for the
	// Status page; nil leaves the line out.
	LastBackup func() status.Backup
	// AnyAccount: config key loopback_same_user is false, so every account
	// on this computer reaches Hearth (the Status page says so).
	AnyAccount bool
	// FS is the fs engine, whose receipts the Changes page lists and
	// undoes; nil leaves the page out. ReceiptDays is
	// receipt_retention_days, for the page's words.
	FS          *fsops.Engine
	ReceiptDays int
	// Undo reports the undo copies' space and reach, for the Status page;
	// nil hides the line.
	Undo func(ctx context.Context) (status.Undo, error)
	// Storage reports the space fs undo copies and artifacts take and
	// storage_budget_bytes, for one line of the Status page; nil hides it.
	Storage func(ctx context.Context) (used, budget int64, err error)

	// Wake is Hearth's ChatGPT window, binder and waker, for the ChatGPT
	// window page; OpenChatGPT, SetWakeArmed and SetWakeTimings are the
	// operator's actions there (App.OpenChatGPT, App.SetWakeArmed,
	// App.SetWakeTimings). The page is served only when Wake is set.
	Wake           wakepage.Service
	OpenChatGPT    func(ctx context.Context) error
	SetWakeArmed   func(ctx context.Context, operator string, armed bool) error
	SetWakeTimings func(ctx context.Context, operator string, debounceMS, quietMS, cooldownMS, maxAttempts int) error
	// DataDir is Hearth's data directory, where the Status page finds the
	// last selftest report; "" shows none.
	DataDir string
	// PortMoves reports the listeners Hearth started on another port than
	// config.json named because another program held it (the Status page
	// says which port and why); nil shows none.
	PortMoves func() []status.PortMove
	// Updates, when set, is the update service the Status page shows,
	// and InstallUpdate starts its offer under the operator's name.
	Updates       status.Updates
	InstallUpdate func(ctx context.Context, operator string, whenDone bool) error
	// UpdateBusy says what an update now would stop ("" when nothing).
	UpdateBusy func(ctx context.Context) string
}

// Panel is the control panel: its sessions and its router.
type Panel struct {
	deps     Deps
	log      *slog.Logger
	sessions *session.Store
	handler  http.Handler
	// osUser is the signed-in user's name, the operator name of a browser
	// that has not given one.
	osUser string
}

// New builds the panel.
func New(d Deps) (*Panel, error) {
	log := d.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Panel{deps: d, log: log, sessions: session.NewStore(d.Now), osUser: osUserName()}
	h, err := p.routes()
	if err != nil {
		return nil, err
	}
	p.handler = h
	return p, nil
}

// Handler is the panel's HTTP handler.
func (p *Panel) Handler() http.Handler { return p.handler }

// NewLoginURL mints a one-time login token and returns the URL that
// redeems it on the panel at base (the listener's "http://host:port/"
// address); the login lands on the Status page, or on the page this
// browser last asked for without a session in the last NextTTL.
func (p *Panel) NewLoginURL(base string) (string, error) {
	return p.loginURL(base, "", "")
}

// LoginURLFrom is NewLoginURLTo ("" next: NewLoginURL) for a login asked
// for by origin (session.OriginTray, …): the session it opens journals
// origin with every safety setting it lowers.
func (p *Panel) LoginURLFrom(base, next, origin string) (string, error) {
	if next != "" {
		if err := session.ValidateNext(next); err != nil {
			return "", fmt.Errorf("control panel login URL: %w", err)
		}
	}
	return p.loginURL(base, next, origin)
}

// NewLoginURLTo is NewLoginURL for a login that lands on next, a panel
// path such as "/permits" (see session.ValidateNext); a next that is not
// a panel path is refused with an error naming it, and no token is
// minted.
func (p *Panel) NewLoginURLTo(base, next string) (string, error) {
	if err := session.ValidateNext(next); err != nil {
		return "", fmt.Errorf("control panel login URL: %w", err)
	}
	return p.loginURL(base, next, "")
}

func (p *Panel) loginURL(base, next, origin string) (string, error) {
	tok, err := p.sessions.NewLoginTokenFrom(origin)
	if err != nil {
		return "", fmt.Errorf("mint control panel login token: %w", err)
	}
	u := strings.TrimSuffix(base, "/") + "/login?token=" + url.QueryEscape(tok)
	if next != "" {
		u += "&next=" + url.QueryEscape(next)
	}
	return u, nil
}

func (p *Panel) routes() (http.Handler, error) {
	static, err := assets.Static()
	if err != nil {
		return nil, fmt.Errorf("control panel static files: %w", err)
	}
	icon, err := assets.Icon("hearth-32.png")
	if err != nil {
		return nil, fmt.Errorf("control panel icon: %w", err)
	}
	kit := &ui.Kit{Chrome: p.chrome, Log: p.log}
	d := p.deps

	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ui.WriteProblem(w, r, p.log, http.StatusForbidden, ui.ProblemCrossOrigin)
	}))

	r := chi.NewRouter()
	r.Use(p.recoverer, p.loopbackHost, securityHeaders, cop.Handler)

	// Public: the login and the static files (htmx, CSS, icon), which the
	// 401 page needs too.
	r.Get("/login", p.login)
	fileServer := http.StripPrefix("/static/", http.FileServerFS(static))
	r.Get("/static/icon.png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "max-age=3600")
		w.Header().Set("Content-Type", "image/png")
		if _, err := w.Write(icon); err != nil {
			p.log.Debug("panel: write icon", "err", err)
		}
	})
	r.Get("/static/{file}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "max-age=3600")
		fileServer.ServeHTTP(w, r)
	})

	r.Group(func(r chi.Router) {
		r.Use(p.requireSession(true), p.checkCSRF)
		st := &status.Handler{Kit: kit, Gov: d.Gov, Operator: d.Operator, Ledger: d.Ledger, MCPURL: d.MCPURL,
			AnyAccount: d.AnyAccount, LastBackup: d.LastBackup, Storage: d.Storage, Undo: d.Undo, DataDir: d.DataDir, Ports: d.PortMoves}
		if d.Updates != nil {
			st.Update = &status.UpdateHandler{Kit: kit, Updates: d.Updates, Install: d.InstallUpdate, Busy: d.UpdateBusy}
		}
		if d.DB != nil {
			st.DiskFull = d.DB.DiskFull
		}
		if d.Tunnel != nil {
			st.Tunnel = func() (string, string) { s := d.Tunnel.Status(); return string(s.State), s.Reason }
			st.Reach = func() (bool, bool, string) { return setup.Summary(d.Tunnel) }
		}
		st.Mount(r)
		(&setup.Handler{Kit: kit, Tunnel: d.Tunnel, MCPURL: d.MCPURL, Start: d.StartTunnel, Stop: d.StopTunnel,
			StartAtLogon: d.StartAtLogon, Ports: d.PortMoves}).Mount(r)
		(&permits.Handler{Kit: kit, Gov: d.Gov, Operator: d.Operator, Chats: p.chats()}).Mount(r)
		r.Get("/nav/pending/live", p.pendingLive)
		(&safety.Handler{Kit: kit, Gov: d.Gov, Operator: d.Operator, Chats: p.chats()}).Mount(r)
		(&tasks.Handler{Kit: kit, Jobs: d.Jobs, Dispatcher: d.Dispatcher, Chats: p.chats()}).Mount(r)
		(&ledger.Handler{Kit: kit, Ledger: d.Ledger, DB: d.DB, Futures: d.Dispatcher, Gov: d.Gov}).Mount(r)
		if d.FS != nil {
			(&changes.Handler{Kit: kit, FS: d.FS, Ledger: d.Ledger, Approvals: &govern.Decisions{G: d.Gov}, Chats: p.chats(), KeptDays: d.ReceiptDays}).Mount(r)
		}
		(&recipes.Handler{Kit: kit, Recipes: d.Recipes, Runs: d.Runs}).Mount(r)
		if d.Wake != nil {
			(&wakepage.Handler{Kit: kit, Wake: d.Wake, Open: d.OpenChatGPT, SetArmed: d.SetWakeArmed, SetTimings: d.SetWakeTimings}).Mount(r)
		}
		r.Get("/lowered/live", p.loweredLive)
		r.Post("/lowered/seen", p.loweredSeen(kit))
		r.Post("/logout", p.logout)
	})
	// Unknown paths and wrong methods also need a session, so that they
	// tell a stranger nothing about the routes.
	r.NotFound(p.requireSession(false)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ui.WriteProblem(w, r, p.log, http.StatusNotFound, ui.ProblemNotFound)
	})).ServeHTTP)
	r.MethodNotAllowed(p.requireSession(false)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ui.WriteProblem(w, r, p.log, http.StatusMethodNotAllowed, ui.ProblemMethod)
	})).ServeHTTP)
	return r, nil
}

// chrome builds the page chrome for the request's session: its CSRF
// token, remembered operator name and pending message, and the e-stop
// banner, the pending-permit count and the waiting call's banner every
// page shows.
func (p *Panel) chrome(r *http.Request, title, active string) ui.Chrome {
	sess := session.FromContext(r.Context())
	c := ui.Chrome{Title: title, Active: active, CSRF: sess.CSRFToken(), Operator: p.operator(r, sess), Account: p.osUser}
	if f, ok := sess.PopFlash(); ok {
		c.Flash = &f
	}
	if st, err := p.deps.Gov.EStop(r.Context()); err != nil {
		ui.LogError(p.log, r, "panel: read e-stop for the banner", err)
	} else if st.Latched {
		c.EStop, c.EStopBy, c.EStopReason, c.EStopByModel = true, ui.Who(st.By, p.osUser), st.Reason, st.ByModel()
	}
	c.Pending, c.Waiting = p.waiting(r)
	c.Lowered = p.loweredView(r, c.CSRF, c.Operator, r.URL.Path)
	if p.deps.DB != nil {
		c.DiskFull = p.deps.DB.DiskFull(r.Context()).Full
	}
	return c
}

// login redeems a one-time token: a valid one opens a session and
// redirects to the page the login was for, anything else is the 401
// page. That page is the link's next parameter when it is a panel path
// (session.ValidateNext); a link without next lands on the page this
// browser last asked for without a session (the next cookie
// requireSession sets), else on Setup until setup is done, else on the
// Status page. A bad next never fails the login.
func (p *Panel) login(w http.ResponseWriter, r *http.Request) {
	next, given := "/", false
	if raw := r.URL.Query().Get("next"); raw != "" {
		if err := session.ValidateNext(raw); err != nil {
			p.log.Warn("panel: login link's next is not a panel path; landing on the Status page", "err", err)
		} else {
			next, given = raw, true
		}
	} else if c, err := r.Cookie(session.NextCookieName); err == nil {
		if v, ok := session.NextFromCookie(c.Value); ok {
			next = v
		}
	}
	if next == "/" && !given && p.deps.Tunnel != nil {
		// Until setup is done, what the person has to do is there.
		if done, _, _ := setup.Summary(p.deps.Tunnel); !done {
			next = "/setup"
		}
	}
	_, cookie, ok := p.sessions.Redeem(r.URL.Query().Get("token"))
	if !ok {
		// An expired link still says where its user was going: the
		// fresh one from the tray lands there.
		if given {
			rememberNext(w, next)
		}
		ui.WriteProblem(w, r, p.log, http.StatusUnauthorized, ui.ProblemUnauthorized)
		return
	}
	if _, err := r.Cookie(session.NextCookieName); err == nil {
		http.SetCookie(w, &http.Cookie{
			Name: session.NextCookieName, Value: "", Path: "/login", MaxAge: -1,
			HttpOnly: true, SameSite: http.SameSiteLaxMode,
		})
	}
	http.SetCookie(w, &http.Cookie{
		Name: session.CookieName, Value: cookie, Path: "/",
		HttpOnly: true, SameSite: http.SameSiteStrictMode,
	})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// rememberNext sets the next cookie: for NextTTL, the next login without
// a next parameter lands on next. It is sent only to /login, and is Lax
// rather than Strict because the tray opens the login link from outside
// the browser; it holds nothing but a panel path, checked again when
// read.
func rememberNext(w http.ResponseWriter, next string) {
	http.SetCookie(w, &http.Cookie{
		Name: session.NextCookieName, Value: session.NextCookieValue(next), Path: "/login",
		MaxAge: session.NextMaxAge, HttpOnly: true, SameSite: http.SameSiteLaxMode,
	})
}

// pageNavigation reports whether r is the browser opening a panel page
// (worth remembering as the next login's landing page), rather than
// htmx polling a live fragment or the browser fetching a resource.
func pageNavigation(r *http.Request) bool {
	if r.Method != http.MethodGet || r.Header.Get("HX-Request") != "" || strings.HasSuffix(r.URL.Path, "/live") {
		return false
	}
	if d := r.Header.Get("Sec-Fetch-Dest"); d != "" && d != "document" {
		return false
	}
	return session.ValidateNext(r.URL.RequestURI()) == nil
}

func (p *Panel) logout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(session.CookieName); err == nil {
		p.sessions.End(c.Value)
	}
	http.SetCookie(w, &http.Cookie{
		Name: session.CookieName, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode,
	})
	ui.WriteProblem(w, r, p.log, http.StatusOK, ui.Problem{Title: "Signed out", TestID: "signed-out", Login: true,
		Text: "This browser is signed out of the control panel."})
}

// requireSession answers 401 unless the request carries a live session
// cookie, and puts the session in the request's context. The live
// fragments that htmx polls (/status/live, /tasks/live, /setup/live) do
// not count as activity, so an open but unattended tab still ends after
// IdleTimeout. With remember (the panel's own routes, not unknown paths),
// a refused page navigation is remembered in the next cookie, so that the
// login the operator fetches from the tray lands on that page.
func (p *Panel) requireSession(remember bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var sess *session.Session
			c, err := r.Cookie(session.CookieName)
			ok := err == nil
			if ok {
				sess, ok = p.sessions.Lookup(c.Value, !strings.HasSuffix(r.URL.Path, "/live"))
			}
			if !ok {
				if remember && pageNavigation(r) {
					rememberNext(w, r.URL.RequestURI())
				}
				ui.WriteProblem(w, r, p.log, http.StatusUnauthorized, ui.ProblemUnauthorized)
				return
			}
			ctx := govern.WithOrigin(session.NewContext(r.Context(), sess), sess.Origin())
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}

// safeMethod reports whether a request's method cannot change state.
func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// checkCSRF refuses a state-changing request unless it carries the
// session's CSRF token, in the csrf form field or the X-CSRF-Token header
// (htmx sends it from the body's hx-headers). It runs after the
// cross-origin check, as a second, independent guard.
func (p *Panel) checkCSRF(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if safeMethod(r.Method) {
			next.ServeHTTP(w, r)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxForm)
		if err := r.ParseForm(); err != nil {
			ui.WriteProblem(w, r, p.log, http.StatusBadRequest, ui.ProblemBadForm)
			return
		}
		tok := r.PostForm.Get("csrf")
		if tok == "" {
			tok = r.Header.Get("X-CSRF-Token")
		}
		if !session.FromContext(r.Context()).CheckCSRF(tok) {
			ui.WriteProblem(w, r, p.log, http.StatusForbidden, ui.ProblemCSRF)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (p *Panel) loopbackHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !httpbound.LoopbackHost(r.Host) {
			ui.WriteProblem(w, r, p.log, http.StatusForbidden, ui.ProblemBadHost)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// securityHeaders sets the headers of every response; pages are never
// cached (static files override Cache-Control).
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

// recoverer turns a panic in a handler into the generic error page; the
// panic goes to the log, never to the browser.
func (p *Panel) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				p.log.Error("panel: handler panic", "method", r.Method, "path", r.URL.Path, "panic", v)
				ui.WriteProblem(w, r, p.log, http.StatusInternalServerError, ui.ProblemInternal)
			}
		}()
		next.ServeHTTP(w, r)
	})
}
