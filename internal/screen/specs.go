package screen

import (
	"context"
	"encoding/json"
	"errors"
	"unicode/utf8"

	"github.com/hearth-dev/hearth/internal/primitive"
)

// ClipInput is the clipboard primitives' input.
type ClipInput struct {
	Text     *string `json:"text,omitempty"`
	MaxBytes int     `json:"max_bytes,omitempty"`
}

// ClipText is ui.clipboard_get's result.
type ClipText struct {
	Text  string `json:"text"`
	Bytes int    `json:"bytes"`
}

// ClipSet is ui.clipboard_set's result.
type ClipSet struct {
	Bytes int `json:"bytes"`
}

// ClipboardGet reads the clipboard's text, at most maxBytes (0: the
// ceiling) bytes of it.
func (s *Service) ClipboardGet(ctx context.Context, maxBytes int) (*ClipText, error) {
	if maxBytes <= 0 {
		maxBytes = MaxClipboardBytes
	}
	if maxBytes > MaxClipboardBytes {
		return nil, primitive.Failed("invalid_input", "ui.clipboard_get: max_bytes: at most %d (1 MiB)", MaxClipboardBytes)
	}
	res, err := s.run(ctx, "ui.clipboard_get", func() (any, error) {
		t, err := s.Clipboard.Text(maxBytes)
		switch {
		case errors.Is(err, ErrNoText):
			return &ClipText{}, nil
		case errors.Is(err, ErrTooLong):
			return nil, primitive.Conflict("too_large", "ui.clipboard_get: max_bytes: the clipboard holds more than %d bytes of text", maxBytes)
		case errors.Is(err, ErrNoDisplay):
			return nil, unavailable(err)
		case err != nil:
			return nil, primitive.Failed("clipboard_failed", "ui.clipboard_get: read the clipboard: %v", err)
		}
		return &ClipText{Text: t, Bytes: len(t)}, nil
	})
	if err != nil {
		return nil, err
	}
	return res.(*ClipText), nil
}

// ClipboardSet puts text on the clipboard.
func (s *Service) ClipboardSet(ctx context.Context, text string) (*ClipSet, error) {
	if err := checkClipText(text); err != nil {
		return nil, err
	}
	res, err := s.run(ctx, "ui.clipboard_set", func() (any, error) {
		switch err := s.Clipboard.SetText(text); {
		case errors.Is(err, ErrNoDisplay):
			return nil, unavailable(err)
		case err != nil:
			return nil, primitive.Failed("clipboard_failed", "ui.clipboard_set: write the clipboard: %v", err)
		}
		return &ClipSet{Bytes: len(text)}, nil
	})
	if err != nil {
		return nil, err
	}
	return res.(*ClipSet), nil
}

func checkClipText(text string) error {
	if len(text) > MaxClipboardBytes {
		return primitive.Failed("invalid_input", "ui.clipboard_set: text: %d bytes is over the %d-byte bound", len(text), MaxClipboardBytes)
	}
	if !utf8.ValidString(text) {
		return primitive.Failed("invalid_input", "ui.clipboard_set: text: not valid UTF-8")
	}
	for _, r := range text {
		if r == 0 {
			return primitive.Failed("invalid_input", "ui.clipboard_set: text: holds a NUL character, which ends clipboard text")
		}
	}
	return nil
}

// Specs returns ui.screenshot, ui.clipboard_get and ui.clipboard_set.
//
// The screen and the clipboard can show what the operator never meant the
// model to read (a password being typed, a copied password): the two reads
// are governed as ui calls, journaled and refused while the e-stop is
// latched, and the risk table (internal/risk, kind "see") makes the ask
// mode ask the operator once per conversation. Setting the clipboard is a
// ui write: journaled, refused under the e-stop and in the read-only
// mode, and needing no permit (kind "clipboard_set").
func (s *Service) Specs() []*primitive.Spec {
	b := primitive.Bound
	shot := []primitive.Field{
		{Name: "hwnd", Type: primitive.TInteger, Min: b(1)},
		{Name: "process_id", Type: primitive.TInteger, Min: b(1)},
		{Name: "monitor", Type: primitive.TInteger, Min: b(1), Max: b(64), Desc: "Screenshot: monitor number (default 1)."},
		{Name: "region", Type: primitive.TObject, Desc: "Screenshot: screen rectangle.", Fields: []primitive.Field{
			{Name: "x", Type: primitive.TInteger, Required: true}, {Name: "y", Type: primitive.TInteger, Required: true},
			{Name: "w", Type: primitive.TInteger, Required: true, Min: b(1)}, {Name: "h", Type: primitive.TInteger, Required: true, Min: b(1)}}},
		{Name: "format", Type: primitive.TString, Enum: []string{"png", "jpeg"}},
		{Name: "quality", Type: primitive.TInteger, Min: b(1), Max: b(100), Desc: "JPEG quality (80)."},
		{Name: "max_width", Type: primitive.TInteger, Min: b(minSide), Max: b(MaxWidthCeiling), Desc: "Pixels (1600)."},
		{Name: "max_bytes", Type: primitive.TInteger, Min: b(MinMaxBytes), Max: b(MaxBytesCeiling), Desc: "Image bytes (512 KiB); clipboard_get text bytes (1 MiB)."},
	}
	return []*primitive.Spec{
		{Tool: "ui", Operation: "screenshot", Risk: primitive.RiskUI, Inline: true, Fields: shot,
			Summary: "one of hwnd, process_id (its top window), monitor, region; image content plus {bounds (screen px), width, height, scale (image px per screen px), monitor_scale (DPI/96)}; Hearth's windows blacked out.",
			Precheck: func(raw json.RawMessage) error {
				in, err := decode[ShotInput](raw)
				if err != nil {
					return nil
				}
				return in.check()
			},
			Run: primitive.Typed(func(ctx context.Context, _ *primitive.Call, in ShotInput) (any, error) {
				return s.Screenshot(ctx, in)
			})},
		{Tool: "ui", Operation: "clipboard_get", Risk: primitive.RiskUI, Inline: true,
			Fields:  []primitive.Field{shot[len(shot)-1]},
			Summary: "the clipboard's text.",
			Precheck: func(raw json.RawMessage) error {
				if in, err := decode[ClipInput](raw); err == nil && in.MaxBytes > MaxClipboardBytes {
					return primitive.Failed("invalid_input", "ui.clipboard_get: max_bytes: at most %d (1 MiB)", MaxClipboardBytes)
				}
				return nil
			},
			Run: primitive.Typed(func(ctx context.Context, _ *primitive.Call, in ClipInput) (any, error) {
				return s.ClipboardGet(ctx, in.MaxBytes)
			})},
		{Tool: "ui", Operation: "clipboard_set", Risk: primitive.RiskUI, Inline: true,
			Fields: []primitive.Field{{Name: "text", Type: primitive.TString, Required: true,
				Desc: "Clipboard_set: text (1 MiB)."}},
			Summary: "replace the clipboard with text.",
			Precheck: func(raw json.RawMessage) error {
				in, err := decode[ClipInput](raw)
				if err != nil || in.Text == nil {
					return nil
				}
				return checkClipText(*in.Text)
			},
			Run: primitive.Typed(func(ctx context.Context, _ *primitive.Call, in ClipInput) (any, error) {
				if in.Text == nil {
					return nil, primitive.Failed("invalid_input", "ui.clipboard_set: text is required")
				}
				return s.ClipboardSet(ctx, *in.Text)
			})},
	}
}

// decode reads input for a Precheck, which sees it before validation.
func decode[T any](raw json.RawMessage) (T, error) {
	var in T
	err := json.Unmarshal(raw, &in)
	return in, err
}
