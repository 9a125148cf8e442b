package session

import (
	"context"
	"encoding/json"

	"github.com/hearth-dev/hearth/internal/primitive"
)

// Specs returns the machine tool's session primitives. Their risks (the
// risk table in governance decides what each mode does with them):
//   - session_start is exec: it starts a program, under the same allow
//     rules and permits as machine.exec (the caller registers the program
//     extractor for it).
//   - session_send is exec, of the risk table's kind "session": keystrokes
//     run commands, but only in a session whose start was approved (by
//     permit, rule or the trusted mode), so they need no permit of their
//     own; the e-stop and read-only still refuse them, and each send is
//     journaled.
//   - session_read and session_list are read.
//   - session_close is control: stopping one's own session is always
//     allowed, like the e-stop.
func (m *Manager) Specs() []*primitive.Spec {
	sid := primitive.Field{Name: "session_id", Type: primitive.TString, Required: true, Desc: "Session id (ses_…) from session_start."}
	return []*primitive.Spec{
		{Tool: "machine", Operation: "session_start", Risk: primitive.RiskExec,
			Fields: []primitive.Field{
				{Name: "command", Type: primitive.TString, Required: true, Desc: "Program to run."},
				{Name: "args", Type: primitive.TArray, Items: &primitive.Field{Type: primitive.TString}, Desc: "Arguments."},
				{Name: "cwd", Type: primitive.TString, Desc: "Working directory (absolute)."},
				{Name: "env", Type: primitive.TObject, Values: primitive.TString, Desc: "Extra environment variables."},
			},
			// No permit is asked for a start that cannot happen here.
			Precheck: func(json.RawMessage) error {
				if err := available(); err != nil {
					return unavailableErr(err)
				}
				return nil
			},
			Summary: "start a console program (REPL, shell, ssh) on a pseudo-terminal to talk to; same permit as exec; returns session_id.",
			Run: primitive.Typed(func(ctx context.Context, call *primitive.Call, in StartInput) (any, error) {
				return m.StartSession(ctx, call, in)
			})},
		{Tool: "machine", Operation: "session_send", Risk: primitive.RiskExec,
			Fields: []primitive.Field{sid,
				{Name: "text", Type: primitive.TString, Desc: "Text typed as is (no Enter added)."},
				{Name: "keys", Type: primitive.TArray, Max: primitive.Bound(64), Items: &primitive.Field{Type: primitive.TString, Enum: KeyNames()}, Desc: "Keys pressed after text."},
			},
			Summary: "type text then keys; returns offset to read the answer from.",
			Run: primitive.Typed(func(ctx context.Context, call *primitive.Call, in struct {
				SessionID string   `json:"session_id"`
				Text      string   `json:"text"`
				Keys      []string `json:"keys"`
			}) (any, error) {
				return m.Send(ctx, call, in.SessionID, in.Text, in.Keys)
			})},
		{Tool: "machine", Operation: "session_read", Risk: primitive.RiskRead, Inline: true,
			Fields: []primitive.Field{sid,
				{Name: "offset", Type: primitive.TInteger, Min: primitive.Bound(0), Desc: "Output offset (default: where the last read ended)."},
				{Name: "wait_ms", Type: primitive.TInteger, Min: primitive.Bound(0), Max: primitive.Bound(float64(MaxWait.Milliseconds())), Desc: "Wait up to this for output (default 0)."},
				{Name: "until", Type: primitive.TString, Desc: "Wait until the output contains this (e.g. a prompt)."},
			},
			Summary: "output since offset: text, next_offset, more, exited/exit_code; lost_bytes if the ring dropped it.",
			Run: primitive.Typed(func(ctx context.Context, call *primitive.Call, in ReadInput) (any, error) {
				return m.Read(ctx, call, in)
			})},
		{Tool: "machine", Operation: "session_close", Risk: primitive.RiskControl, Inline: true,
			Fields:  []primitive.Field{sid},
			Summary: "kill the session's process tree; returns exit_code and the transcript artifact.",
			Run: primitive.Typed(func(ctx context.Context, call *primitive.Call, in struct {
				SessionID string `json:"session_id"`
			}) (any, error) {
				return m.Close(ctx, call, in.SessionID)
			})},
		{Tool: "machine", Operation: "session_list", Risk: primitive.RiskRead,
			Summary: "this conversation's open sessions.",
			Run: primitive.Typed(func(ctx context.Context, call *primitive.Call, _ struct{}) (any, error) {
				return map[string]any{"sessions": m.List(call), "max_sessions": m.o.MaxSessions}, nil
			})},
	}
}
