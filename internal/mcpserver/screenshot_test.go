//go:build !windows

package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/jpeg"
	"image/png"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/mcpserver"
	"github.com/hearth-dev/hearth/internal/screen/screentest"
)

// sdkCall calls a tool through a go-sdk client session in a conversation.
func sdkCall(t *testing.T, s *mcp.ClientSession, conversation string, args map[string]any) (*mcp.CallToolResult, map[string]any) {
	t.Helper()
	p := &mcp.CallToolParams{Name: "ui", Arguments: args}
	if conversation != "" {
		p.Meta = mcp.Meta{"hearth/conversation": conversation}
	}
	res, err := s.CallTool(context.Background(), p)
	if err != nil {
		t.Fatalf("call ui %v: %v", args, err)
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var env map[string]any
	if err := json.Unmarshal(b, &env); err != nil {
		t.Fatalf("structuredContent: %v", err)
	}
	return res, env
}

// imageOf returns the image content item of res, decoded, checking that
// it is what the structured result describes.
func imageOf(t *testing.T, res *mcp.CallToolResult, env map[string]any) image.Image {
	t.Helper()
	if len(res.Content) != 2 {
		t.Fatalf("%d content items, want text and image: %v", len(res.Content), env)
	}
	ic, ok := res.Content[1].(*mcp.ImageContent)
	if !ok {
		t.Fatalf("second content item is %T", res.Content[1])
	}
	if ic.MIMEType != hearthtest.Get(env, "result.mime_type") {
		t.Fatalf("image content %s, result says %v", ic.MIMEType, hearthtest.Get(env, "result.mime_type"))
	}
	dec := png.Decode
	if ic.MIMEType == "image/jpeg" {
		dec = jpeg.Decode
	}
	img, err := dec(bytes.NewReader(ic.Data))
	if err != nil {
		t.Fatalf("decode the image content: %v", err)
	}
	w, _ := hearthtest.Get(env, "result.width").(float64)
	h, _ := hearthtest.Get(env, "result.height").(float64)
	if img.Bounds().Dx() != int(w) || img.Bounds().Dy() != int(h) || float64(len(ic.Data)) != hearthtest.Get(env, "result.bytes") {
		t.Fatalf("image %v of %d bytes, result says %vx%v of %v bytes", img.Bounds(), len(ic.Data), w, h, hearthtest.Get(env, "result.bytes"))
	}
	return img
}

// TestScreenshotImageContent calls ui.screenshot of a real X window (Xvfb)
// through real go-sdk clients, on the fast path and on the SDK's: the
// answer's second content item is a PNG (or JPEG) of the window's size and
// color, the structured content says its bounds and size but carries no
// bytes, and both paths answer the same.
func TestScreenshotImageContent(t *testing.T) {
	display := screentest.StartXvfb(t)
	const red = 0xdd2211
	w := screentest.OpenWindow(t, display, 30, 40, 160, 90, red, "target", 4242)
	in := hearthtest.Start(t, trusted)
	fast := httptest.NewServer(in.App.MCP.Handler())
	defer fast.Close()
	sdk := httptest.NewServer(mcpserver.SDKOnlyHandler(in.App.MCP))
	defer sdk.Close()
	var answers []string
	for i, url := range []string{fast.URL, sdk.URL} {
		c := hearthtest.Connect(t, url+"/mcp", "")
		before := mcpserver.FastCalls(in.App.MCP)
		res, env := sdkCall(t, c.Session, "", map[string]any{"operation": "screenshot", "hwnd": int(w.ID)})
		if env["state"] != "completed" {
			t.Fatalf("screenshot: %v", env)
		}
		if took := mcpserver.FastCalls(in.App.MCP) - before; i == 0 && took != 1 || i == 1 && took != 0 {
			t.Errorf("path %d took the fast path %d times", i, took)
		}
		img := imageOf(t, res, env)
		if img.Bounds().Dx() != 160 || img.Bounds().Dy() != 90 {
			t.Fatalf("image %v, want the window's 160x90", img.Bounds())
		}
		if r, g, b, _ := img.At(80, 45).RGBA(); r>>8 != 0xdd || g>>8 != 0x22 || b>>8 != 0x11 {
			t.Errorf("center pixel %x %x %x, want the window's dd2211", r>>8, g>>8, b>>8)
		}
		if got := hearthtest.Get(env, "result.bounds"); got == nil || hearthtest.Get(env, "result.bounds.x") != 30.0 || hearthtest.Get(env, "result.bounds.w") != 160.0 {
			t.Errorf("bounds %v", got)
		}
		if sc, _ := json.Marshal(res.StructuredContent); len(sc) > 2000 {
			t.Errorf("structured content is %d bytes: it must not carry the image", len(sc))
		}
		b, _ := json.Marshal(normalize(mustDecode(t, res)))
		answers = append(answers, string(b))
	}
	if answers[0] != answers[1] {
		t.Errorf("fast path\n%.600s\nSDK\n%.600s", answers[0], answers[1])
	}

	// JPEG with a quality, scaled down by max_width.
	c := hearthtest.Connect(t, fast.URL+"/mcp", "")
	res, env := sdkCall(t, c.Session, "", map[string]any{"operation": "screenshot", "format": "jpeg", "quality": 60, "max_width": 320})
	img := imageOf(t, res, env)
	if img.Bounds().Dx() != 320 || hearthtest.Get(env, "result.scale") != 0.5 || hearthtest.Get(env, "result.quality") != 60.0 {
		t.Errorf("jpeg: %v %v", img.Bounds(), env["result"])
	}
	// Bad input names the field.
	_, env = sdkCall(t, c.Session, "", map[string]any{"operation": "screenshot", "monitor": 1, "hwnd": 5})
	if msg, _ := hearthtest.Get(env, "error.message").(string); !strings.Contains(msg, "at most one target") {
		t.Errorf("two targets: %v", env)
	}
}

// TestScreenAskOncePerConversation: in the ask mode ui.screenshot and
// ui.clipboard_get wait for an operator permit the first time in a
// conversation; once approved, later calls there run at once (with the
// image), while another conversation is asked again. An approved first
// call arrives later without the image (Hearth keeps none). Setting the
// clipboard asks nothing; in the read-only mode and under a latched e-stop
// all three are refused.
func TestScreenAskOncePerConversation(t *testing.T) {
	screentest.StartXvfb(t)
	in := hearthtest.Start(t, nil) // the default policy: ask
	ctx := context.Background()
	c := hearthtest.Connect(t, in.URL, "")
	shot := map[string]any{"operation": "screenshot", "max_width": 64}
	for _, op := range []map[string]any{shot, {"operation": "clipboard_get"}} {
		res, env := sdkCall(t, c.Session, "conv-a", op)
		pid, _ := env["permit_id"].(string)
		if env["state"] != "pending" || pid == "" || len(res.Content) != 1 {
			t.Fatalf("%v in ask mode: %v", op["operation"], env)
		}
		if err := in.App.Operator.Approve(ctx, pid, "alice", nil); err != nil {
			t.Fatal(err)
		}
		fid, _ := env["future_id"].(string)
		arr := hearthtest.Connect(t, in.URL, "conv-a").WaitArrival(fid)
		if hearthtest.Get(arr, "envelope.state") != "completed" {
			t.Fatalf("approved %v arrived %v", op["operation"], arr)
		}
		if op["operation"] == "screenshot" && !strings.Contains(hearthtest.Get(arr, "envelope.result.image").(string), "keeps no copy") {
			t.Errorf("arrival's image note: %v", arr)
		}
		res, env = sdkCall(t, c.Session, "conv-a", op)
		if env["state"] != "completed" {
			t.Fatalf("%v again in the same conversation: %v", op["operation"], env)
		}
		if op["operation"] == "screenshot" {
			imageOf(t, res, env)
		}
		if _, env = sdkCall(t, c.Session, "conv-b", op); env["state"] != "pending" || env["permit_id"] == nil {
			t.Fatalf("%v in another conversation: %v", op["operation"], env)
		}
		if _, env = sdkCall(t, c.Session, "", op); env["state"] != "pending" || env["permit_id"] == nil {
			t.Fatalf("%v without a conversation: %v", op["operation"], env)
		}
	}
	_, env := sdkCall(t, c.Session, "conv-c", map[string]any{"operation": "clipboard_set", "text": "hello"})
	if env["state"] != "completed" || env["command_id"] == nil {
		t.Fatalf("clipboard_set in ask mode: %v", env)
	}
	_, env = sdkCall(t, c.Session, "conv-a", map[string]any{"operation": "clipboard_get"})
	if hearthtest.Get(env, "result.text") != "hello" {
		t.Fatalf("clipboard_get after set: %v", env)
	}
	if err := in.App.Operator.SetPolicy(ctx, "alice", config.ModeReadOnly); err != nil {
		t.Fatal(err)
	}
	for _, op := range []map[string]any{shot, {"operation": "clipboard_get"}, {"operation": "clipboard_set", "text": "x"}} {
		if _, env := sdkCall(t, c.Session, "conv-a", op); hearthtest.Get(env, "error.code") != "read_only" {
			t.Errorf("%v in read-only mode: %v", op["operation"], env)
		}
	}
	if err := in.App.Operator.SetPolicy(ctx, "alice", config.ModeAsk); err != nil {
		t.Fatal(err)
	}
	if err := in.App.Operator.EStop(ctx, "bob", "stop"); err != nil {
		t.Fatal(err)
	}
	for _, op := range []map[string]any{shot, {"operation": "clipboard_get"}, {"operation": "clipboard_set", "text": "x"}} {
		if _, env := sdkCall(t, c.Session, "conv-a", op); hearthtest.Get(env, "error.code") != "estop" {
			t.Errorf("%v under the e-stop: %v", op["operation"], env)
		}
	}
}
