package desktop

import (
	"context"
	"encoding/json"

	"github.com/hearth-dev/hearth/internal/primitive"
)

// MaxApps bounds ui.apps' answer.
const MaxApps = 500

// AppsInput is ui.apps' input.
type AppsInput struct {
	NameContains string `json:"name_contains,omitempty"`
	Limit        int    `json:"limit,omitempty"`
}

// Specs returns ui.open, ui.apps, ui.windows and ui.window.
//
// ui.open is governed by the risk table's kind "open": a document, folder
// or web address asks once per conversation in ask mode, an app once per
// app per conversation (as ui.action), a program or script as an exec;
// all are refused in read-only mode and under the e-stop. ui.apps and
// ui.windows read. ui.window is a UI call into the window's app (kind
// "ui"), asked about as ui.action is.
func (s *Service) Specs() []*primitive.Spec {
	b := primitive.Bound
	return []*primitive.Spec{
		{Tool: "ui", Operation: "open", Risk: primitive.RiskUI, Inline: true, Target: s.target,
			Fields: []primitive.Field{
				{Name: "path", Type: primitive.TString, Desc: "Open: file or folder under a root, in its default app."},
				{Name: "url", Type: primitive.TString, Desc: "Open: http(s) address, in the default browser."},
				{Name: "app", Type: primitive.TString, Desc: "Open: app name as ui.apps lists it, or an AppUserModelID."},
			},
			Summary: "one of path, url, app; a program or script is run (asks as an exec). {opened, process_id?}.",
			Precheck: func(raw json.RawMessage) error {
				var in OpenInput
				if json.Unmarshal(raw, &in) != nil {
					return nil
				}
				_, err := s.check(in)
				return err
			},
			Run: primitive.Typed(func(ctx context.Context, _ *primitive.Call, in OpenInput) (any, error) {
				return s.Open(ctx, in)
			})},
		{Tool: "ui", Operation: "apps", Risk: primitive.RiskRead, Inline: true,
			Fields: []primitive.Field{
				{Name: "name_contains", Type: primitive.TString, Desc: "Apps: only names or ids containing this."},
				{Name: "limit", Type: primitive.TInteger, Min: b(1), Max: b(MaxApps), Desc: "Apps: at most (200)."},
			},
			Summary: "installed apps {name, app_id, kind}, in the PC's language.",
			Run: primitive.Typed(func(ctx context.Context, _ *primitive.Call, in AppsInput) (any, error) {
				if in.Limit == 0 {
					in.Limit = 200
				}
				return s.Apps(ctx, in.NameContains, in.Limit)
			})},
		{Tool: "ui", Operation: "windows", Risk: primitive.RiskRead, Inline: true,
			Fields:  []primitive.Field{{Name: "process_id", Type: primitive.TInteger, Min: b(1)}},
			Summary: "top-level windows {hwnd, title, process_id, app, bounds, monitor, minimized, maximized, elevated} and the monitors {x, y, w, h, scale}.",
			Run: primitive.Typed(func(ctx context.Context, _ *primitive.Call, in WindowsInput) (any, error) {
				return s.Windows(ctx, in)
			})},
		{Tool: "ui", Operation: "window", Risk: primitive.RiskUI, Inline: true, Target: s.windowTarget,
			Fields: []primitive.Field{
				{Name: "hwnd", Type: primitive.TInteger, Min: b(1)},
				{Name: "window_action", Type: primitive.TString, Enum: WindowActions},
				{Name: "x", Type: primitive.TInteger, Desc: "Window move: new left, screen pixels."},
				{Name: "y", Type: primitive.TInteger, Desc: "Window move: new top."},
				{Name: "w", Type: primitive.TInteger, Min: b(1), Desc: "Window resize: width."},
				{Name: "h", Type: primitive.TInteger, Min: b(1), Desc: "Window resize: height."},
			},
			Summary: "hwnd, window_action; the window after it. An elevated window is blocked.",
			Precheck: func(raw json.RawMessage) error {
				var in WindowInput
				if json.Unmarshal(raw, &in) != nil {
					return nil
				}
				return checkWindow(in)
			},
			Run: primitive.Typed(func(ctx context.Context, _ *primitive.Call, in WindowInput) (any, error) {
				return s.Window(ctx, in)
			})},
	}
}
