// Package risk is the one table that decides, for every primitive and
// every policy mode, what runs, what asks the operator first and what is
// refused (docs/DESIGN.md, "Governance"). Governance admits calls by it; the panel's
// description of the modes, the tool descriptions, machine.host_info and
// the README's Governance section are made from it, and tests hold them
// and governance's behaviour to it.
//
// A primitive's row names its Kind: what its calls are in plain words.
// Most kinds are one Case; a kind whose calls differ by what they touch
// (a file write that makes a program start by itself, a UI action in a
// console) picks its Case from the call's primitive.Target. Where the
// table is silent (a primitive without a row), the call asks.
package risk

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// The policy modes (config policy.mode).
const (
	ModeAsk      = "ask"
	ModeTrusted  = "trusted"
	ModeReadOnly = "read-only"
)

// Modes are the policy modes in the order the panel offers them.
var Modes = []string{ModeAsk, ModeTrusted, ModeReadOnly}

// ModeLabel is a mode's name for a person, as the panel and the tray
// show it.
func ModeLabel(mode string) string {
	switch mode {
	case ModeAsk:
		return "Ask me"
	case ModeTrusted:
		return "Trusted"
	case ModeReadOnly:
		return "Read only"
	}
	return mode
}

// Verdict is what a mode does with a call.
type Verdict string

// The verdicts.
const (
	Runs    Verdict = "runs"
	Asks    Verdict = "asks"
	Refused Verdict = "refused"
)

// CaseID names one row of the table of cases.
type CaseID string

// The cases: every call is exactly one of them.
const (
	CaseRead      CaseID = "read"
	CaseControl   CaseID = "control"
	CaseRecords   CaseID = "records"
	CaseWrite     CaseID = "write"
	CaseWriteOK   CaseID = "write_allowed"
	CaseUnusual   CaseID = "write_unusual"
	CasePersist   CaseID = "persist"
	CaseExec      CaseID = "exec"
	CaseAllowed   CaseID = "exec_allowed"
	CaseUIApp     CaseID = "ui_app"
	CaseUIGranted CaseID = "ui_granted"
	CaseUIConsole CaseID = "ui_console"
	CaseFallback  CaseID = "ui_fallback"
	CaseKill      CaseID = "kill"
	CaseSee       CaseID = "see"
	CaseSeeOK     CaseID = "see_granted"
	CaseClipSet   CaseID = "clipboard_set"
	CaseOpen      CaseID = "open"
	CaseOpenOK    CaseID = "open_granted"
	CaseSession   CaseID = "session"
	CaseSeveral   CaseID = "several"
	CaseRecipe    CaseID = "recipe"
	CaseUnlisted  CaseID = "unlisted"
)

// Case is one row of the table: a kind of call in plain words and what
// each mode does with it.
type Case struct {
	ID CaseID
	// Words says what the call does, for a person: it completes "ChatGPT
	// may …" and "Hearth asks you before ChatGPT may …".
	Words string
	// Verdicts by mode.
	Ask, Trusted, ReadOnly Verdict
	// Flagged marks a case that, where it runs, is written in the ledger
	// as such and shown on the Status page (a write that makes a program
	// start by itself, run in trusted mode).
	Flagged bool
}

// Verdict returns what mode does with the case; an unknown mode asks.
func (c Case) Verdict(mode string) Verdict {
	switch mode {
	case ModeTrusted:
		return c.Trusted
	case ModeReadOnly:
		return c.ReadOnly
	case ModeAsk:
		return c.Ask
	}
	return Asks
}

// Cases is the table of cases, in the order the panel lists them.
var Cases = []Case{
	{ID: CaseRead, Words: "look at files, windows, processes and Hearth's own records",
		Ask: Runs, Trusted: Runs, ReadOnly: Runs},
	{ID: CaseControl, Words: "press the emergency stop, or close a call whose outcome it checked",
		Ask: Runs, Trusted: Runs, ReadOnly: Runs},
	{ID: CaseSeveral, Words: "send several calls at once (each is decided on its own)",
		Ask: Runs, Trusted: Runs, ReadOnly: Runs},
	{ID: CaseRecords, Words: "keep Hearth's own records (recipes, run notes) and cancel its own tasks",
		Ask: Runs, Trusted: Runs, ReadOnly: Refused},
	{ID: CaseRecipe, Words: "run a saved recipe (each step is decided on its own)",
		Ask: Runs, Trusted: Runs, ReadOnly: Refused},
	{ID: CaseWrite, Words: "write or change a document in your folders (text, PDF, Office files without macros, pictures, audio, video, tables, archives; not hidden, not in the computer's program and settings folders)",
		Ask: Runs, Trusted: Runs, ReadOnly: Refused},
	{ID: CaseWriteOK, Words: "write code, settings and other files in a workspace (a folder where you let ChatGPT change code and settings)",
		Ask: Runs, Trusted: Runs, ReadOnly: Refused},
	{ID: CaseUnusual, Words: "write any other file: code, settings, a file of a kind Hearth does not know, a hidden file, a program, a file that runs a program when opened, or a file in the computer's program and settings folders",
		Ask: Asks, Trusted: Runs, ReadOnly: Refused, Flagged: true},
	{ID: CasePersist, Words: "write a file that makes a program start by itself (when you sign in, when a terminal or command window opens, git hooks, services, scheduled tasks, SSH keys and settings, shortcuts)",
		Ask: Asks, Trusted: Runs, ReadOnly: Refused, Flagged: true},
	{ID: CaseAllowed, Words: "run a program you always allowed in that folder",
		Ask: Runs, Trusted: Runs, ReadOnly: Refused},
	{ID: CaseExec, Words: "run any other program",
		Ask: Asks, Trusted: Runs, ReadOnly: Refused},
	{ID: CaseSession, Words: "type into, read or close a program it started with your approval (a shell, a REPL)",
		Ask: Runs, Trusted: Runs, ReadOnly: Refused},
	{ID: CaseUIGranted, Words: "use an app you allowed in that chat",
		Ask: Runs, Trusted: Runs, ReadOnly: Refused},
	{ID: CaseUIApp, Words: "use an app's window (press its buttons, fill in its fields): you answer once per app and chat",
		Ask: Asks, Trusted: Runs, ReadOnly: Refused},
	{ID: CaseUIConsole, Words: "type into a console, the Run dialog or Explorer (that runs programs): you answer every time",
		Ask: Asks, Trusted: Runs, ReadOnly: Refused},
	{ID: CaseSeeOK, Words: "see your screen or read your clipboard, once you allowed it in that chat",
		Ask: Runs, Trusted: Runs, ReadOnly: Refused},
	{ID: CaseSee, Words: "see your screen or read your clipboard (it may hold a password): you answer once per chat",
		Ask: Asks, Trusted: Runs, ReadOnly: Refused},
	{ID: CaseClipSet, Words: "put text on your clipboard",
		Ask: Runs, Trusted: Runs, ReadOnly: Refused},
	{ID: CaseOpenOK, Words: "open your files, folders and web addresses in their apps, once you allowed it in that chat",
		Ask: Runs, Trusted: Runs, ReadOnly: Refused},
	{ID: CaseOpen, Words: "open your files, folders and web addresses in their apps: you answer once per chat",
		Ask: Asks, Trusted: Runs, ReadOnly: Refused},
	{ID: CaseFallback, Words: "click or press keys at a place on the screen, without knowing what is there",
		Ask: Asks, Trusted: Asks, ReadOnly: Refused},
	{ID: CaseKill, Words: "stop a process",
		Ask: Asks, Trusted: Asks, ReadOnly: Refused},
	{ID: CaseUnlisted, Words: "do anything not listed here",
		Ask: Asks, Trusted: Asks, ReadOnly: Refused},
}

// CaseOf returns the case with id; the unlisted case for an unknown id.
func CaseOf(id CaseID) Case {
	for _, c := range Cases {
		if c.ID == id {
			return c
		}
	}
	return CaseOf(CaseUnlisted)
}

// Kind is what a primitive's calls are: one case, or a choice between
// cases made from what the call touches.
type Kind string

// The kinds.
const (
	// KindRead: the call only reads.
	KindRead Kind = "read"
	// KindControl: the e-stop and reconciling an UNKNOWN.
	KindControl Kind = "control"
	// KindSeveral: submits calls each decided by its own row.
	KindSeveral Kind = "several"
	// KindRecords: changes only Hearth's own records.
	KindRecords Kind = "records"
	// KindRecipe: runs a stored recipe's steps, each decided by its own row.
	KindRecipe Kind = "recipe"
	// KindFileWrite: changes files; CasePersist when one of them is a
	// persistence location (Places), else CaseWrite when every one is an
	// ordinary file (Writes), else CaseWriteOK when an operator's folder
	// rule covers the others, else CaseUnusual.
	KindFileWrite Kind = "file_write"
	// KindExec: starts programs; CaseAllowed when an operator rule allows
	// every one of them, else CaseExec.
	KindExec Kind = "exec"
	// KindSessionStart: starts a program to type into
	// (machine.session_start); always CaseExec, as no operator rule
	// covers it: what is typed into the program needs no permit, and an
	// interactive program reaches others (a pager's or an editor's "!"
	// runs a shell command), so a rule for "git log" would cover a shell.
	KindSessionStart Kind = "session_start"
	// KindUI: drives an application's window; CaseFallback for fallback
	// input, CaseUIConsole for a console, Run dialog or Explorer, else
	// CaseUIGranted or CaseUIApp by the operator's grant for the app in
	// the conversation.
	KindUI Kind = "ui"
	// KindKill: stops a process.
	KindKill Kind = "kill"
	// KindSee: sees what the operator may not mean the model to see (the
	// screen, the clipboard); CaseSeeOK once the operator allowed that
	// primitive in the conversation, else CaseSee (always for a call
	// without a conversation, which has nowhere to keep the approval).
	KindSee Kind = "see"
	// KindSession: acts only inside an interactive program an earlier
	// machine.session_start started under its own admission (keys typed
	// into it): the start asked where the mode asks, so this does not.
	KindSession Kind = "session"
	// KindClipboardSet: puts text on the clipboard.
	KindClipboardSet Kind = "clipboard_set"
	// KindOpen: opens something with the app that shows it (ui.open).
	// A document, folder or web address is CaseOpenOK once the operator
	// allowed opening in the conversation, else CaseOpen; an app is a UI
	// case as for KindUI (once per app per conversation, every time for a
	// console); a program or script, by its extension or content, is an
	// exec.
	KindOpen Kind = "open"
)

// casesOf lists the cases a kind's calls can be.
var casesOf = map[Kind][]CaseID{
	KindRead:         {CaseRead},
	KindControl:      {CaseControl},
	KindSeveral:      {CaseSeveral},
	KindRecords:      {CaseRecords},
	KindRecipe:       {CaseRecipe},
	KindFileWrite:    {CaseWrite, CaseWriteOK, CaseUnusual, CasePersist},
	KindExec:         {CaseAllowed, CaseExec},
	KindSessionStart: {CaseExec},
	KindUI:           {CaseUIGranted, CaseUIApp, CaseUIConsole, CaseFallback},
	KindKill:         {CaseKill},
	KindSee:          {CaseSeeOK, CaseSee},
	KindClipboardSet: {CaseClipSet},
	KindOpen:         {CaseOpenOK, CaseOpen, CaseUIGranted, CaseUIApp, CaseUIConsole, CaseExec},
	KindSession:      {CaseSession},
}

// Table is a set of rows: a primitive's name and its kind.
type Table map[string]Kind

// KindOf returns the row of primitive name and whether t has one.
func (t Table) KindOf(name string) (Kind, bool) {
	k, ok := t[name]
	return k, ok
}

// With returns t with more rows (t's own win): the rows of primitives
// that exist only in a test of the engines.
func (t Table) With(more Table) Table {
	out := Table{}
	for n, k := range more {
		out[n] = k
	}
	for n, k := range t {
		out[n] = k
	}
	return out
}

// Rows is the table: every registered primitive has a row here (a test
// fails otherwise). A new primitive is one line: its name and its kind.
var Rows = Table{
	"fs.list":   KindRead,
	"fs.read":   KindRead,
	"fs.search": KindRead,
	"fs.stat":   KindRead,
	"fs.write":  KindFileWrite,
	"fs.patch":  KindFileWrite,
	"fs.undo":   KindFileWrite,
	"fs.move":   KindFileWrite,
	"fs.copy":   KindFileWrite,
	"fs.mkdir":  KindFileWrite,
	"fs.trash":  KindFileWrite,

	"fs.xlsx_set":   KindFileWrite,
	"fs.docx_write": KindFileWrite,

	"fs.changes": KindRead,

	"machine.host_info":    KindRead,
	"machine.process_list": KindRead,
	"machine.exec":         KindExec,
	"machine.batch":        KindExec,
	"machine.process_kill": KindKill,
	"machine.estop":        KindControl,

	"machine.session_start": KindSessionStart,
	"machine.session_send":  KindSession,
	"machine.session_read":  KindRead,
	"machine.session_list":  KindRead,
	"machine.session_close": KindControl,

	"ui.snapshot": KindRead,
	"ui.query":    KindRead,
	"ui.action":   KindUI,

	"ui.screenshot":    KindSee,
	"ui.clipboard_get": KindSee,
	"ui.clipboard_set": KindClipboardSet,

	"ui.open":    KindOpen,
	"ui.apps":    KindRead,
	"ui.windows": KindRead,
	"ui.window":  KindUI,

	"task.submit":    KindExec,
	"task.get":       KindRead,
	"task.status":    KindRead,
	"task.wait":      KindRead,
	"task.list":      KindRead,
	"task.cancel":    KindRecords,
	"task.reconcile": KindControl,

	"recipe.create":  KindRecords,
	"recipe.delete":  KindRecords,
	"recipe.list":    KindRead,
	"recipe.get":     KindRead,
	"recipe.stats":   KindRead,
	"recipe.suggest": KindRead,
	"recipe.run":     KindRecipe,

	"run.checkpoint":            KindRecords,
	"run.close":                 KindRecords,
	"run.schedule_continuation": KindRecords,
	"run.list":                  KindRead,
	"run.get":                   KindRead,
	"run.events":                KindRead,
	"run.continuation_status":   KindRead,
	"run.scatter":               KindSeveral,

	"artifact.list":     KindRead,
	"artifact.metadata": KindRead,
	"artifact.read":     KindRead,
	"artifact.range":    KindRead,
	"artifact.search":   KindRead,
}

// KindOf returns the row of primitive name and whether the table has one.
func KindOf(name string) (Kind, bool) { return Rows.KindOf(name) }

// CasesOf lists the cases a primitive's calls can be; the unlisted case
// for a primitive without a row.
func CasesOf(name string) []CaseID {
	k, ok := Rows[name]
	if !ok {
		return []CaseID{CaseUnlisted}
	}
	return casesOf[k]
}

// Always reports the verdict every call of primitive name gets in mode
// whatever it touches, and false when its calls' verdicts differ.
func Always(name, mode string) (Verdict, bool) {
	var v Verdict
	for i, id := range CasesOf(name) {
		cv := CaseOf(id).Verdict(mode)
		if i > 0 && cv != v {
			return "", false
		}
		v = cv
	}
	return v, true
}

// Summary is what a mode does, in plain words, made from the table.
type Summary struct {
	Mode    string   `json:"mode"`
	Runs    []string `json:"runs"`
	Asks    []string `json:"asks_first"`
	Refused []string `json:"refused"`
}

// Describe summarises mode from the table.
func Describe(mode string) Summary {
	s := Summary{Mode: mode, Runs: []string{}, Asks: []string{}, Refused: []string{}}
	for _, c := range Cases {
		switch c.Verdict(mode) {
		case Runs:
			s.Runs = append(s.Runs, c.Words)
		case Asks:
			s.Asks = append(s.Asks, c.Words)
		case Refused:
			s.Refused = append(s.Refused, c.Words)
		}
	}
	return s
}

// Sentence is the mode's summary as one paragraph for a person.
func (s Summary) Sentence() string {
	var parts []string
	if len(s.Runs) > 0 {
		parts = append(parts, "ChatGPT may "+strings.Join(s.Runs, "; ")+".")
	}
	if len(s.Asks) > 0 {
		parts = append(parts, "Hearth asks you before ChatGPT may "+strings.Join(s.Asks, "; ")+".")
	}
	if len(s.Refused) > 0 {
		parts = append(parts, "Refused: "+strings.Join(s.Refused, "; ")+".")
	}
	return strings.Join(parts, " ")
}

// Plain is the mode's summary for the panel, in plain words: what asks
// first and what is refused, the rest running without asking.
func (s Summary) Plain() string {
	var parts []string
	if len(s.Asks) > 0 {
		parts = append(parts, "Hearth asks you before ChatGPT may "+strings.Join(s.Asks, "; ")+".")
	}
	switch {
	case len(s.Refused) > 0 && len(s.Runs) < len(s.Refused):
		parts = append(parts, "ChatGPT may only "+strings.Join(s.Runs, "; ")+": everything else is refused.")
	case len(s.Refused) > 0:
		parts = append(parts, "Refused: "+strings.Join(s.Refused, "; ")+". Everything else runs without asking.")
	default:
		parts = append(parts, "Everything else runs without asking.")
	}
	return strings.Join(parts, " ")
}

// joinOps joins primitive names with "/", a tool named once for its
// operations in a row (fs.write/patch/move), so the sentence stays short
// in the tools' descriptions.
func joinOps(names []string) string {
	var b strings.Builder
	prev := ""
	for i, n := range names {
		tool, op, ok := strings.Cut(n, ".")
		if i > 0 {
			b.WriteString("/")
		}
		if ok && tool == prev {
			b.WriteString(op)
		} else {
			b.WriteString(n)
		}
		prev = tool
	}
	return b.String()
}

// ModelLine is the short sentence for a model (the tools' descriptions):
// which of the primitives names may answer pending until the operator
// approves, and which are refused, in mode.
func ModelLine(mode string, names []string) string {
	var groups []string
	byNote := map[string][]string{}
	var refused, notAlways, alwaysOther []string
	for _, n := range names {
		if v, ok := Always(n, mode); !ok || v != Runs {
			notAlways = append(notAlways, n)
		} else if k, _ := KindOf(n); k != KindRead {
			alwaysOther = append(alwaysOther, n)
		}
		var ask, ref bool
		for _, id := range CasesOf(n) {
			switch CaseOf(id).Verdict(mode) {
			case Asks:
				ask = true
			case Refused:
				ref = true
			}
		}
		if ask {
			note := askNote(n, mode)
			if _, seen := byNote[note]; !seen {
				groups = append(groups, note)
			}
			byNote[note] = append(byNote[note], n)
		}
		if ref {
			refused = append(refused, n)
		}
	}
	var b strings.Builder
	if len(groups) == 0 {
		b.WriteString("Nothing here waits for the operator")
	} else {
		b.WriteString("Pending until the operator approves: ")
		for i, note := range groups {
			if i > 0 {
				b.WriteString("; ")
			}
			b.WriteString(joinOps(byNote[note]))
			if note != "" {
				b.WriteString(" " + note)
			}
		}
	}
	switch {
	case len(refused) == 0:
	case len(refused) == len(notAlways):
		b.WriteString("; refused: every operation but reads")
		if len(alwaysOther) > 0 {
			b.WriteString(" and " + strings.Join(alwaysOther, ", "))
		}
	default:
		b.WriteString("; refused: " + strings.Join(refused, ", "))
	}
	var relayed []string
	for _, n := range names {
		if k, _ := KindOf(n); k == KindSeveral || k == KindRecipe {
			relayed = append(relayed, n)
		}
	}
	if len(relayed) > 0 {
		b.WriteString("; each call " + strings.Join(relayed, "/") + " makes is decided as the operation it names")
	}
	b.WriteString(".")
	return b.String()
}

// askNote says when a primitive whose calls do not always ask does ("" when
// they always do).
func askNote(name, mode string) string {
	if v, ok := Always(name, mode); ok && v == Asks {
		return ""
	}
	var when []string
	for _, id := range CasesOf(name) {
		if CaseOf(id).Verdict(mode) == Asks {
			when = append(when, modelWords[id])
		}
	}
	return "(" + strings.Join(when, "; ") + ")"
}

// modelWords says each case that may ask to a model, tersely.
var modelWords = map[CaseID]string{
	CaseUnusual:   "for hidden files, programs and system folders",
	CasePersist:   "for files that start programs by themselves: autostart, shell start-up, .git, services, SSH",
	CaseSee:       "once per conversation",
	CaseOpen:      "once per conversation for files, folders and links",
	CaseExec:      "unless an operator rule allows the program",
	CaseUIApp:     "once per app per conversation",
	CaseUIConsole: "every time in a console, the Run dialog or Explorer",
	CaseFallback:  "every time for fallback click/key",
}

// CasesMarkdown is the table of cases, in plain words, as the README's
// safety section shows it.
func CasesMarkdown() string {
	var b strings.Builder
	b.WriteString("| ChatGPT may … | ask | trusted | read-only |\n|---|---|---|---|\n")
	for _, c := range Cases {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", c.Words, c.Ask, c.Trusted, c.ReadOnly)
	}
	return b.String()
}

// Markdown is the table of cases and the cases of every primitive, as
// docs/SECURITY.md's Governance section shows them.
func Markdown() string {
	var b strings.Builder
	b.WriteString(CasesMarkdown())
	b.WriteString("\n| primitive | cases |\n|---|---|\n")
	names := make([]string, 0, len(Rows))
	for n := range Rows {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		ids := CasesOf(n)
		words := make([]string, len(ids))
		for i, id := range ids {
			words[i] = string(id)
		}
		fmt.Fprintf(&b, "| `%s` | %s |\n", n, strings.Join(words, ", "))
	}
	return b.String()
}

// Check reports a primitive of names without a row, or a row naming no
// registered primitive: the table and the registry must agree.
func Check(names []string) error {
	for _, n := range names {
		if _, ok := Rows[n]; !ok {
			return fmt.Errorf("primitive %s has no row in the risk table (internal/risk.Rows)", n)
		}
	}
	for n := range Rows {
		if !slices.Contains(names, n) {
			return fmt.Errorf("the risk table has a row for %s, which is not registered", n)
		}
	}
	return nil
}

// ConsoleApps are programs where typing runs other programs: consoles and
// terminals, shells and interpreters, ssh, an editor with a terminal
// (VS Code), Explorer (its Run dialog and address bar) and Task Manager
// ("Run new task"). A UI call into one is
// CaseUIConsole: never a way around the exec permit.
var ConsoleApps = []string{"cmd", "conhost", "openconsole", "windowsterminal", "wt", "powershell", "powershell_ise", "pwsh",
	"explorer", "taskmgr", "wsl", "wslhost", "bash", "sh", "mintty", "git-bash", "python", "pythonw", "py", "node",
	"wscript", "cscript", "mshta", "regedit", "mmc", "rundll32", "xterm", "gnome-terminal-server", "konsole",
	"zsh", "fish", "dash", "ksh", "perl", "ruby", "php", "lua", "tclsh", "deno", "bun", "ssh", "code"}

// IsConsoleApp reports whether program (a file name, any case, with or
// without .exe) is one of ConsoleApps.
func IsConsoleApp(program string) bool {
	base := strings.TrimSuffix(strings.ToLower(program), ".exe")
	return slices.Contains(ConsoleApps, base)
}
