package web_test

import (
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/config"
)

// TestStatusPageDisclosesAnyAccount: the real panel's Status page (and its
// live fragment) says that every account reaches Hearth while
// loopback_same_user is false, and nothing about it by default.
func TestStatusPageDisclosesAnyAccount(t *testing.T) {
	const notice = `data-testid="status-any-account"`
	off := newFixture(t, func(c *config.Config) { c.LoopbackSameUser = false })
	if page := off.get(t, off.login(t), "/"); !strings.Contains(page, notice) || !strings.Contains(page, "loopback_same_user") {
		t.Errorf("loopback_same_user false: the Status page does not say so:\n%s", page)
	}
	on := newFixture(t, nil)
	if page := on.get(t, on.login(t), "/"); strings.Contains(page, notice) {
		t.Errorf("loopback_same_user true: the Status page warns anyway:\n%s", page)
	}
}
