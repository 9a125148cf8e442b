package setup

import (
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/tunnel"
	"github.com/hearth-dev/hearth/web/session"
)

// Phase is where the guided setup is: the first step not done yet.
type Phase string

// Phases, in the order of the steps.
const (
	PhaseProgram    Phase = "program"
	PhaseKey        Phase = "key"
	PhaseTunnelID   Phase = "tunnel-id"
	PhaseConnect    Phase = "connect"
	PhaseConnecting Phase = "connecting"
	PhaseChatGPT    Phase = "chatgpt"
	PhaseDone       Phase = "done"
)

// Step names, in order; each is a card of the page (id "step-"+name).
const (
	StepProgram   = "program"
	StepKey       = "key"
	StepTunnelID  = "tunnel-id"
	StepConnect   = "connect"
	StepChatGPT   = "chatgpt"
	StepFirstCall = "first-call"
)

// steps lists the step names in order.
var steps = []string{StepProgram, StepKey, StepTunnelID, StepConnect, StepChatGPT, StepFirstCall}

// StepState is how a step shows: done, the current one (the only one
// with a primary button) or waiting for an earlier one.
type StepState string

// Step states.
const (
	Done    StepState = "done"
	Current StepState = "current"
	Waiting StepState = "waiting"
)

// ProgramOK reports whether the connection program is trusted and
// unchanged.
func (v View) ProgramOK() bool {
	return (v.Pinned || v.BesideExe) && !v.Client.Changed && v.Status.State != tunnel.StateClientChanged
}

// Summary is the tunnel's state for the Status page: whether setup is
// finished (the first four steps) and the state in one sentence.
//
// Someone who finished setting up once (View.Finished) is never told to
// "finish setting up" again: when a step's part went away since (the
// program changed or is gone, the key was cleared), setup counts as done
// and the sentence says what changed.
func Summary(t *tunnel.Supervisor) (setupDone, ready bool, sentence string) {
	cfg := t.Config()
	v := View{Status: t.Status(), Running: t.Running(), TunnelID: cfg.TunnelID, Autostart: cfg.Autostart}
	_, v.Pinned = t.Pinned()
	v.PinGone = pinGone(t)
	v.BesideExe = !v.Pinned && t.HasBesideExe()
	v.KeyPresent, _ = t.KeyPresent()
	v.FirstCall = t.FirstChatGPTCall()
	switch v.Phase() {
	case PhaseProgram, PhaseTunnelID:
		if v.Finished() {
			return true, false, v.whatChanged()
		}
		return false, false, ""
	case PhaseKey:
		if v.KeyRefused() {
			return true, false, Sentence(v.Status)
		}
		if v.Finished() {
			return true, false, v.whatChanged()
		}
		return false, false, ""
	case PhaseConnect:
		if v.FirstCall.IsZero() && v.Status.State == tunnel.StateStopped && !cfg.Autostart {
			// Never connected: Connect is still to do.
			return false, false, ""
		}
	}
	return true, v.Status.State == tunnel.StateReady, Sentence(v.Status)
}

// Finished reports whether the person finished setting up once: ChatGPT
// reached Hearth, or Connect turned "connect whenever Hearth starts" on
// (tunnel.autostart). Such a person is told what changed since, never to
// finish setting up.
func (v View) Finished() bool { return !v.FirstCall.IsZero() || v.Autostart }

// whatChanged says, for someone who finished setting up, what went away
// since: the first step that is no longer done, in plain words.
func (v View) whatChanged() string {
	switch v.Phase() {
	case PhaseProgram:
		if v.Pinned && (v.PinGone || v.Client.Gone) {
			return "the connection program Hearth trusted is gone; put it back, or trust another, on the Setup page"
		}
		if v.Pinned {
			return "the connection program changed since you trusted it (an update does that too); trust it again on the Setup page"
		}
		return "no connection program is trusted any more; trust one on the Setup page"
	case PhaseKey:
		return "the tunnel key is no longer saved; paste it again on the Setup page"
	case PhaseTunnelID:
		return "the tunnel ID is no longer saved; enter it again on the Setup page"
	}
	return Sentence(v.Status)
}

// pinGone reports whether the pinned tunnel-client's file is missing (a
// look at the path, not a hash: cheap enough for every refresh).
func pinGone(t *tunnel.Supervisor) bool {
	pin, ok := t.Pinned()
	if !ok {
		return false
	}
	_, err := os.Stat(pin.Path)
	return errors.Is(err, fs.ErrNotExist)
}

// Live reports whether the page waits for news from the connection, and
// so follows it by itself: from Connect on, and while OpenAI's refusal of
// the key is shown (another tab may save a new key). While the first
// steps wait for what the user types, it does not.
func (v View) Live() bool {
	switch v.Phase() {
	case PhaseProgram, PhaseTunnelID:
		return false
	case PhaseKey:
		return v.KeyRefused()
	}
	return true
}

// KeyRefused: OpenAI refused the saved key.
func (v View) KeyRefused() bool { return v.Status.State == tunnel.StateKeyRefused }

// Phase is the first step not done.
func (v View) Phase() Phase {
	switch {
	case !v.ProgramOK():
		return PhaseProgram
	case !v.KeyPresent || v.KeyRefused():
		return PhaseKey
	case v.TunnelID == "":
		return PhaseTunnelID
	case v.Status.State == tunnel.StateReady && v.FirstCall.IsZero():
		return PhaseChatGPT
	case v.Status.State == tunnel.StateReady:
		return PhaseDone
	case v.Running:
		return PhaseConnecting
	}
	return PhaseConnect
}

// Step is the state of the named step: current when it is the phase's
// step, else done when what it sets up is in place (a tunnel ID saved
// stays done while a refused key is pasted again), else waiting.
func (v View) Step(name string) StepState {
	var cur []string
	switch v.Phase() {
	case PhaseProgram:
		cur = []string{StepProgram}
	case PhaseKey:
		cur = []string{StepKey}
	case PhaseTunnelID:
		cur = []string{StepTunnelID}
	case PhaseConnect, PhaseConnecting:
		cur = []string{StepConnect}
	case PhaseChatGPT:
		// The ChatGPT half and the wait for its first call go together.
		cur = []string{StepChatGPT, StepFirstCall}
	}
	if slices.Contains(cur, name) {
		return Current
	}
	if v.stepDone(name) {
		return Done
	}
	return Waiting
}

// WaitingText is what a waiting step says: which step comes first.
func (v View) WaitingText() string {
	n := map[Phase]string{PhaseProgram: "1", PhaseKey: "2", PhaseTunnelID: "3", PhaseConnect: "4", PhaseConnecting: "4", PhaseChatGPT: "5"}[v.Phase()]
	if n == "" {
		return "Waiting."
	}
	return "After step " + n + "."
}

// stepDone reports whether what a step sets up is in place.
func (v View) stepDone(name string) bool {
	switch name {
	case StepProgram:
		return v.ProgramOK()
	case StepKey:
		return v.KeyPresent && !v.KeyRefused()
	case StepTunnelID:
		return v.TunnelID != ""
	case StepConnect:
		return v.Status.State == tunnel.StateReady
	case StepChatGPT, StepFirstCall:
		return !v.FirstCall.IsZero()
	}
	return false
}

// Lead is the page's one sentence of state.
func (v View) Lead() string {
	switch v.Phase() {
	case PhaseProgram:
		if v.Finished() {
			return "ChatGPT cannot reach Hearth: " + strings.TrimSuffix(v.whatChanged(), " on the Setup page") + " (step 1)."
		}
		return "Finish setting up: step 1 of 6, the connection program."
	case PhaseKey:
		if v.KeyRefused() {
			return "ChatGPT cannot reach Hearth: OpenAI refused the tunnel key. Paste it again (step 2)."
		}
		if v.Finished() {
			return "ChatGPT cannot reach Hearth: " + strings.TrimSuffix(v.whatChanged(), " on the Setup page") + " (step 2)."
		}
		return "Finish setting up: step 2 of 6, the tunnel key."
	case PhaseTunnelID:
		if v.Finished() {
			return "ChatGPT cannot reach Hearth: " + strings.TrimSuffix(v.whatChanged(), " on the Setup page") + " (step 3)."
		}
		return "Finish setting up: step 3 of 6, the tunnel ID."
	case PhaseConnect:
		if v.Finished() {
			return "ChatGPT cannot reach Hearth: " + Sentence(v.Status) + "."
		}
		return "Finish setting up: step 4 of 6, connect."
	case PhaseConnecting:
		if v.Status.State == tunnel.StateStarting {
			return "Connecting to OpenAI…"
		}
		return "ChatGPT cannot reach Hearth yet: " + Sentence(v.Status) + "."
	case PhaseChatGPT:
		return "Hearth is connected to OpenAI. Now add Hearth to ChatGPT (step 5), then try it."
	}
	return "ChatGPT can reach Hearth. Setup is done."
}

// Sentence says the tunnel's state in plain words.
func Sentence(st tunnel.Status) string {
	switch st.State {
	case tunnel.StateReady:
		return "connected to OpenAI; ChatGPT can reach Hearth"
	case tunnel.StateKeyRefused:
		return "OpenAI refused the tunnel key: paste it again on the Setup page"
	case tunnel.StateStarting:
		return "connecting to OpenAI"
	case tunnel.StateUnhealthy:
		if st.Reason == tunnel.ReasonPollFailing {
			return "the connection to OpenAI is failing"
		}
		return "the connection program runs but is not connected"
	case tunnel.StateBackoff:
		return "the connection program stopped; Hearth restarts it in a moment"
	case tunnel.StateCrashLoop:
		return "the connection program stopped after failing several times; connect again"
	case tunnel.StateClientChanged:
		return "the connection program changed since you trusted it; trust it again"
	case tunnel.StateNotConfigured:
		return "not set up yet"
	case tunnel.StateStopped:
		if st.Reason == tunnel.ReasonClientBack {
			return "the connection program is back, unchanged; connect again on the Setup page"
		}
	}
	return "not connected (the connection is stopped)"
}

// progress is the outcome of Connect, shown in its card once.
type progress struct {
	Lines []ProgressLine
}

// ProgressLine is one part of Connect and how it went.
type ProgressLine struct {
	Label string
	OK    bool
}

// LineState is how a line of Connect's progress shows: "false" when it
// failed; "true" only once OpenAI accepted the key (the tunnel is ready),
// since until then a part that went through proves nothing to the user;
// "waiting" before that.
func (v View) LineState(l ProgressLine) string {
	switch {
	case !l.OK:
		return "false"
	case v.Status.State == tunnel.StateReady:
		return "true"
	}
	return "waiting"
}

func (h *Handler) backTo(w http.ResponseWriter, r *http.Request, card, text string, isErr bool) {
	h.Kit.Back(w, r, back, session.Flash{Text: text, Error: isErr, Card: card})
}

// saveTunnelID saves the posted tunnel ID (tunnel.tunnel_id) after a
// check of its format; a refused one is not quoted back (it may be the
// key, pasted in the wrong field).
func (h *Handler) saveTunnelID(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimSpace(r.PostFormValue("tunnel_id"))
	switch {
	case id == "":
		h.backTo(w, r, StepTunnelID, "Tunnel ID: paste the tunnel ID from the OpenAI Platform into the field first.", true)
		return
	case !strings.HasPrefix(id, "tunnel_"):
		h.backTo(w, r, StepTunnelID, "Tunnel ID: that is not a tunnel ID. A tunnel ID starts with tunnel_ (the tunnel key starts differently and goes in step 2).", true)
		return
	case !ValidTunnelID(id):
		h.backTo(w, r, StepTunnelID, "Tunnel ID: after tunnel_ a tunnel ID has only the digits 0 to 9 and the letters a to f, with no spaces. Copy it again from the OpenAI Platform.", true)
		return
	}
	err := h.Tunnel.UpdateConfig(func(t *config.Tunnel) error {
		t.TunnelID = id
		return nil
	})
	if err != nil {
		h.Kit.Log.Error("panel: save tunnel ID", "err", err)
		h.backTo(w, r, StepTunnelID, "Hearth could not save the tunnel ID. The details are in Hearth's log.", true)
		return
	}
	h.backTo(w, r, StepTunnelID, "Tunnel ID saved.", false)
}

// connect is the one "Connect" of the guided setup: it prepares the
// connection (tunnel-client init with the saved tunnel ID and the MCP
// endpoint's address; a profile made before is replaced), checks it (doctor), turns "connect whenever Hearth
// starts" on and starts the tunnel (or restarts it when it runs).
func (h *Handler) connect(w http.ResponseWriter, r *http.Request) {
	v := h.load(false)
	switch v.Phase() {
	case PhaseProgram:
		h.backTo(w, r, StepConnect, "Connect needs the connection program first (step 1).", true)
		return
	case PhaseKey:
		h.backTo(w, r, StepConnect, "Connect needs the tunnel key first (step 2).", true)
		return
	case PhaseTunnelID:
		h.backTo(w, r, StepConnect, "Connect needs the tunnel ID first (step 3).", true)
		return
	}
	sess := session.FromContext(r.Context())
	var pr progress
	fail := func(text string, res *Result) {
		h.outcomes.put(sess, outcome{result: res, progress: &pr})
		h.backTo(w, r, StepConnect, text, true)
	}
	res, err := h.Tunnel.Init(r.Context(), v.TunnelID, h.MCPURL())
	switch {
	case errors.Is(err, tunnel.ErrNotPinned), errors.Is(err, tunnel.ErrClientChanged), errors.Is(err, tunnel.ErrClientUnreadable):
		pr.Lines = append(pr.Lines, ProgressLine{Label: "Prepare the connection"})
		fail("Hearth could not use the connection program: trust it again in step 1.", nil)
		return
	case err != nil && res.Args == nil:
		h.Kit.Log.Error("panel: connect: tunnel-client init", "err", err)
		pr.Lines = append(pr.Lines, ProgressLine{Label: "Prepare the connection"})
		fail("Hearth could not prepare the connection. The details are in Hearth's log.", nil)
		return
	case err != nil:
		h.Kit.Log.Error("panel: connect: save the tunnel ID after init", "err", err)
		pr.Lines = append(pr.Lines, ProgressLine{Label: "Prepare the connection"})
		fail("Hearth could not save the tunnel ID. The details are in Hearth's log.", &Result{Command: "init", CommandResult: res})
		return
	case !res.OK():
		pr.Lines = append(pr.Lines, ProgressLine{Label: "Prepare the connection"})
		fail("Hearth could not prepare the connection: the connection program reported a problem (see Details).", &Result{Command: "init", CommandResult: res})
		return
	}
	pr.Lines = append(pr.Lines, ProgressLine{Label: "Prepare the connection", OK: true})
	doc, err := h.Tunnel.Doctor(r.Context())
	if err != nil {
		h.Kit.Log.Error("panel: connect: tunnel-client doctor", "err", err)
		pr.Lines = append(pr.Lines, ProgressLine{Label: "Check the connection"})
		fail("Hearth could not check the connection. The details are in Hearth's log.", nil)
		return
	}
	if !doc.OK() {
		pr.Lines = append(pr.Lines, ProgressLine{Label: "Check the connection"})
		text := "The connection check found a problem (see Details)."
		if tunnel.KeyRefused(doc.Stdout + doc.Stderr) {
			text = "OpenAI refused the tunnel key: paste it again in step 2."
		}
		fail(text, &Result{Command: "doctor", CommandResult: doc})
		return
	}
	pr.Lines = append(pr.Lines, ProgressLine{Label: "Check the connection", OK: true})
	if err := h.Tunnel.UpdateConfig(func(t *config.Tunnel) error {
		t.Autostart = true
		return nil
	}); err != nil {
		h.Kit.Log.Error("panel: connect: turn tunnel.autostart on", "err", err)
	}
	if h.Tunnel.Running() {
		h.Tunnel.Restart()
	} else if err := h.Start(); err != nil {
		pr.Lines = append(pr.Lines, ProgressLine{Label: "Start the connection"})
		h.Kit.Log.Error("panel: connect: start the tunnel", "err", err)
		fail("Hearth could not start the connection: "+Sentence(h.Tunnel.Status())+".", nil)
		return
	}
	pr.Lines = append(pr.Lines, ProgressLine{Label: "Start the connection", OK: true})
	h.outcomes.put(sess, outcome{result: &Result{Command: "doctor", CommandResult: doc}, progress: &pr})
	// No confirmation: nothing is done until OpenAI accepts the key, which
	// the card says by itself (a refused key shows as refused, never after
	// a "Started").
	http.Redirect(w, r, back, http.StatusSeeOther)
}

// openFolder opens the program folder (where the connection program
// belongs) in the file manager, on Windows; elsewhere it says the path.
func (h *Handler) openFolder(w http.ResponseWriter, r *http.Request) {
	dir := h.Tunnel.ProgramFolder()
	if err := openFolder(dir); err != nil {
		h.Kit.Log.Warn("panel: open the program folder", "dir", dir, "err", err)
		h.backTo(w, r, StepProgram, "Hearth cannot open the folder here; open it yourself: "+dir, true)
		return
	}
	h.backTo(w, r, StepProgram, "The folder is open. Put the connection program there, then press Check again.", false)
}

// programLive is the program step's watch while it waits for the
// connection program: it looks at the files (tunnel.FilesStamp, no hash)
// and has the page reload (HX-Refresh) when one appeared, went or changed
// since the page was drawn (seen), so that the page shows what is there
// now and the one next step; otherwise nothing (204).
func (h *Handler) programLive(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("seen") == h.Tunnel.FilesStamp() {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.Header().Set("HX-Refresh", "true")
	w.WriteHeader(http.StatusOK)
}

// checkAgain is the program step's "Check again": the page as it is now
// (a pinned file back as it was lifts client_changed, the one state
// change of this step), or, when Hearth still sees no connection program to run or trust, a
// sentence saying where it looked.
func (h *Handler) checkAgain(w http.ResponseWriter, r *http.Request) {
	v := h.load(true)
	if v.Client.Back {
		// The pinned file is back with its pinned SHA-256: nothing is
		// wrong with it any more (Check hashes it once more).
		h.Tunnel.Check(tunnel.ReasonClientBack)
		h.Kit.Log.Info("panel: the pinned tunnel-client is back, unchanged", "path", v.Client.Pinned.Path)
		http.Redirect(w, r, back, http.StatusSeeOther)
		return
	}
	if _, found := v.firstCandidate(); found || v.ProgramOK() {
		http.Redirect(w, r, back, http.StatusSeeOther)
		return
	}
	h.backTo(w, r, StepProgram, "Hearth does not see "+tunnel.ClientName()+" in "+v.ProgramDir+" yet. Put the file from the ZIP there; this page sees it by itself.", true)
}

// progressLive is the live line of the Connect and first-call steps: a
// page shown in another phase is reloaded (HX-Refresh), so that its steps
// follow.
func (h *Handler) progressLive(w http.ResponseWriter, r *http.Request) {
	v := h.load(false)
	if Phase(r.URL.Query().Get("phase")) != v.Phase() {
		w.Header().Set("HX-Refresh", "true")
	}
	h.Kit.Render(w, r, http.StatusOK, Progress(v))
}

// firstCandidate is the file the program step offers to trust: the
// first one found that can be read.
func (v View) firstCandidate() (tunnel.Candidate, bool) {
	for _, c := range v.Client.Candidates {
		if c.Err == nil && c.SHA256 != "" && !v.Client.IsPin(c) {
			return c, true
		}
	}
	return tunnel.Candidate{}, false
}

// heldCandidate is the tunnel-client beside this hearth-tray that Hearth
// did not switch to by itself at start (tunnel.Supervisor.HeldBeside),
// hashed, for the program step to offer.
func (v View) heldCandidate() (tunnel.Candidate, bool) {
	if v.HeldBeside == "" {
		return tunnel.Candidate{}, false
	}
	for _, c := range v.Client.Candidates {
		if c.Path == v.HeldBeside && c.Err == nil && c.SHA256 != "" && !v.Client.IsPin(c) {
			return c, true
		}
	}
	return tunnel.Candidate{}, false
}

func dirOf(path string) string { return filepath.Dir(path) }

func keyInputID(secondary bool) string {
	if secondary {
		return "tunnel-key-replace"
	}
	return "tunnel-key"
}

// Badge is the named step's badge: one step is "now" at a time. While
// ChatGPT is being set up (step 5) the wait for its first call (step 6)
// goes with it, and says it comes next.
func (v View) Badge(name string) string {
	switch v.Step(name) {
	case Done:
		return "✓ done"
	case Current:
		if name == StepFirstCall && v.Step(StepChatGPT) == Current {
			return "next"
		}
		return "now"
	}
	return "waiting"
}

// capitalize upper-cases the first letter of a sentence.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}
