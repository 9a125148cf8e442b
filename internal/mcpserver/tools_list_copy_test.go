package mcpserver_test

import (
	"testing"

	"github.com/hearth-dev/hearth/internal/mcpserver"
)

// TestToolsCannotBeChanged: the served tool list is handed out as a copy.
func TestToolsCannotBeChanged(t *testing.T) {
	l := mcpserver.Tools()
	l[0].Name = "operator"
	if got := mcpserver.Tools(); got[0].Name != "machine" || len(got) != 7 {
		t.Fatalf("the tool list was changed by a caller: %+v", got)
	}
}
