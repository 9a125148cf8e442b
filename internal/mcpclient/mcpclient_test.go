package mcpclient_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/mcpclient"
)

// TestCallDecodesAndAwaits: against a real Hearth, a call's envelope is
// decoded (state, paths, a refusal's code and message), and a detached
// call's result is waited for with task.wait and kept from the response
// that carried it.
func TestCallDecodesAndAwaits(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh here to run a detached call with")
	}
	in := hearthtest.Start(t, hearthtest.Trusted)
	c := hearthtest.Connect(t, in.URL, "mcpclient")
	ctx := context.Background()
	meta := mcp.Meta{"hearth/conversation": c.Conversation}
	box := mcpclient.Mailbox{}
	var calls int
	call := func(ctx context.Context, tool string, args map[string]any) (*mcpclient.Result, error) {
		calls++
		r, err := mcpclient.Call(ctx, c.Session, tool, args, meta)
		if err == nil {
			box.Keep(r)
		}
		return r, err
	}

	r, err := call(ctx, "machine", map[string]any{"operation": "host_info"})
	if err != nil {
		t.Fatal(err)
	}
	if r.State() != "completed" || r.Code() != "completed" || r.IsError || r.Str("result.os") == "" {
		t.Fatalf("host_info: state %q, code %q, %s", r.State(), r.Code(), r.Brief())
	}

	r, err = call(ctx, "machine", map[string]any{"operation": "host_info", "bogus": 1})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Code(), "/") || !strings.HasPrefix(r.Brief(), r.Code()+": ") || !strings.Contains(r.Brief(), "bogus") {
		t.Fatalf("a refusal: code %q, brief %q", r.Code(), r.Brief())
	}

	r, err = call(ctx, "machine", map[string]any{"operation": "exec", "command": sh, "args": []any{"-c", "sleep 0.3; echo hi"}, "detach": true})
	if err != nil {
		t.Fatal(err)
	}
	id := r.Str("future_id")
	if r.State() != "pending" || id == "" {
		t.Fatalf("a detached call: %s", r.Brief())
	}
	env, err := mcpclient.Await(ctx, box, call, id, time.Minute, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if env["state"] != "completed" || hearthtest.Get(env, "result.stdout.text") != "hi\n" {
		t.Fatalf("the detached call's envelope: %v", env)
	}
	if box[id] == nil || calls < 4 {
		t.Fatalf("the arrival was not kept from a response (%d calls)", calls)
	}
}

// TestDecodeWithoutEnvelope: a result without structuredContent decodes
// with no envelope; one whose structuredContent is not an object is an
// error.
func TestDecodeWithoutEnvelope(t *testing.T) {
	r, err := mcpclient.Decode(&mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no "}, &mcp.TextContent{Text: "envelope"}}})
	if err != nil || r.Env != nil || !r.IsError || r.Text != "no envelope" || r.State() != "" {
		t.Fatalf("Decode: %+v, %v", r, err)
	}
	if _, err := mcpclient.Decode(&mcp.CallToolResult{StructuredContent: []any{1, 2}}); err == nil || !strings.Contains(err.Error(), "not an object") {
		t.Fatalf("an array as structuredContent: %v", err)
	}
}
