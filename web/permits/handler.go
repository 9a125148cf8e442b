// Package permits is the control panel's Permits page: the calls waiting
// for the operator, each in one sentence ("ChatGPT wants to run `ls -la`
// in `C:\…`") with Allow once, Always allow `ls` here and Deny, the time
// left and which chat asked; the exact input, its digest and a custom
// rule are behind "Details". The list updates live (htmx polls
// /permits/live, which answers 204 while the set of waiting calls is the
// same, so nothing typed is lost) and decisions swap the list in place.
// Approve once, approve and always allow, deny and remove a rule are
// plain form POSTs, so they work without JavaScript.
package permits

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/hearth-dev/hearth/internal/control"
	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/risk"
	"github.com/hearth-dev/hearth/web/ledger"
	"github.com/hearth-dev/hearth/web/session"
	"github.com/hearth-dev/hearth/web/ui"
)

// Handler serves the Permits page and its actions.
type Handler struct {
	Kit      *ui.Kit
	Gov      *govern.Governor
	Operator *control.Operator
	// Chats labels the conversation of each call.
	Chats ui.Chats
}

// Mount adds the page's routes.
func (h *Handler) Mount(r chi.Router) {
	r.Get("/permits", h.page)
	r.Get("/permits/live", h.live)
	r.Post("/permits/{id}/approve", h.approve)
	r.Post("/permits/{id}/deny", h.deny)
	r.Post("/permits/{id}/ask-again", h.askAgain)
	r.Post("/permits/rules/{id}/remove", h.removeRule)
}

// Item is a pending permit as the page shows it.
type Item struct {
	govern.Permit
	// Pretty is the exact input, indented.
	Pretty string
	// RuleProgram, RuleArgs and RuleCwd prefill the "always allow"
	// fields: the program, the arguments the card shows and its folder.
	RuleProgram, RuleCwd string
	RuleArgs             []string
	// Interpreter is set when RuleProgram is a general interpreter.
	Interpreter bool
	// AsksEveryTime says why no rule may cover RuleProgram ("runs any
	// code it is given"); the card then offers no "Always allow".
	AsksEveryTime string
	// RunsOthers is set when RuleProgram can run other programs or
	// change what it runs (risk.ArgTable): the card says what the rule
	// covers and what still asks.
	RunsOthers bool
	// ExactWhy says why a rule for RuleProgram covers only the exact call
	// ("writes where its arguments say"; risk.ExactOnly), or "".
	ExactWhy string
	// Session is set for a session's start (machine.session_start): no
	// rule covers one, so the card offers no "Always allow".
	Session bool
	// What is the call in words ("run", "ls -la"; Where: its folder).
	Verb, What, Where string
	// Chat labels the conversation that asked.
	Chat string
	// Note says what allowing means when that is more than one call.
	Note string
	// Folder is the folder the card offers "always allow hidden files
	// and programs" for; "" for none.
	Folder string
	// Interrupted, when set, is the open UNKNOWN of this call's chat that
	// would refuse it if it were allowed now: the card then offers no
	// Allow and says why (a card never promises what the gate refuses).
	Interrupted *govern.Unknown
	// InterruptedWhat says the interrupted action in words.
	InterruptedWhat string
	// Change is what a write that makes a program start by itself
	// changes: what it adds that would run, the diff, whether the whole
	// file is new (persistChange).
	Change
	// Pins are the files Always allow would pin (the program's and those
	// the arguments name): a change to one asks again.
	Pins []string
	// TrustsFolder is set for a build program's rule, which pins nothing
	// and trusts its folder (risk.BuildPrograms).
	TrustsFolder bool
	// Changed is the file a rule pinned that changed since, which is why
	// this call asks again; "" otherwise.
	Changed string
	// Batch is a file operation's card (fs.move, copy, trash, mkdir):
	// its sentence, why it asks and every item; nil for other calls.
	Batch *Batch
	// NoFolder: the call names no working folder, so it would run in
	// Hearth's own (RuleCwd, resolved by governance's program
	// extraction); the card says so, and Always allow covers only it.
	NoFolder bool
}

// View is what the page shows.
type View struct {
	Pending []Item
	// Denied are the calls the operator denied that are still answered
	// "denied" at once when asked again (govern.DenialHold), each with
	// Ask again.
	Denied []Item
	// EStop is set while the emergency stop is on: nothing can be
	// allowed until it is reset, and the cards say so.
	EStop bool
	Rules []govern.Rule
	// Flash is the page's one-shot message, shown in the live list.
	Flash *session.Flash
}

// IDs is what the live list shows — the waiting permits, the denials
// still held and whether the e-stop is on — for its poll.
func (v View) IDs() string {
	ids := make([]string, 0, len(v.Pending)+len(v.Denied)+1)
	for _, it := range v.Pending {
		ids = append(ids, it.ID)
	}
	for _, it := range v.Denied {
		ids = append(ids, "d"+it.ID)
	}
	if v.EStop {
		ids = append(ids, "estop")
	}
	return strings.Join(ids, ",")
}

// DeniedUntil is until when a denial answers its call again.
func (it Item) DeniedUntil() time.Time { return it.DecidedAt.Add(govern.DenialHold) }

// NewItem prepares a permit for display.
func NewItem(p govern.Permit) Item {
	it := Item{Permit: p, Pretty: p.Input}
	var buf bytes.Buffer
	if json.Indent(&buf, []byte(p.Input), "", "  ") == nil {
		it.Pretty = buf.String()
	}
	if len(p.Programs) > 0 {
		it.RuleProgram, it.RuleCwd, it.RuleArgs = p.Programs[0].Command, p.Programs[0].Cwd, p.Programs[0].Args
		var in struct {
			Cwd *string `json:"cwd"`
		}
		direct := p.Primitive == "machine.exec" || p.Primitive == "machine.session_start"
		if direct && json.Unmarshal([]byte(p.Input), &in) == nil && (in.Cwd == nil || *in.Cwd == "") && it.RuleCwd != "" {
			it.NoFolder = true
		}
	}
	it.Session = p.Primitive == "machine.session_start"
	if it.RuleProgram != "" {
		it.Interpreter = govern.IsInterpreter(it.RuleProgram)
		it.AsksEveryTime = risk.AsksEveryTimeWhy(it.RuleProgram)
		it.RunsOthers = risk.RunsOthers(it.RuleProgram)
		it.ExactWhy = risk.ExactOnlyWhy(it.RuleProgram)
		it.TrustsFolder = risk.TrustsFolder(it.RuleProgram)
	}
	if p.Said == govern.SaidPinChanged {
		it.Changed = p.Subject
	}
	// The card of a file operation is read once per render: it asks
	// the disk about each of up to 1,000 items.
	b, ok := BatchOf(p)
	if ok {
		it.Batch = &b
	}
	it.Verb, it.What, it.Where = describe(p, it.Batch)
	it.Note = askOnceNotes[p.Primitive]
	if !ok && p.Case == string(risk.CasePersist) && p.Subject != "" {
		it.Change = persistChange(p)
	}
	if p.Case == string(risk.CaseOpen) {
		it.Note = "Allowing it lets this chat open your files, folders and web addresses again without asking. Programs and scripts still ask each time."
	}
	return it
}

// interruptedWhy says why a call of a chat whose action u was
// interrupted cannot run, and what the person does about it.
func interruptedWhy(u *govern.Unknown) string {
	return fmt.Sprintf("this chat's earlier action (%s) was interrupted when Hearth stopped, so Hearth does nothing more that changes things for this chat until you check what that action did and tell Hearth, on the Safety page.",
		ledger.Describe(u.Primitive, u.Input))
}

// Describe says what a call waiting for a permit would do: a verb and
// its object ("run", "ls -la"), and where when that is known.
func Describe(p govern.Permit) (verb, what, where string) {
	if b, ok := BatchOf(p); ok {
		return describe(p, &b)
	}
	return describe(p, nil)
}

// describe is Describe of p whose file operation's card is b (nil when
// it is not a file operation's).
func describe(p govern.Permit, b *Batch) (verb, what, where string) {
	if b != nil {
		return b.Sentence, "", ""
	}
	var in struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
		Cwd     string   `json:"cwd"`
		Path    string   `json:"path"`
		URL     string   `json:"url"`
	}
	_ = json.Unmarshal([]byte(p.Input), &in)
	switch {
	case (p.Case == string(risk.CasePersist) || p.Case == string(risk.CaseUnusual)) && p.Subject != "":
		return p.Said + ":", p.Subject, ""
	case p.Case == string(risk.CaseOpen) && in.URL != "":
		return "open the web address", in.URL, ""
	case p.Case == string(risk.CaseOpen) && in.Path != "":
		return "open", in.Path, ""
	case (p.Case == string(risk.CaseUIApp) || p.Case == string(risk.CaseUIConsole)) && p.Subject != "":
		return "use the app", p.Subject, ""
	case len(p.Programs) == 1:
		cmd := p.Programs[0].Command
		if in.Command == cmd {
			cmd = strings.Join(append([]string{cmd}, in.Args...), " ")
		}
		if p.Primitive == "machine.session_start" {
			// Approving it lets ChatGPT type into the program without
			// asking again: the sentence says so.
			return "start and type into", cmd, p.Programs[0].Cwd
		}
		return "run", cmd, p.Programs[0].Cwd
	case len(p.Programs) > 1:
		names := make([]string, len(p.Programs))
		for i, u := range p.Programs {
			names[i] = u.Command
		}
		return "run " + strconv.Itoa(len(names)) + " programs:", strings.Join(names, ", "), p.Programs[0].Cwd
	case in.Path != "":
		return "use the file", in.Path, ""
	case p.Primitive == "ui.screenshot":
		return "see", "your screen", ""
	case p.Primitive == "ui.clipboard_get":
		return "read", "your clipboard", ""
	}
	return "do", PrimitiveWords(p.Primitive), ""
}

// Words is what Describe says, as one phrase ("run ls -la", "move 37
// files from Downloads to Documents\Invoices, including setup.exe").
func Words(p govern.Permit) string {
	verb, what, _ := Describe(p)
	if what == "" {
		return verb
	}
	return verb + " " + what
}

// askOnceNotes are the notes of the calls the operator is asked about once
// per chat (the risk table's kind "see").
var askOnceNotes = map[string]string{
	"ui.screenshot":    "Allowing it lets this chat see your screen again without asking. Hearth's own windows are always blacked out.",
	"ui.clipboard_get": "What you copied may be a password. Allowing it lets this chat read your clipboard again without asking.",
}

// PrimitiveWords says an operation ("fs.write") in words.
func PrimitiveWords(primitive string) string {
	tool, op, _ := strings.Cut(primitive, ".")
	op = strings.ReplaceAll(op, "_", " ")
	switch tool {
	case "machine":
		return op + " on this computer"
	case "fs":
		return op + " files"
	case "task":
		return op + " a job"
	case "ui":
		return op + " in a window"
	case "recipe", "run":
		return op + " a " + tool
	}
	return strings.ReplaceAll(primitive, ".", " ")
}

// load reads the waiting permits and the rules.
func (h *Handler) load(r *http.Request) (View, error) {
	ctx := r.Context()
	pending, err := h.Operator.Permits(ctx, "pending")
	if err != nil {
		return View{}, fmt.Errorf("list pending permits: %w", err)
	}
	rules, err := h.Gov.Rules(ctx)
	if err != nil {
		return View{}, fmt.Errorf("list allow-rules: %w", err)
	}
	denied, err := h.Operator.Denials(ctx)
	if err != nil {
		return View{}, fmt.Errorf("list denials: %w", err)
	}
	st, err := h.Gov.EStop(ctx)
	if err != nil {
		return View{}, fmt.Errorf("read the e-stop: %w", err)
	}
	v := View{Rules: rules, EStop: st.Latched}
	for _, p := range pending {
		it := NewItem(p)
		if it.RuleProgram != "" && it.AsksEveryTime == "" {
			// A renamed copy of a shell is the shell.
			it.AsksEveryTime = h.Gov.AsksEveryTimeWhy(it.RuleProgram, it.RuleCwd)
		}
		if it.RuleProgram != "" && it.AsksEveryTime == "" && !risk.RunsOthers(it.RuleProgram) {
			// taskset -c 0 bash x.sh asks as bash does.
			if arg, why := h.Gov.ArgRunnerWhy(it.RuleArgs, it.RuleCwd); why != "" {
				it.AsksEveryTime = "runs " + arg + ", which " + why
			}
		}
		if it.RuleProgram != "" && it.AsksEveryTime == "" && !it.Session && !it.TrustsFolder {
			it.Pins = h.Gov.PinsFor(it.RuleProgram, it.RuleArgs, it.RuleCwd)
		}
		it.Folder, _ = h.Gov.OfferedWorkspace(p)
		it.Chat = h.Chats.LabelOfFuture(ctx, p.FutureID)
		if it.Interrupted, err = h.Gov.UnknownBlocking(ctx, p.FutureID); err != nil {
			return View{}, fmt.Errorf("read the interrupted actions: %w", err)
		}
		if it.Interrupted != nil {
			it.InterruptedWhat = ledger.Describe(it.Interrupted.Primitive, it.Interrupted.Input)
		}
		v.Pending = append(v.Pending, it)
	}
	for _, p := range denied {
		it := NewItem(p)
		it.Chat = h.Chats.LabelOfFuture(ctx, p.FutureID)
		v.Denied = append(v.Denied, it)
	}
	return v, nil
}

// live answers the waiting list for htmx's poll, or 204 (nothing to swap)
// while it holds the same permits as the page (ids).
func (h *Handler) live(w http.ResponseWriter, r *http.Request) {
	v, err := h.load(r)
	if err != nil {
		h.Kit.Fail(w, r, "permits fragment", err)
		return
	}
	if r.URL.Query().Get("ids") == v.IDs() && r.URL.Query().Has("ids") {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	c := h.Kit.Chrome(r, "Permits", "permits")
	h.Kit.Render(w, r, http.StatusOK, Live(c, v))
}

func (h *Handler) page(w http.ResponseWriter, r *http.Request) {
	v, err := h.load(r)
	if err != nil {
		h.Kit.Fail(w, r, "permits page", err)
		return
	}
	c := h.Kit.Chrome(r, "Permits", "permits")
	c.FlashInPage, v.Flash = true, c.Flash
	h.Kit.Render(w, r, http.StatusOK, Page(c, v))
}

// pending returns the pending permit id, or false after telling the
// operator it is no longer pending (decided, expired or unknown).
func (h *Handler) pending(w http.ResponseWriter, r *http.Request, id string) (govern.Permit, bool) {
	all, err := h.Operator.Permits(r.Context(), "pending")
	if err != nil {
		h.Kit.Fail(w, r, "list pending permits", err)
		return govern.Permit{}, false
	}
	i := slices.IndexFunc(all, func(p govern.Permit) bool { return p.ID == id })
	if i < 0 {
		h.Kit.Refuse(w, r, "/permits", "That request is no longer waiting: it was already decided, or its time ran out.")
		return govern.Permit{}, false
	}
	return all[i], true
}

func (h *Handler) approve(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	operator, ok := h.Kit.OperatorName(w, r, "/permits")
	if !ok {
		return
	}
	p, ok := h.pending(w, r, id)
	if !ok {
		return
	}
	// The chat's gate is closed by an interrupted action: allowing the
	// call now would not run it (it would end refused), so nothing is
	// allowed, no rule or folder is added, and the page says what to do
	// first.
	if u, err := h.Gov.UnknownBlocking(r.Context(), p.FutureID); err != nil {
		h.Kit.Fail(w, r, "read the interrupted actions", err)
		return
	} else if u != nil {
		h.Kit.Refuse(w, r, "/permits", "Nothing was allowed: "+interruptedWhy(u)+" The request is still waiting: do that first, then allow it here (or deny it).")
		return
	}
	var rule *govern.Rule
	switch r.PostFormValue("scope") {
	case "once", "":
	case "always":
		if p.Primitive == "machine.session_start" {
			h.Kit.Refuse(w, r, "/permits", "Hearth asks every time a session starts, so there is no Always allow for it. Allow it once instead.")
			return
		}
		program := strings.TrimSpace(r.PostFormValue("program"))
		cwd := strings.TrimSpace(r.PostFormValue("cwd_root"))
		if _, named := r.PostForm["cwd_root"]; !named && len(p.Programs) > 0 && p.Programs[0].Command == program {
			// A form that names no folder gets the folder the card
			// showed, never "anywhere" (that takes an empty field in
			// the custom rule under Details).
			cwd = p.Programs[0].Cwd
		}
		if program == "" {
			h.Kit.Refuse(w, r, "/permits", "To always allow a program, enter the program (a name such as git, an absolute path or a glob).")
			return
		}
		if cwd != "" && !filepath.IsAbs(cwd) {
			h.Kit.Refuse(w, r, "/permits", fmt.Sprintf("The working-directory root %q is not an absolute path; leave it empty to allow the program anywhere.", cwd))
			return
		}
		if why := h.Gov.RuleRefusal(program); why != "" {
			h.Kit.Refuse(w, r, "/permits", "No rule can always allow "+program+": it "+strings.TrimPrefix(why, filepath.Base(program)+" ")+". Allow it once instead.")
			return
		}
		rule = &govern.Rule{Program: program, CwdRoot: cwd, Args: ruleArgs(r, p, program)}
	case "folder":
		h.approveWorkspace(w, r, operator, p)
		return
	default:
		h.Kit.Refuse(w, r, "/permits", "Choose Allow once, Always allow or Deny.")
		return
	}
	if err := h.Operator.Approve(r.Context(), p.ID, operator, rule); err != nil {
		if errors.Is(err, govern.ErrExpired) {
			h.Kit.Refuse(w, r, "/permits", "Its time ran out before you allowed it; ChatGPT is told it was not allowed.")
			return
		}
		if errors.Is(err, govern.ErrEStopLatched) {
			nothing := "Nothing was allowed"
			if rule != nil {
				nothing += " and no rule was added"
			}
			h.Kit.Refuse(w, r, "/permits", nothing+": the emergency stop is on, and nothing runs until it is reset. "+
				"The request is still waiting: reset the stop on the Safety page, then allow it here (or deny it).")
			return
		}
		h.Kit.Fail(w, r, "approve permit "+p.ID, err)
		return
	}
	msg := fmt.Sprintf("You allowed it once: Hearth will %s, and ChatGPT gets the result in its chat.", Words(p))
	if rule != nil {
		msg += fmt.Sprintf(" From now on %s", CommandLine(rule.Program, rule.Args))
		if rule.CwdRoot != "" {
			msg += " in " + rule.CwdRoot
		}
		msg += " runs without asking (remove that under Always allowed below)."
		if risk.RunsOthers(rule.Program) {
			msg += " It can run other programs. " + runsOthersStillAsks
		}
	}
	h.Kit.Done(w, r, "/permits", operator, msg)
}

func (h *Handler) deny(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	operator, ok := h.Kit.OperatorName(w, r, "/permits")
	if !ok {
		return
	}
	p, ok := h.pending(w, r, id)
	if !ok {
		return
	}
	if err := h.Operator.Deny(r.Context(), p.ID, operator); err != nil {
		h.Kit.Fail(w, r, "deny permit "+p.ID, err)
		return
	}
	h.Kit.Done(w, r, "/permits", operator, fmt.Sprintf("You denied it: Hearth will not %s, and ChatGPT is told so. "+
		"If this chat asks for exactly the same in the next %d minutes, Hearth says no without asking you (Ask again, below, ends that).",
		Words(p), int(govern.DenialHold.Minutes())))
}

// askAgain ends a denial's hold: the next identical call asks again.
func (h *Handler) askAgain(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	operator, ok := h.Kit.OperatorName(w, r, "/permits")
	if !ok {
		return
	}
	denied, err := h.Operator.Denials(r.Context())
	if err != nil {
		h.Kit.Fail(w, r, "list denials", err)
		return
	}
	i := slices.IndexFunc(denied, func(p govern.Permit) bool { return p.ID == id })
	if i < 0 {
		h.Kit.Refuse(w, r, "/permits", "Hearth already asks you again about that request.")
		return
	}
	if err := h.Operator.AskAgain(r.Context(), id, operator); err != nil {
		if errors.Is(err, govern.ErrNotDenied) {
			h.Kit.Refuse(w, r, "/permits", "Hearth already asks you again about that request.")
			return
		}
		h.Kit.Fail(w, r, "ask again about permit "+id, err)
		return
	}
	h.Kit.Done(w, r, "/permits", operator, fmt.Sprintf("Hearth will ask you again the next time ChatGPT wants to %s.", Words(denied[i])))
}

func (h *Handler) removeRule(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	operator, ok := h.Kit.OperatorName(w, r, "/permits")
	if !ok {
		return
	}
	rules, err := h.Gov.Rules(r.Context())
	if err != nil {
		h.Kit.Fail(w, r, "list allow-rules", err)
		return
	}
	i := slices.IndexFunc(rules, func(x govern.Rule) bool { return x.ID == id })
	if i < 0 {
		h.Kit.Refuse(w, r, "/permits", fmt.Sprintf("There is no allow-rule %s (already removed?).", id))
		return
	}
	if err := h.Operator.RemoveRule(r.Context(), operator, id); err != nil {
		h.Kit.Fail(w, r, "remove allow-rule "+id, err)
		return
	}
	h.Kit.Done(w, r, "/permits", operator, fmt.Sprintf("%s now asks you again before it runs.", CommandLine(rules[i].Program, rules[i].Args)))
}

// ruleArgs are the arguments an "always allow" rule covers: the ones
// the custom form names (field args, one a line), else the card's
// (repeated field arg), else, for the card's program, what the card
// showed: never more than the operator saw.
func ruleArgs(r *http.Request, p govern.Permit, program string) []string {
	if lines, ok := r.PostForm["args"]; ok && len(lines) > 0 {
		text := strings.TrimRight(strings.ReplaceAll(lines[0], "\r\n", "\n"), "\n")
		if strings.TrimSpace(text) == "" {
			return nil
		}
		return strings.Split(text, "\n")
	}
	if args, ok := r.PostForm["arg"]; ok {
		return args
	}
	if len(p.Programs) > 0 && p.Programs[0].Command == program {
		return p.Programs[0].Args
	}
	return nil
}

// CommandLine is a rule's program and arguments as the page shows them
// ("git status").
func CommandLine(program string, args []string) string {
	return strings.Join(append([]string{program}, args...), " ")
}
