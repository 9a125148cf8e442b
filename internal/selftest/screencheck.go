package selftest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"runtime"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/mcpclient"
)

// The screen checks: ui.screenshot of the fixture window (not Hearth's
// panel, which must be refused) and a clipboard round trip that puts the
// user's text back. In the policy ask the first screenshot and the first
// clipboard read of the conversation wait for a permit, which the
// selftest approves as its operator.

// callImage calls the ui tool in the selftest's conversation and returns
// the envelope and the answer's image content, if any.
func (h *hearth) callImage(ctx context.Context, args map[string]any) (*result, *mcp.ImageContent, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := h.session.CallTool(ctx, &mcp.CallToolParams{Name: "ui", Arguments: args, Meta: mcp.Meta{"hearth/conversation": conversation}})
	if err != nil {
		return nil, nil, fmt.Errorf("ui.%v: %w", args["operation"], err)
	}
	out, err := mcpclient.Decode(res)
	if err != nil {
		return nil, nil, fmt.Errorf("ui.%v: %w", args["operation"], err)
	}
	h.arrivals.Keep(out)
	var img *mcp.ImageContent
	for _, c := range res.Content {
		if ic, ok := c.(*mcp.ImageContent); ok {
			img = ic
		}
	}
	return out, img, nil
}

// approveFirst approves the permit the first call of an ask-once
// primitive waits for, checks the operator saw it for that primitive, and
// returns the approved call's arrival (whatever its state).
func (r *run) approveFirst(ctx context.Context, prim string, res *result) (map[string]any, error) {
	pid, fid := res.Str("permit_id"), res.Str("future_id")
	if res.State() != "pending" || pid == "" || fid == "" {
		return nil, fmt.Errorf("the first %s of the conversation must wait for a permit in the policy ask: %s", prim, res.Brief())
	}
	op := r.hearth.app.Operator
	pending, err := op.Permits(ctx, "pending")
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(pending, func(p govern.Permit) bool { return p.ID == pid && p.Primitive == prim }) {
		return nil, fmt.Errorf("the operator does not see permit %s for %s", pid, prim)
	}
	if err := op.Approve(ctx, pid, Operator, nil); err != nil {
		return nil, fmt.Errorf("approve permit %s as %s: %w", pid, Operator, err)
	}
	return r.hearth.await(ctx, fid, 60*time.Second)
}

// noPixels is the skip of a screenshot that found no screen to read under
// Wine, whose null graphics driver (CI's) has none.
func noPixels(res *result) error {
	if res.Code() == "failed/capture_failed" && underWine() {
		return skip("Wine's graphics driver has no screen to read: %s", res.Str("error.message"))
	}
	return nil
}

func (r *run) checkScreenshot(ctx context.Context) (string, error) {
	if runtime.GOOS != "windows" {
		// ui.screenshot under X11 is tested with Xvfb (internal/screen).
		return "", notWindows("the screenshot of a Win32 window")
	}
	args := map[string]any{"operation": "screenshot", "hwnd": r.fixture.ready.HWND}
	first, _, err := r.hearth.callImage(ctx, args)
	if err != nil {
		return "", err
	}
	env, err := r.approveFirst(ctx, "ui.screenshot", first)
	if err != nil {
		return "", err
	}
	approved := &result{Env: env}
	if err := noPixels(approved); err != nil {
		return "", err
	}
	if approved.State() != "completed" {
		return "", fmt.Errorf("the approved ui.screenshot answered %s", approved.Brief())
	}
	// Approved once in this conversation: the next call runs at once and
	// carries the picture.
	res, img, err := r.hearth.callImage(ctx, args)
	if err != nil {
		return "", err
	}
	if res.State() != "completed" {
		return "", fmt.Errorf("ui.screenshot of the fixture window after the approval answered %s", res.Brief())
	}
	if img == nil || img.MIMEType != "image/png" {
		return "", errors.New("ui.screenshot answered without a PNG image content item")
	}
	pic, err := png.Decode(bytes.NewReader(img.Data))
	if err != nil {
		return "", fmt.Errorf("the image content is not a PNG: %w", err)
	}
	w, h := int(res.Num("result.width")), int(res.Num("result.height"))
	if pic.Bounds().Dx() != w || pic.Bounds().Dy() != h || w == 0 {
		return "", fmt.Errorf("the PNG is %v, the result says %dx%d", pic.Bounds(), w, h)
	}
	if colors := distinct(pic, 3); colors < 3 {
		return "", fmt.Errorf("the picture of the fixture window has %d color(s): nothing of its controls was captured", colors)
	}
	refused, _, err := r.hearth.callImage(ctx, map[string]any{"operation": "screenshot", "hwnd": r.fixture.ready.PanelHWND})
	if err != nil {
		return "", err
	}
	if refused.Code() != "blocked/operator_surface" {
		return "", fmt.Errorf("ui.screenshot of the window titled like the control panel answered %s, want blocked/operator_surface", refused.Brief())
	}
	return fmt.Sprintf("ui.screenshot waited once for a permit, then answered a %dx%d PNG of the fixture window at %v,%v (%v bytes); the window titled like the control panel was refused",
		w, h, res.Num("result.bounds.x"), res.Num("result.bounds.y"), res.Num("result.bytes")), nil
}

// distinct counts the colors of img, up to most.
func distinct(img image.Image, most int) int {
	seen := map[[3]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			seen[[3]uint32{r, g, bl}] = true
			if len(seen) >= most {
				return len(seen)
			}
		}
	}
	return len(seen)
}

// checkClipboard sets and reads back the clipboard's text, then puts the
// text it held back (the user's clipboard is left as it was, for text).
func (r *run) checkClipboard(ctx context.Context) (string, error) {
	if runtime.GOOS != "windows" {
		return "", notWindows("the Windows clipboard")
	}
	get := map[string]any{"operation": "clipboard_get"}
	first, _, err := r.hearth.callImage(ctx, get)
	if err != nil {
		return "", err
	}
	env, err := r.approveFirst(ctx, "ui.clipboard_get", first)
	if err != nil {
		return "", err
	}
	if env["state"] != "completed" {
		return "", fmt.Errorf("the approved ui.clipboard_get answered %s", (&result{Env: env}).Brief())
	}
	saved := (&result{Env: env}).Str("result.text")
	want := fmt.Sprintf("Hearth selftest %s — ✓ ü 日本", r.id)
	set, _, err := r.hearth.callImage(ctx, map[string]any{"operation": "clipboard_set", "text": want})
	if err != nil {
		return "", err
	}
	if set.State() != "completed" {
		return "", fmt.Errorf("ui.clipboard_set answered %s", set.Brief())
	}
	got, _, err := r.hearth.callImage(ctx, get)
	restore, _, rerr := r.hearth.callImage(ctx, map[string]any{"operation": "clipboard_set", "text": saved})
	if err != nil {
		return "", err
	}
	if got.State() != "completed" || got.Str("result.text") != want {
		return "", fmt.Errorf("ui.clipboard_get after the set answered %s", got.Brief())
	}
	if rerr != nil || restore.State() != "completed" {
		return "", fmt.Errorf("putting the clipboard's text back failed: %v %s", rerr, restore.Brief())
	}
	return fmt.Sprintf("ui.clipboard_get waited once for a permit; ui.clipboard_set put %d bytes of text on the clipboard and ui.clipboard_get read them back; the clipboard's earlier text (%d bytes) was put back",
		len(want), len(saved)), nil
}
