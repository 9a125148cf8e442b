package ledger

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/hearth-dev/hearth/internal/callpath"
	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/govern"
	hledger "github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/internal/risk"
	"github.com/hearth-dev/hearth/web/ui"
)

// decisions are the kinds of entries a person made (the operator, or
// setup); the rest is what ChatGPT's calls did.
var decisions = []string{
	"estop", "reset", "queue_resume", "permit_approved", "permit_denied", "permit_ask_again", "rule_added", "rule_removed",
	"reconcile", "policy_change", "tunnel_key_set", "tunnel_key_cleared", "tunnel_client_pinned",
}

// Filter is which entries the page shows and which page.
type Filter struct {
	// Show is "" (everything), "decisions" (yours) or "calls" (what
	// ChatGPT's calls did).
	Show string
	Page int
}

// ParseFilter reads the filter from a query.
func ParseFilter(q url.Values) Filter {
	return Filter{Show: ui.ParseChoice(q, "show", "decisions", "calls"), Page: ui.ParsePage(q)}
}

// Query is the filter as a query string for page.
func (f Filter) Query(page int) string { return ui.ListQuery(page, "show", f.Show) }

// kinds is the filter as the ledger selects entries.
func (f Filter) kinds() hledger.KindFilter {
	if f.Show == "" {
		return hledger.KindFilter{}
	}
	return hledger.KindFilter{Kinds: decisions, Except: f.Show == "calls"}
}

// describer says what a call did, asking the engine (the futures) and
// governance (commands, permits) that own them; either may be nil, and
// the call is then described in general words.
type describer struct {
	ctx     context.Context
	futures *dispatch.Dispatcher
	gov     *govern.Governor
	// you is the signed-in user's name: their decisions say "You".
	you string
}

// future describes the call of a future: "run echo hi", "write a file".
func (d describer) future(id string) string {
	if d.futures == nil || id == "" {
		return ""
	}
	_, prim, input, err := d.futures.CallOf(d.ctx, id)
	if err != nil {
		return ""
	}
	return Describe(prim, input)
}

// command describes the call of a command: its future's input when it
// has one, else what its primitive does.
func (d describer) command(id string) string {
	if d.gov == nil || id == "" {
		return ""
	}
	fut, prim, err := d.gov.CommandCall(d.ctx, id)
	if err != nil {
		return ""
	}
	if s := d.future(fut); s != "" {
		return s
	}
	return Describe(prim, "")
}

func (d describer) permit(id string) string {
	if d.gov == nil || id == "" {
		return ""
	}
	prim, input, err := d.gov.PermitCall(d.ctx, id)
	if err != nil {
		return ""
	}
	return Describe(prim, input)
}

// Describe says a call in a few words: "run echo hi", "write
// C:\notes.txt", "look at this computer".
func Describe(primitive, input string) string {
	var in struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
		Path    string   `json:"path"`
		Name    string   `json:"name"`
	}
	_ = json.Unmarshal([]byte(input), &in)
	switch {
	case in.Command != "":
		return "run " + strings.Join(append([]string{in.Command}, in.Args...), " ")
	case primitive == "machine.host_info":
		return "look at this computer"
	case strings.HasPrefix(primitive, "fs.") && in.Path != "":
		return strings.TrimPrefix(primitive, "fs.") + " " + in.Path
	}
	return callWords(primitive)
}

// fsWords and machineWords say the operations whose input is not known
// (a call that ran at once keeps only its digest) in words.
var (
	fsWords = map[string]string{
		"write": "write a file", "read": "read a file", "list": "look into a folder", "stat": "look at a file",
		"search": "search files", "undo": "undo a change to files", "changes": "list changes to files",
		"patch": "change a file",
	}
	machineWords = map[string]string{
		"exec": "run a program", "host_info": "look at this computer", "estop": "press the emergency stop",
		"session_start": "start a program to type into", "session_send": "type into a program",
		"session_read": "read what a program printed", "session_close": "close a program",
		"process_kill": "end a program", "process_list": "list the running programs", "batch": "run several commands",
	}
)

// callWords says what an operation does when its input is not known:
// "write a file", "run a program".
func callWords(primitive string) string {
	tool, op, _ := strings.Cut(primitive, ".")
	words := strings.ReplaceAll(op, "_", " ")
	switch tool {
	case "fs":
		if w, ok := fsWords[op]; ok {
			return w
		}
		return words + " (files)"
	case "machine":
		if w, ok := machineWords[op]; ok {
			return w
		}
		return words + " on this computer"
	case "ui":
		switch op {
		case "screenshot":
			return "see your screen"
		case "clipboard_get":
			return "read your clipboard"
		case "clipboard_set":
			return "put text on your clipboard"
		case "action":
			return "click or type in an app"
		}
		return words + " in a window on your screen"
	case "task":
		if op == "submit" {
			return "queue a job"
		}
		return words + " (a job)"
	case "recipe", "run":
		return words + " (a " + tool + ")"
	}
	if op == "" {
		return tool
	}
	return words + " (" + tool + ")"
}

// Summary is one entry in a sentence a person reads.
func (d describer) Summary(kind string, raw json.RawMessage) string {
	var f map[string]any
	_ = json.Unmarshal(raw, &f)
	s := func(k string) string {
		v, _ := f[k].(string)
		return v
	}
	who := func(k string) string {
		w := ui.Who(s(k), d.you)
		return strings.ToUpper(w[:1]) + w[1:]
	}
	call := func(what string) string {
		if what == "" {
			return "a call"
		}
		return what
	}
	switch kind {
	case "intent":
		what := d.future(s("future_id"))
		if what == "" {
			what = Describe(s("primitive"), "")
		}
		return "Started: " + call(what)
	case "refused":
		what := d.future(s("future_id"))
		if what == "" {
			what = Describe(s("primitive"), "")
		}
		return "Not allowed, because the emergency stop was on: " + call(what)
	case "outcome":
		what := call(d.command(s("command_id")))
		switch s("outcome") {
		case "in_flight":
			return "Still running: " + what
		case "unknown":
			return "Interrupted when Hearth stopped: " + what + " (check what happened)"
		case "stopped":
			switch s("stopped_by") {
			case callpath.StoppedByEStop:
				return "Stopped by the emergency stop: " + what
			case callpath.StoppedByShutdown:
				return "Stopped because Hearth was closing: " + what
			case callpath.StoppedByCancel:
				return "Cancelled while it ran: " + what
			}
			return "Stopped by Hearth: " + what
		}
		switch s("state") {
		case "completed":
			return "Done: " + what
		case "blocked":
			return "Not allowed: " + what
		case "cancelled":
			return "Cancelled: " + what
		}
		return "Failed: " + what
	case "permit_requested":
		return "ChatGPT asked to " + call(d.permit(s("permit_id")))
	case "permit_approved":
		return who("operator") + " approved " + call(d.permit(s("permit_id")))
	case "permit_denied":
		return who("operator") + " denied " + call(d.permit(s("permit_id")))
	case "permit_ask_again":
		return who("operator") + " chose to be asked again about " + call(d.permit(s("permit_id")))
	case "permit_expired":
		return "Nobody answered in time, so it was not allowed: " + call(d.permit(s("permit_id")))
	case "permit_cancelled":
		return "The request was withdrawn: " + call(d.permit(s("permit_id")))
	case "estop":
		r := s("reason")
		if r == "" {
			return who("by") + " pressed the emergency stop"
		}
		return who("by") + " pressed the emergency stop: " + r
	case "reset":
		return who("operator") + " reset the emergency stop"
	case "queue_resume":
		return who("operator") + " resumed queued jobs"
	case "rule_added":
		t := who("operator") + " always allows " + s("program")
		if c := s("cwd_root"); c != "" {
			t += " in " + c
		}
		return t
	case "rule_removed":
		return who("operator") + " stopped always allowing a program"
	case "reconcile":
		return who("by") + " told Hearth what an interrupted action did"
	case "policy_change":
		return fmt.Sprintf("%s changed what Hearth may do from “%s” to “%s”", who("operator"), risk.ModeLabel(s("from")), risk.ModeLabel(s("to")))
	case "update_install":
		if s("auto") == "true" {
			return fmt.Sprintf("Hearth started updating itself from version %s to %s (automatic updates are on)", s("from"), s("to"))
		}
		switch {
		case s("when") == "started when done":
			return fmt.Sprintf("The work in progress was done, so Hearth started the update from version %s to %s", s("from"), s("to"))
		case s("when") == "when done":
			return fmt.Sprintf("%s asked to update from version %s to %s when the work in progress is done", who("operator"), s("from"), s("to"))
		case s("stops") != "":
			return fmt.Sprintf("%s started the update from version %s to %s, stopping the work in progress (%s)", who("operator"), s("from"), s("to"), s("stops"))
		}
		return fmt.Sprintf("%s started the update from version %s to %s", who("operator"), s("from"), s("to"))
	case "update_outcome":
		if s("result") == "rolled-back" {
			return fmt.Sprintf("The update to version %s did not work, so Hearth went back to %s", s("to"), s("from"))
		}
		return fmt.Sprintf("Hearth was updated from version %s to %s", s("from"), s("to"))
	case "changes_undo":
		switch s("action") {
		case "redo":
			return who("operator") + " asked to bring back a chat's version of files it had put back (Redo)"
		case "undo_one":
			return who("operator") + " asked to undo one change a chat made to a file"
		}
		return who("operator") + " asked to undo all the changes a chat made to files"
	case "changes_undone":
		files, _ := f["files"].([]any)
		n := fmt.Sprintf("%d files", len(files))
		if len(files) == 1 {
			n = "1 file"
		}
		if s("action") == "redo" {
			return who("operator") + " brought back a chat's version: " + n + " (the Changes page says what happened to each)"
		}
		return who("operator") + " undid a chat's changes: " + n + " (the Changes page says what happened to each)"
	case "tunnel_key_set":
		return "The tunnel key was saved (it ends in " + s("last4") + ")"
	case "tunnel_key_cleared":
		return "The tunnel key was cleared"
	case "tunnel_client_pinned":
		return "The connection program was trusted"
	}
	return strings.ToUpper(kind[:1]) + strings.ReplaceAll(kind[1:], "_", " ")
}
