// Package ui is what every control-panel page shares: the page chrome
// (layout, navigation, banners, one-shot messages), form fields
// every action needs (CSRF token, operator name), and the handler helpers
// that render pages, redirect back after a POST and turn internal errors
// into a generic page (the error itself goes to the log, never to the
// browser).
package ui

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"

	"github.com/hearth-dev/hearth/internal/store"
	"github.com/hearth-dev/hearth/web/session"
)

// Chrome is what the layout shows around a page.
type Chrome struct {
	// Title is the page's h1 and title.
	Title string
	// Active is the navigation key of the page (see Nav).
	Active string
	// CSRF is the session's anti-forgery token for the page's forms.
	CSRF string
	// Operator prefills every operator-name field.
	Operator string
	// Account is the signed-in user's name: a decision recorded under it
	// is said to be "you" (see Who).
	Account string
	Flash   *session.Flash
	// EStop, EStopBy and EStopReason put a banner on every page while
	// latched: who pressed it first (in words: "ChatGPT", the operator's
	// name) and why; later presses never replace them.
	EStop        bool
	EStopBy      string
	EStopReason  string
	EStopByModel bool
	// Pending is the number of permits waiting for the operator.
	Pending int
	// FlashInPage: the page shows Flash itself (in the card it belongs
	// to), not the layout.
	FlashInPage bool
	// Waiting is the oldest call waiting for the operator, for the banner
	// every page but Permits shows; nil when none waits.
	Waiting *Waiting
	// Lowered is the lowered-safety banner's list (none: no banner); its
	// slot is on every page and updates itself.
	Lowered LoweredView
	// DiskFull puts a banner on every page but Status (which leads with
	// it) while the disk holding Hearth's data is full (store.DiskFull).
	DiskFull bool
	// Banners are more banners the page shows above its content, after
	// the e-stop's, the waiting call's and the lowered-safety one.
	Banners []templ.Component
}

// Waiting is a call waiting for the operator's approval, as the banner
// says it: "ChatGPT is waiting for you: it wants to <Verb> <What> in
// <Where>".
type Waiting struct {
	// ID is the permit's id, for the banner's Allow once and Deny.
	ID                string
	Verb, What, Where string
	// Persist: allowing it makes a program start by itself, so the
	// banner offers only See (the card explains it first).
	Persist bool
	// More is how many other calls wait.
	More int
	// EStop: the emergency stop is on, so nothing can be allowed; the
	// banner offers Deny and See, and says why there is no Allow.
	EStop bool
}

// NavItem is one entry of the navigation.
type NavItem struct{ Key, Label, Href string }

// Nav lists the pages in navigation order.
var Nav = []NavItem{
	{"status", "Status", "/"},
	{"setup", "Setup", "/setup"},
	{"permits", "Permits", "/permits"},
	{"tasks", "Tasks", "/tasks"},
	{"changes", "Changes", "/changes"},
	{"safety", "Safety", "/safety"},
	{"ledger", "Ledger", "/ledger"},
	{"recipes", "Recipes and runs", "/recipes"},
	{"chatgpt", "ChatGPT window", "/chatgpt"},
}

// HTMXConfig is htmx's configuration, read from a meta tag (no inline
// script): no eval (so no hx-on handlers or js: values), no injected
// indicator styles (both would break the CSP), no requests to other
// origins, and no page snapshots in localStorage.
const HTMXConfig = `{"allowEval":false,"allowScriptTags":false,"includeIndicatorStyles":false,"selfRequestsOnly":true,"historyCacheSize":0,"refreshOnHistoryMiss":true}`

// CSRFHeaders is the hx-headers value that sends the CSRF token with
// every htmx request.
func CSRFHeaders(token string) string {
	return `{"X-CSRF-Token":"` + token + `"}`
}

// When formats a time for the operator, in the machine's local zone.
func When(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

// WhenPtr is When for an optional time.
func WhenPtr(t *time.Time) string {
	if t == nil {
		return "—"
	}
	return When(*t)
}

// Short abbreviates a long identifier or hash for a table cell.
func Short(s string) string {
	if len(s) <= 12 {
		return s
	}
	return s[:12] + "…"
}

// Kit is injected into every feature's handler.
type Kit struct {
	// Chrome builds the chrome of a page for the request's session.
	Chrome func(r *http.Request, title, active string) Chrome
	Log    *slog.Logger
}

// Render writes a page. It renders into memory first, so a failing
// component becomes the generic error page rather than half a page.
func (k *Kit) Render(w http.ResponseWriter, r *http.Request, status int, c templ.Component) {
	var buf bytes.Buffer
	if err := c.Render(r.Context(), &buf); err != nil {
		k.Fail(w, r, "render page", err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if _, err := w.Write(buf.Bytes()); err != nil {
		k.Log.Debug("panel: write response", "path", r.URL.Path, "err", err)
	}
}

// Fail logs an internal error with what was being done. A page that
// could not be read answers the generic error page; an action (a POST)
// goes back to its page with the failure said there in words, because a
// form sent in place (htmx) shows nothing of an error status and the
// person would be left believing it worked. The browser never sees the
// error's text.
func (k *Kit) Fail(w http.ResponseWriter, r *http.Request, what string, err error) {
	LogError(k.Log, r, "panel: "+what, err, "method", r.Method, "path", r.URL.Path)
	if r.Method == http.MethodPost && session.FromContext(r.Context()) != nil {
		k.Refuse(w, r, ActionPage(r.URL.Path), FailWords(err))
		return
	}
	WriteProblem(w, r, k.Log, http.StatusInternalServerError, ProblemInternal)
}

// FailWords says, in the panel's words, that an action failed and why
// when a person can do something about it (a full disk).
func FailWords(err error) string {
	if store.IsFull(err) {
		return "That did not happen: the disk that holds Hearth's data is full, so Hearth could not record it. " +
			"Free some space on that disk (" + FreeSpaceHint + "), then try again."
	}
	return "That did not work because of an error inside Hearth (its log has the details). Try again; if it keeps failing, restart Hearth."
}

// ActionPage is the page an action posted to path belongs to: its first
// segment's page ("/permits/x/approve" is the Permits page), the Status
// page for its own actions and the banners'.
func ActionPage(path string) string {
	seg, _, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	switch seg {
	case "permits", "safety", "tasks", "changes", "ledger", "recipes", "setup", "wake":
		return "/" + seg
	}
	return "/"
}

// LogError logs err of the request r at ERROR, unless it is only the end
// of the request: a browser that went on to another page (or closed the
// tab) cancels what its request was doing, which is no error of Hearth's
// and is logged at DEBUG.
func LogError(log *slog.Logger, r *http.Request, msg string, err error, args ...any) {
	args = append(args, "err", err)
	if Abandoned(r, err) {
		log.Debug(msg+" (the browser left the page)", args...)
		return
	}
	log.Error(msg, args...)
}

// Abandoned reports whether err is the cancellation of r by its browser.
func Abandoned(r *http.Request, err error) bool {
	return errors.Is(err, context.Canceled) && r.Context().Err() != nil
}

// Back stores a message for the next page and redirects there with 303,
// so that reloading the page does not post the form again.
func (k *Kit) Back(w http.ResponseWriter, r *http.Request, to string, f session.Flash) {
	session.FromContext(r.Context()).SetFlash(f)
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// Refuse is Back with an error message for the operator.
func (k *Kit) Refuse(w http.ResponseWriter, r *http.Request, to, text string) {
	k.Back(w, r, to, session.Flash{Error: true, Text: text})
}

// Done remembers the operator name of a successful action and goes back
// with a confirmation.
func (k *Kit) Done(w http.ResponseWriter, r *http.Request, to, operator, text string) {
	session.FromContext(r.Context()).SetOperator(operator)
	http.SetCookie(w, &http.Cookie{
		Name: session.OperatorCookieName, Value: url.QueryEscape(operator), Path: "/",
		MaxAge: 365 * 24 * 3600, HttpOnly: true, SameSite: http.SameSiteStrictMode,
	})
	k.Back(w, r, to, session.Flash{Text: text})
}

// MaxOperatorName bounds the operator-name field.
const MaxOperatorName = 100

// OperatorName returns the posted operator name, or false (after
// redirecting to back with a message) when it is missing.
func (k *Kit) OperatorName(w http.ResponseWriter, r *http.Request, back string) (string, bool) {
	name := strings.TrimSpace(r.PostFormValue("operator"))
	if name == "" {
		k.Refuse(w, r, back, "Enter your name in the operator field: every operator action is recorded in the ledger under it.")
		return "", false
	}
	if len(name) > MaxOperatorName {
		k.Refuse(w, r, back, "The operator name is too long (at most 100 characters).")
		return "", false
	}
	return name, true
}

// Problem is a page without the panel's chrome: a refusal or an error.
type Problem struct {
	Title  string
	Text   string
	TestID string
	// Login adds the way back in: the tray or the printed login URL.
	Login bool
}

// The problem pages the panel answers with.
var (
	ProblemInternal = Problem{Title: "Something went wrong", TestID: "error-internal",
		Text: "Hearth could not complete this request. The details are in Hearth's log. Go back and try again."}
	ProblemUnauthorized = Problem{Title: "Open the control panel from Hearth", TestID: "unauthorized", Login: true,
		Text: "This browser is not signed in to the control panel, or its sign-in has expired."}
	ProblemBadHost = Problem{Title: "Forbidden", TestID: "forbidden-host",
		Text: "The control panel answers only on this computer's loopback address (127.0.0.1, ::1 or localhost)."}
	ProblemCrossOrigin = Problem{Title: "Forbidden", TestID: "forbidden-origin",
		Text: "This request came from another site, so it was refused. Use the control panel's own pages."}
	ProblemCSRF = Problem{Title: "The form has expired", TestID: "forbidden-csrf",
		Text: "This form's security token is missing or out of date. Reload the page and try again."}
	ProblemNotFound = Problem{Title: "Not found", TestID: "not-found",
		Text: "There is no such page in the control panel."}
	ProblemMethod = Problem{Title: "Method not allowed", TestID: "method-not-allowed",
		Text: "This address does not accept that kind of request. Actions are sent by the buttons on the panel's pages."}
	ProblemBadForm = Problem{Title: "Bad request", TestID: "bad-request",
		Text: "The form could not be read. Reload the page and try again."}
)

// WriteProblem answers a problem page with status.
func WriteProblem(w http.ResponseWriter, r *http.Request, log *slog.Logger, status int, p Problem) {
	var buf bytes.Buffer
	if err := ProblemPage(p).Render(r.Context(), &buf); err != nil {
		LogError(log, r, "panel: render problem page", err)
		http.Error(w, p.Title, status)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if _, err := w.Write(buf.Bytes()); err != nil {
		log.Debug("panel: write response", "path", r.URL.Path, "err", err)
	}
}

// Until says how long until t, in whole minutes, for expiry times.
func Until(t time.Time) string {
	d := time.Until(t)
	switch {
	case d <= 0:
		return "expired"
	case d < time.Minute:
		return "in less than a minute"
	case d < 2*time.Minute:
		return "in 1 minute"
	}
	return "in " + strconv.Itoa(int(d/time.Minute)) + " minutes"
}

// Who says who did something from the name it was recorded under ("by"
// of an e-stop, "operator" of a decision): "ChatGPT" for the model, "you"
// for the signed-in user (account) or a record without a name, else the
// name the operator gave.
func Who(by, account string) string {
	switch n := strings.TrimPrefix(by, "operator:"); {
	case by == "model":
		return "ChatGPT"
	case n == "" || n == account:
		return "you"
	default:
		return n
	}
}

// PageTitle is the browser tab's title: the page, with the number of
// waiting permits first when there are any ("(2) Permits · …").
func PageTitle(title string, pending int) string {
	t := title + " · Hearth control panel"
	if pending > 0 {
		t = "(" + strconv.Itoa(pending) + ") " + t
	}
	return t
}
