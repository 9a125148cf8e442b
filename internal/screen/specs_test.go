package screen_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/risk"
	"github.com/hearth-dev/hearth/internal/screen"
	"github.com/hearth-dev/hearth/internal/uia"
)

// TestSpecsRegisterBesideUIA: the screen primitives join the ui tool (a
// field name means one type across its operations), are governed (not
// read risk), and the two reads ask once per conversation.
func TestSpecsRegisterBesideUIA(t *testing.T) {
	specs := append((&uia.Service{}).Specs(), (&screen.Service{}).Specs()...)
	reg, err := primitive.NewRegistry(specs...)
	if err != nil {
		t.Fatal(err)
	}
	for name, kind := range map[string]risk.Kind{"ui.screenshot": risk.KindSee, "ui.clipboard_get": risk.KindSee, "ui.clipboard_set": risk.KindClipboardSet} {
		s, ok := reg.Lookup(name)
		if !ok {
			t.Fatalf("%s is not registered", name)
		}
		if got, _ := risk.KindOf(name); s.Risk == primitive.RiskRead || got != kind || !s.Inline {
			t.Errorf("%s: risk %s, risk table kind %q, inline %v", name, s.Risk, got, s.Inline)
		}
	}
}

// TestPrechecksNameTheField: input that can never run is refused before
// governance would ask the operator about it, naming the field.
func TestPrechecksNameTheField(t *testing.T) {
	reg, err := primitive.NewRegistry((&screen.Service{}).Specs()...)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ prim, input, field string }{
		{"ui.screenshot", `{"hwnd":5,"monitor":1}`, "at most one target"},
		{"ui.screenshot", `{"region":{"x":0,"y":0,"w":0,"h":5}}`, "region"},
		{"ui.screenshot", `{"quality":50}`, "quality"},
		{"ui.clipboard_get", `{"max_bytes":2097152}`, "max_bytes"},
		{"ui.clipboard_set", `{"text":"a\u0000b"}`, "text"},
		{"ui.clipboard_set", `{"text":"` + strings.Repeat("x", screen.MaxClipboardBytes+1) + `"}`, "text"},
	} {
		s, _ := reg.Lookup(c.prim)
		err := s.Precheck(json.RawMessage(c.input))
		if err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s %.60s: %v, want an error naming %s", c.prim, c.input, err, c.field)
		}
	}
	s, _ := reg.Lookup("ui.screenshot")
	if err := s.Precheck(json.RawMessage(`{"format":"jpeg","quality":50,"monitor":1}`)); err != nil {
		t.Errorf("a valid screenshot input: %v", err)
	}
}
