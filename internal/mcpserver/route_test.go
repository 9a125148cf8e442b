package mcpserver_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/mcpserver"
)

// TestRouteIsStable: a conversation's route is stored with its mailbox
// and futures, so it must stay what it has been: "r:" and the first half
// of the SHA-256 of the key, a NUL and the id, in hex; a ChatGPT session
// before Hearth's own conversation id; no id, an anonymous route.
func TestRouteIsStable(t *testing.T) {
	want := func(k, id string) string {
		sum := sha256.Sum256([]byte(k + "\x00" + id))
		return "r:" + hex.EncodeToString(sum[:16])
	}
	long := strings.Repeat("é", 200)
	for _, tc := range []struct {
		meta map[string]any
		want string
	}{
		{map[string]any{"hearth/conversation": "bench"}, want("hearth/conversation", "bench")},
		{map[string]any{"hearth/conversation": long}, want("hearth/conversation", long)},
		{map[string]any{"hearth/conversation": "c", "openai/session": "s"}, want("openai/session", "s")},
		{map[string]any{"hearth/conversation": "c", "openai/session": ""}, want("hearth/conversation", "c")},
		{map[string]any{"hearth/conversation": 42.0}, want("hearth/conversation", "42")},
	} {
		if got := mcpserver.Route(tc.meta); got != tc.want {
			t.Errorf("Route(%v) = %s, want %s", tc.meta, got, tc.want)
		}
	}
	if got := mcpserver.Route(nil); !strings.HasPrefix(got, dispatch.AnonymousPrefix) {
		t.Errorf("Route(nil) = %s", got)
	}
}
