package ledger

import (
	"context"
	"strings"
	"testing"
	"time"

	hledger "github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/web/ui"
)

func TestLedgerView(t *testing.T) {
	v := View{Size: 7, Entries: []Entry{{Seq: 7, Time: time.Now(), Kind: "estop", Data: `{"by": "model"}`, Hash: strings.Repeat("c", 64)}},
		Verified: &Verification{Report: hledger.Report{Entries: 7, PublicKey: "hearth/x+1+key"}}}
	var b strings.Builder
	if err := Page(ui.Chrome{Title: "Ledger", CSRF: "tok"}, v).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{`data-testid="ledger-size">7<`, `data-testid="ledger-entry" data-seq="7"`, `data-testid="ledger-kind">estop<`,
		`data-testid="verify-ok"`, `data-testid="verify-entries">7<`, `data-testid="verify-key">hearth/x+1+key<`,
		`action="/ledger/verify"`, `action="/ledger/export"`, `data-testid="export-button"`} {
		if !strings.Contains(html, want) {
			t.Errorf("missing %q", want)
		}
	}
	b.Reset()
	v.Verified = &Verification{Failure: "entry seq 3: prev hash mismatch"}
	if err := Report(*v.Verified).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `data-testid="verify-failed"`) || !strings.Contains(b.String(), "seq 3") {
		t.Errorf("failure: %s", b.String())
	}
}

// TestEntrySummaries: each kind of entry reads as a sentence (the calls'
// own words come from the database, absent here): the signed-in user is
// "You", a call is named by what it asked even without its input, and a
// call refused under the e-stop says so.
func TestEntrySummaries(t *testing.T) {
	d := describer{you: "root"}
	for _, c := range []struct{ kind, data, want string }{
		{"estop", `{"by":"operator:Ann","reason":"lunch"}`, "Ann pressed the emergency stop: lunch"},
		{"reset", `{"operator":"Ann"}`, "Ann reset the emergency stop"},
		{"policy_change", `{"operator":"Ann","from":"ask","to":"read-only"}`, "Ann changed what Hearth may do from “Ask me” to “Read only”"},
		{"reset", `{"operator":"root"}`, "You reset the emergency stop"},
		{"estop", `{"by":"operator:root","reason":"lunch"}`, "You pressed the emergency stop: lunch"},
		{"estop", `{"by":"model","reason":"oops"}`, "ChatGPT pressed the emergency stop: oops"},
		{"intent", `{"command_id":"c","primitive":"fs.write","future_id":"fut_x"}`, "Started: write a file"},
		{"refused", `{"command_id":"c","primitive":"machine.exec","reason":"estop"}`, "Not allowed, because the emergency stop was on: run a program"},
		{"rule_added", `{"operator":"Ann","program":"git","cwd_root":"C:\\src"}`, `Ann always allows git in C:\src`},
		{"permit_approved", `{"operator":"Ann","permit_id":"pmt_1"}`, "Ann approved a call"},
		{"outcome", `{"command_id":"c","outcome":"unknown"}`, "Interrupted when Hearth stopped: a call (check what happened)"},
		{"outcome", `{"command_id":"c","outcome":"stopped","stopped_by":"estop","state":"cancelled"}`, "Stopped by the emergency stop: a call"},
		{"outcome", `{"command_id":"c","outcome":"stopped","stopped_by":"shutdown","state":"cancelled"}`, "Stopped because Hearth was closing: a call"},
		{"outcome", `{"command_id":"c","outcome":"stopped","stopped_by":"cancel","state":"cancelled"}`, "Cancelled while it ran: a call"},
		{"changes_undo", `{"operator":"Ann","action":"undo_all","route":"r"}`, "Ann asked to undo all the changes a chat made to files"},
		{"changes_undone", `{"operator":"Ann","action":"undo_all","files":[{"path":"a"},{"path":"b"}]}`, "Ann undid a chat's changes: 2 files (the Changes page says what happened to each)"},
		{"changes_undone", `{"operator":"Ann","action":"redo","files":[{"path":"a"}]}`, "Ann brought back a chat's version: 1 file (the Changes page says what happened to each)"},
		{"tunnel_key_set", `{"last4":"wxyz"}`, "The tunnel key was saved (it ends in wxyz)"},
		{"update_install", `{"operator":"Ann","from":"1.3.0","to":"1.4.0"}`, "Ann started the update from version 1.3.0 to 1.4.0"},
		{"update_install", `{"auto":"true","from":"1.3.0","to":"1.4.0"}`, "Hearth started updating itself from version 1.3.0 to 1.4.0 (automatic updates are on)"},
		{"update_install", `{"operator":"Ann","from":"1.3.0","to":"1.4.0","when":"when done"}`, "Ann asked to update from version 1.3.0 to 1.4.0 when the work in progress is done"},
		{"update_install", `{"when":"started when done","from":"1.3.0","to":"1.4.0"}`, "The work in progress was done, so Hearth started the update from version 1.3.0 to 1.4.0"},
		{"update_install", `{"operator":"Ann","from":"1.3.0","to":"1.4.0","stops":"2 tasks are running"}`, "Ann started the update from version 1.3.0 to 1.4.0, stopping the work in progress (2 tasks are running)"},
		{"update_outcome", `{"from":"1.3.0","to":"1.4.0","result":"updated"}`, "Hearth was updated from version 1.3.0 to 1.4.0"},
		{"update_outcome", `{"from":"1.3.0","to":"1.4.0","result":"rolled-back"}`, "The update to version 1.4.0 did not work, so Hearth went back to 1.3.0"},
		{"run_created", `{}`, "Run created"},
	} {
		if got := d.Summary(c.kind, []byte(c.data)); got != c.want {
			t.Errorf("%s: %q, want %q", c.kind, got, c.want)
		}
	}
	if got := Describe("machine.exec", `{"command":"ls","args":["-la"]}`); got != "run ls -la" {
		t.Errorf("Describe exec = %q", got)
	}
	if got := Describe("fs.write", `{"path":"C:\\a.txt"}`); got != `write C:\a.txt` {
		t.Errorf("Describe write = %q", got)
	}
}
