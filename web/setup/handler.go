// Package setup is the control panel's Setup page (docs/DESIGN.md, "The panel" and "Tunnel, tray and recovery"): where
// the operator connects Hearth to ChatGPT through OpenAI's Secure MCP
// Tunnel once: the pinned tunnel-client program, the tunnel runtime key,
// the tunnel ID and tunnel-client's init and doctor, starting and
// stopping tunnel-client, and whether it starts with Hearth.
//
// Pinning is operator-only, here: Hearth runs only the tunnel-client file
// pinned on this page (its path and SHA-256), never one found on PATH at
// start. The page shows the pin, hashes the file again when it loads, and
// says so when the file changed. It lists every tunnel-client it finds
// (beside hearth-tray, tunnel.client_path, PATH) with its full path, its
// SHA-256 and where it came from, warning about one found on PATH or
// inside an fs root, where the model could have planted it; a path the
// operator types is hashed and shown the same way before it can be
// pinned. Each "Pin" posts back the path and the SHA-256 the operator
// saw, and a file that changed since is refused (tunnel.PinClient). Only
// init pins by itself, and only the tunnel-client beside hearth-tray. The
// tunnel's state is refreshed every 2 s by htmx; every action is a plain
// form POST that redirects back with a one-shot message, so the page
// works without JavaScript.
//
// The runtime key goes from the posted form straight to
// tunnel.Supervisor.SetKey. No response, redirect, message, log line or
// session ever holds it: after saving, the page shows only KeyHint (its
// last four characters), and a refused key is never echoed back. A
// rejected tunnel ID is not echoed either, in case the key was pasted
// into the wrong field.
package setup

import (
	"errors"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/tunnel"
	"github.com/hearth-dev/hearth/web/session"
	"github.com/hearth-dev/hearth/web/status"
	"github.com/hearth-dev/hearth/web/ui"
)

// ClientReleases is where tunnel-client is downloaded from.
const ClientReleases = "https://github.com/openai/tunnel-client/releases/latest"

// maxTunnelID bounds the tunnel ID's hex part (config allows 120
// characters after "tunnel_").
const maxTunnelID = 120

// Handler serves the Setup page and its actions. Every field but
// StartAtLogon is required.
type Handler struct {
	Kit    *ui.Kit
	Tunnel *tunnel.Supervisor
	// MCPURL is Hearth's MCP endpoint, which init writes into the
	// tunnel-client profile.
	MCPURL func() string
	// Start and Stop run tunnel-client under Hearth's own lifetime (a
	// request's context would end it with the request).
	Start func() error
	Stop  func()
	// StartAtLogon reports whether Hearth starts at logon; nil where that
	// is not available.
	StartAtLogon func() (bool, error)
	// Ports reports the listeners Hearth moved off a port another program
	// held (the tunnel profile then names the new address); nil: none.
	Ports func() []status.PortMove

	outcomes outcomes
}

// Mount adds the page's routes.
func (h *Handler) Mount(r chi.Router) {
	r.Get("/setup", h.page)
	r.Get("/setup/live", h.live)
	r.Post("/setup/pin", h.pin)
	r.Post("/setup/pin/check", h.checkPath)
	r.Post("/setup/key", h.saveKey)
	r.Post("/setup/key/clear", h.clearKey)
	r.Post("/setup/init", h.runInit)
	r.Post("/setup/doctor", h.runDoctor)
	r.Post("/setup/start", h.start)
	r.Post("/setup/stop", h.stop)
	r.Post("/setup/restart", h.restart)
	r.Post("/setup/autostart", h.autostart)
	r.Post("/setup/tunnel-id", h.saveTunnelID)
	r.Post("/setup/connect", h.connect)
	r.Post("/setup/open-folder", h.openFolder)
	r.Get("/setup/progress/live", h.progressLive)
	r.Get("/setup/program/live", h.programLive)
	r.Post("/setup/program/check", h.checkAgain)
}

func (h *Handler) page(w http.ResponseWriter, r *http.Request) {
	v := h.load(true)
	if o, ok := h.outcomes.pop(session.FromContext(r.Context())); ok {
		v.Result, v.KeySaved, v.Client.Checked, v.Progress = o.result, o.keySaved, o.checked, o.progress
	}
	c := h.Kit.Chrome(r, "Setup", "setup")
	c.FlashInPage, v.Flash = true, c.Flash
	h.Kit.Render(w, r, http.StatusOK, Page(c, v))
}

func (h *Handler) live(w http.ResponseWriter, r *http.Request) {
	h.Kit.Render(w, r, http.StatusOK, State(h.load(false)))
}

const back = "/setup"

// ok goes back with a confirmation, shown in the card of the form.
func (h *Handler) ok(w http.ResponseWriter, r *http.Request, text string) {
	h.Kit.Back(w, r, back, session.Flash{Text: text, Card: cardOf(r.URL.Path)})
}

// refuse goes back with an error, shown in the card of the form.
func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, text string) {
	h.Kit.Back(w, r, back, session.Flash{Text: text, Error: true, Card: cardOf(r.URL.Path)})
}

// cardOf is the card of the Setup page whose form posts to path ("": the
// message goes above the steps).
func cardOf(path string) string {
	switch {
	case strings.HasPrefix(path, "/setup/pin"):
		return StepProgram
	case strings.HasPrefix(path, "/setup/key"):
		return StepKey
	}
	return ""
}

// failed logs an internal error and goes back saying where the details
// are; the error's text never reaches the browser.
func (h *Handler) failed(w http.ResponseWriter, r *http.Request, what string, err error, text string) {
	h.Kit.Log.Error("panel: "+what, "err", err)
	h.refuse(w, r, text+" The details are in Hearth's log.")
}

// pin pins the posted client_path with the posted client_sha256, the
// hash the page showed the operator: a file that no longer has it is
// refused (tunnel.PinClient), so what is pinned is what was shown. A
// refused path is not quoted back (it may be the key, pasted in the wrong
// field).
func (h *Handler) pin(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimSpace(r.PostFormValue("client_path"))
	if path == "" {
		h.refuse(w, r, "tunnel-client path: choose a file to pin from the list under \"The tunnel-client program\", or give its full path there and check its SHA-256 first.")
		return
	}
	pin, err := h.Tunnel.PinClient(path, r.PostFormValue("client_sha256"))
	var ce *config.Error
	var mismatch *tunnel.HashMismatchError
	switch {
	case err == nil:
	case errors.As(err, &ce) && ce.Key == "tunnel.client_sha256":
		h.refuse(w, r, "tunnel-client SHA-256: missing or not a SHA-256. Pin a file from the list under \"The tunnel-client program\", which shows each file's SHA-256.")
		return
	case errors.As(err, &ce):
		h.refuse(w, r, "tunnel-client path: that is not the full path of a program file. Give the whole path of "+tunnel.ClientName()+", from the drive or root folder to the file name.")
		return
	case errors.As(err, &mismatch):
		h.refuse(w, r, "Not pinned: "+err.Error()+".")
		return
	default:
		h.failed(w, r, "pin tunnel-client", err, "Hearth could not pin tunnel-client.")
		return
	}
	h.Kit.Log.Info("panel: tunnel-client pinned", "path", pin.Path, "sha256", pin.SHA256)
	text := "Trusted. Hearth runs only this file, and only while it stays the same (Details: its SHA-256)."
	switch {
	case h.Tunnel.Running():
		text += " The connection that runs now keeps running; restart it under Details to run this file."
	case h.Tunnel.Config().Autostart:
		// Connecting is what the person chose ("connect whenever Hearth
		// starts"): the file was all that stopped it, so connect now
		// rather than leave a Connect to press again.
		text += h.connectAgain()
	}
	h.ok(w, r, text)
}

// connectAgain starts the tunnel after a pin lifted what stopped it, when
// tunnel.autostart is on, and says so in a sentence ("" when there is
// still a step to do first: the page shows it).
func (h *Handler) connectAgain() string {
	err := h.Start()
	switch {
	case err == nil:
		return " Hearth connects with it now, as it does whenever it starts."
	case errors.Is(err, tunnel.ErrNotConfigured):
		return ""
	}
	h.Kit.Log.Warn("panel: connect after the pin", "err", err)
	return " Hearth could not connect by itself: " + Sentence(h.Tunnel.Status()) + "."
}

// checkPath hashes the file at the posted client_path, which the
// operator typed, and shows it (path, SHA-256, warnings) with its own
// pin form: typing a path never pins by itself. A refused path is not
// quoted back.
func (h *Handler) checkPath(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimSpace(r.PostFormValue("client_path"))
	if path == "" {
		h.refuse(w, r, "tunnel-client path: enter the full path of "+tunnel.ClientName()+".")
		return
	}
	cand, err := h.Tunnel.Inspect(path)
	var ce *config.Error
	switch {
	case errors.As(err, &ce):
		h.refuse(w, r, "tunnel-client path: that is not the full path of a program file. Give the whole path of "+tunnel.ClientName()+", from the drive or root folder to the file name.")
		return
	case err != nil:
		h.failed(w, r, "check tunnel-client", err, "Hearth could not check that file.")
		return
	case cand.Err != nil:
		h.Kit.Log.Warn("panel: hash a tunnel-client given", "path", cand.Path, "err", cand.Err)
		h.refuse(w, r, "Hearth cannot read "+cand.Path+" (another program may hold it open). The details are in Hearth's log.")
		return
	}
	h.outcomes.put(session.FromContext(r.Context()), outcome{checked: &cand})
	h.ok(w, r, "Check the SHA-256 of "+cand.Path+" under \"The tunnel-client program\", then pin it there.")
}

// saveKey stores the posted runtime key. SetKey's own refusals (empty,
// too short, stray characters) are plain errors written never to quote
// the key, and are shown; a failure of the store or the ledger wraps its
// cause and goes to the log instead.
func (h *Handler) saveKey(w http.ResponseWriter, r *http.Request) {
	key := r.PostFormValue("key")
	if strings.TrimSpace(key) == "" {
		h.refuse(w, r, "Tunnel key: paste the key into the field before saving.")
		return
	}
	wasRefused := h.Tunnel.Status().State == tunnel.StateKeyRefused && !h.Tunnel.Running()
	if err := h.Tunnel.SetKey(key); err != nil {
		if errors.Unwrap(err) == nil {
			h.refuse(w, r, "Tunnel key not saved: "+err.Error()+".")
			return
		}
		h.failed(w, r, "save tunnel runtime key", err, "Hearth could not save the tunnel key.")
		return
	}
	h.outcomes.put(session.FromContext(r.Context()), outcome{keySaved: true})
	// The key's step says "Saved. It ends in …": the message adds only
	// what happens next, so that the key is confirmed once.
	text := ""
	if h.Tunnel.Running() {
		text = "The connection restarts with the new key."
	} else if wasRefused {
		// The key OpenAI refused is replaced: connect again with it.
		if err := h.Start(); err != nil {
			h.Kit.Log.Warn("panel: start the tunnel with the new key", "err", err)
		} else {
			text = "Hearth connects again with the new key."
		}
	}
	if text == "" {
		http.Redirect(w, r, back, http.StatusSeeOther)
		return
	}
	h.ok(w, r, text)
}

func (h *Handler) clearKey(w http.ResponseWriter, r *http.Request) {
	present, err := h.Tunnel.KeyPresent()
	if err != nil {
		h.failed(w, r, "read tunnel key presence", err, "Hearth could not read its secrets store.")
		return
	}
	if !present {
		h.refuse(w, r, "There is no tunnel key to clear.")
		return
	}
	if err := h.Tunnel.ClearKey(); err != nil {
		h.failed(w, r, "clear tunnel runtime key", err, "Hearth could not clear the runtime key.")
		return
	}
	h.ok(w, r, "Tunnel key cleared. The connection is stopped until you save a new key and connect again.")
}

// ValidTunnelID reports whether id has the shape of a tunnel ID:
// "tunnel_" followed by hexadecimal digits.
func ValidTunnelID(id string) bool {
	hex, ok := strings.CutPrefix(id, "tunnel_")
	if !ok || hex == "" || len(hex) > maxTunnelID {
		return false
	}
	for _, c := range hex {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// runInit runs tunnel-client init with the posted tunnel ID (replacing a
// profile made before); a successful init saves the ID as
// tunnel.tunnel_id and restarts a running tunnel-client with it.
func (h *Handler) runInit(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimSpace(r.PostFormValue("tunnel_id"))
	switch {
	case id == "":
		h.refuse(w, r, "Tunnel ID: enter the tunnel ID from the OpenAI Platform's tunnel settings.")
		return
	case !ValidTunnelID(id):
		// Not quoted: it may be the runtime key, pasted in the wrong field.
		h.refuse(w, r, "Tunnel ID: that is not a tunnel ID. A tunnel ID is tunnel_ followed by digits and the letters a to f; copy it from the OpenAI Platform's tunnel settings.")
		return
	}
	_, wasPinned := h.Tunnel.Pinned()
	res, err := h.Tunnel.Init(r.Context(), id, h.MCPURL())
	switch {
	case errors.Is(err, tunnel.ErrNotPinned):
		h.refuse(w, r, "Hearth could not prepare the connection: no connection program is trusted yet. Trust one in step 1 (Hearth trusts the one beside it by itself).")
		return
	case errors.Is(err, tunnel.ErrClientChanged), errors.Is(err, tunnel.ErrClientUnreadable):
		h.Kit.Log.Warn("panel: tunnel-client init did not run", "err", err)
		h.refuse(w, r, "Hearth could not use the connection program: it changed since you trusted it, or cannot be read just now. Trust it again in step 1.")
		return
	}
	if err != nil && res.Args == nil {
		h.failed(w, r, "run tunnel-client init", err, "Hearth could not prepare the connection.")
		return
	}
	h.outcomes.put(session.FromContext(r.Context()), outcome{result: &Result{Command: "init", CommandResult: res}})
	switch {
	case err != nil:
		h.failed(w, r, "save tunnel ID after init", err, "The connection is prepared, but Hearth could not save the tunnel ID.")
	case !res.OK():
		h.refuse(w, r, "Hearth could not prepare the connection: the connection program reported a problem (Details: what it said).")
	case h.Tunnel.Running():
		h.Tunnel.Restart()
		h.ok(w, r, "Connection prepared with this tunnel ID; it restarts with it."+pinned(wasPinned, h.Tunnel))
	default:
		h.ok(w, r, "Connection prepared and the tunnel ID saved. Connect in step 4."+pinned(wasPinned, h.Tunnel))
	}
}

// pinned tells the operator about the pin init made, if it made one, in
// plain words (the file and its SHA-256 are under Details).
func pinned(wasPinned bool, t *tunnel.Supervisor) string {
	if _, ok := t.Pinned(); wasPinned || !ok {
		return ""
	}
	return " Hearth now trusts the connection program beside it, and runs it only while it stays the same (Details show which file)."
}

func (h *Handler) runDoctor(w http.ResponseWriter, r *http.Request) {
	if !h.clientReady(w, r, "check the connection") {
		return
	}
	res, err := h.Tunnel.Doctor(r.Context())
	if errors.Is(err, tunnel.ErrClientChanged) || errors.Is(err, tunnel.ErrClientUnreadable) {
		h.Kit.Log.Warn("panel: tunnel-client doctor did not run", "err", err)
		h.refuse(w, r, "The check did not run: the connection program changed since you trusted it, or cannot be read just now. Trust it again in step 1.")
		return
	}
	if err != nil {
		h.failed(w, r, "run tunnel-client doctor", err, "Hearth could not check the connection.")
		return
	}
	h.outcomes.put(session.FromContext(r.Context()), outcome{result: &Result{Command: "doctor", CommandResult: res}})
	if !res.OK() {
		h.refuse(w, r, "The connection check found problems (Details: what it said).")
		return
	}
	h.ok(w, r, "The connection check found no problems (Details: what it said).")
}

// clientReady goes back saying what to do when cmd cannot run because
// nothing is pinned. A pinned file that changed is refused by the command
// itself.
func (h *Handler) clientReady(w http.ResponseWriter, r *http.Request, cmd string) bool {
	if _, ok := h.Tunnel.Pinned(); ok {
		return true
	}
	h.refuse(w, r, "Hearth could not "+cmd+": no connection program is trusted yet. Trust one in step 1.")
	return false
}

func (h *Handler) start(w http.ResponseWriter, r *http.Request) {
	if h.Tunnel.Running() {
		h.refuse(w, r, "The connection is already running.")
		return
	}
	if err := h.Start(); err != nil {
		if errors.Is(err, tunnel.ErrNotConfigured) {
			h.refuse(w, r, "The connection cannot start yet: finish the steps above (Details: what is missing).")
			return
		}
		if errors.Is(err, tunnel.ErrClientChanged) {
			h.refuse(w, r, "The connection did not start: the connection program changed since you trusted it. Trust it again in step 1.")
			return
		}
		h.failed(w, r, "start tunnel", err, "Hearth could not start the connection.")
		return
	}
	h.ok(w, r, "Connecting… This page shows when OpenAI accepts the connection.")
}

// stop stops the tunnel and says whether that lasts past Hearth's next
// start. With at_start=off ("Stop and don't connect at start") it also
// turns tunnel.autostart off (one key of config.json), so that it does;
// without it, "Stop for now" lasts until Hearth next starts, when
// tunnel.autostart connects again.
func (h *Handler) stop(w http.ResponseWriter, r *http.Request) {
	if !h.Tunnel.Running() {
		h.refuse(w, r, "The connection is not running.")
		return
	}
	if r.PostFormValue("at_start") == "off" {
		err := h.Tunnel.UpdateConfig(func(t *config.Tunnel) error {
			t.Autostart = false
			return nil
		})
		if err != nil {
			h.failed(w, r, "turn tunnel.autostart off", err, "Hearth did not stop the connection: it could not save that it should not connect at start.")
			return
		}
	}
	h.Stop()
	if h.Tunnel.Config().Autostart {
		h.ok(w, r, "Connection stopped for now. Hearth connects again when it next starts (after a restart of the computer, too).")
		return
	}
	h.ok(w, r, "Connection stopped. Hearth will not connect by itself when it starts; connect here when you need it.")
}

func (h *Handler) restart(w http.ResponseWriter, r *http.Request) {
	if !h.Tunnel.Restart() {
		h.refuse(w, r, "The connection is not running; start it instead.")
		return
	}
	h.ok(w, r, "The connection restarts.")
}

// autostart sets tunnel.autostart from the checkbox (absent: off).
func (h *Handler) autostart(w http.ResponseWriter, r *http.Request) {
	on := r.PostFormValue("autostart") == "on"
	err := h.Tunnel.UpdateConfig(func(t *config.Tunnel) error {
		t.Autostart = on
		return nil
	})
	if err != nil {
		h.failed(w, r, "set tunnel.autostart", err, "Hearth could not save the setting.")
		return
	}
	if on {
		h.ok(w, r, "Hearth will connect whenever it starts.")
		return
	}
	h.ok(w, r, "Hearth will not connect by itself; start the connection here when you need it.")
}
