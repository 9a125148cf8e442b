package web_test

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/config"
)

// TestChatGPTWindowPage drives the ChatGPT window page of a real Hearth:
// arming and disarming persist wake.armed in config.json and are
// journaled, timing out of range is refused naming its key, a POST
// without the CSRF token is refused, and a browser that cannot be found
// is reported without opening anything.
func TestChatGPTWindowPage(t *testing.T) {
	f := newFixture(t, func(c *config.Config) { c.Wake.BrowserPath = "/nonexistent/chrome" })
	b := f.login(t)
	page := f.get(t, b, "/chatgpt")
	for _, want := range []string{`data-testid="window-purpose"`, `data-testid="open-form"`, `data-testid="arm-button"`, `data-testid="bindings-empty"`, `data-testid="nav-chatgpt" aria-current="page"`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if f.in.App.Wake.Armed() {
		t.Fatal("wake armed by default")
	}

	if r := f.do(t, req{method: "POST", path: "/chatgpt/arm", b: b, csrf: "-", form: map[string][]string{"armed": {"true"}, "operator": {"Ada"}}}); r.StatusCode != http.StatusForbidden {
		t.Fatalf("arm without CSRF: %d", r.StatusCode)
	}
	if f.in.App.Wake.Armed() {
		t.Fatal("armed without a CSRF token")
	}

	if r := f.post(t, b, "/chatgpt/arm", "armed", "true", "operator", "Ada"); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("arm: %d %s", r.StatusCode, r.body)
	}
	if !f.in.App.Wake.Armed() {
		t.Fatal("not armed after the operator armed it")
	}
	cfg, err := config.Load(filepath.Join(f.in.Home, "config.json"))
	if err != nil || !cfg.Wake.Armed || cfg.Wake.BrowserPath != "/nonexistent/chrome" {
		t.Fatalf("config after arming: %+v %v", cfg.Wake, err)
	}
	if page := f.get(t, b, "/chatgpt"); !strings.Contains(page, `data-testid="disarm-button"`) || !strings.Contains(page, "Hearth now wakes chats") {
		t.Fatal("the page does not show wake armed")
	}
	tail, err := f.in.App.Ledger.Tail(t.Context(), 5)
	if err != nil {
		t.Fatal(err)
	}
	if last := tail[len(tail)-1]; last.Kind != "wake_armed" || !strings.Contains(string(last.Data), `"operator":"Ada"`) {
		t.Fatalf("last ledger entry %s %s", last.Kind, last.Data)
	}

	r := f.post(t, b, "/chatgpt/timings", "debounce_ms", "1000", "quiet_ms", "5000", "cooldown_ms", "60000", "max_attempts", "0", "operator", "Ada")
	if page := f.get(t, b, "/chatgpt"); r.StatusCode != http.StatusSeeOther || !strings.Contains(page, "wake.max_attempts") {
		t.Fatalf("out-of-range attempts not refused by key: %d", r.StatusCode)
	}
	if f.in.App.Wake.Settings().MaxAttempts != config.DefaultWake().MaxAttempts {
		t.Fatal("a refused timing changed the settings")
	}
	f.post(t, b, "/chatgpt/timings", "debounce_ms", "1000", "quiet_ms", "5000", "cooldown_ms", "60000", "max_attempts", "5", "operator", "Ada")
	if s := f.in.App.Wake.Settings(); s.MaxAttempts != 5 || s.Debounce.Milliseconds() != 1000 {
		t.Fatalf("settings after save: %+v", s)
	}
	if cfg, _ := config.Load(filepath.Join(f.in.Home, "config.json")); cfg.Wake.MaxAttempts != 5 || cfg.Wake.QuietMS != 5000 {
		t.Fatalf("config after save: %+v", cfg.Wake)
	}

	f.post(t, b, "/chatgpt/open", "operator", "Ada")
	page = f.get(t, b, "/chatgpt")
	if !strings.Contains(page, "did not open") || !strings.Contains(page, "/nonexistent/chrome") {
		t.Fatal("a missing browser is not reported")
	}
	if f.in.App.Wake.Window().Open {
		t.Fatal("window open without a browser")
	}

	f.post(t, b, "/chatgpt/unbind", "route", "r:nobody", "operator", "Ada")
	if page := f.get(t, b, "/chatgpt"); !strings.Contains(page, "Hearth had already forgotten that chat") {
		t.Fatal("unbinding an unbound conversation is not refused")
	}
	if r := f.post(t, b, "/chatgpt/arm", "armed", "maybe", "operator", "Ada"); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("bad armed value: %d", r.StatusCode)
	}
	if page := f.get(t, b, "/chatgpt"); !strings.Contains(page, "Choose whether Hearth wakes chats when their results are ready") || !f.in.App.Wake.Armed() {
		t.Fatal("a bad armed value was not refused")
	}
	if r := f.post(t, b, "/chatgpt/arm", "armed", "false"); r.StatusCode != http.StatusSeeOther || !f.in.App.Wake.Armed() {
		t.Fatal("disarmed without an operator name")
	}

	f.post(t, b, "/chatgpt/arm", "armed", "false", "operator", "Ada")
	if f.in.App.Wake.Armed() {
		t.Fatal("still armed after disarming")
	}
	if cfg, _ := config.Load(filepath.Join(f.in.Home, "config.json")); cfg.Wake.Armed {
		t.Fatal("config still armed")
	}
}
