package web_test

import (
	"net/http"
	"testing"

	"github.com/hearth-dev/hearth/internal/config"
)

// TestPlainLanguageChatGPTWindow: the ChatGPT window page, the one page
// of the navigation TestPlainLanguage does not render, keeps banned words
// behind "Details" too, disarmed and armed.
func TestPlainLanguageChatGPTWindow(t *testing.T) {
	f := newFixture(t, func(c *config.Config) { c.Wake.BrowserPath = "/nonexistent/chrome" })
	b := f.login(t)
	checkPlain(t, "disarmed: /chatgpt", f.get(t, b, "/chatgpt"))
	if r := f.post(t, b, "/chatgpt/arm", "armed", "true", "operator", "Ann"); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("arm: %d %s", r.StatusCode, r.body)
	}
	checkPlain(t, "armed: /chatgpt", f.get(t, b, "/chatgpt"))
	f.post(t, b, "/chatgpt/open", "operator", "Ann")
	checkPlain(t, "no browser found: /chatgpt", f.get(t, b, "/chatgpt"))
}
