package primitive_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/primitive"
)

// TestAsErrorKeepsGoTextOutOfTheMessage: an error that is not a
// primitive.Error (Hearth failing inside) answers code internal with a
// message of Hearth's words; its own text is only in
// details.system_error. A primitive.Error passes as it is.
func TestAsErrorKeepsGoTextOutOfTheMessage(t *testing.T) {
	_, osErr := os.Open("/hearth/no/such/file")
	err := fmt.Errorf("read the settings: %w", osErr)
	pe := primitive.AsError(err)
	if pe.Code != "internal" || pe.State != primitive.StateFailed {
		t.Fatalf("code %q state %q", pe.Code, pe.State)
	}
	if strings.Contains(pe.Message, osErr.Error()) || strings.Contains(pe.Message, "no such file") {
		t.Fatalf("the system's text is in the message: %q", pe.Message)
	}
	if pe.Details["system_error"] != err.Error() {
		t.Fatalf("details.system_error: %v", pe.Details)
	}
	own := primitive.Failed("not_found", "fs.read: %q does not exist", "/x")
	if got := primitive.AsError(fmt.Errorf("wrapped: %w", own)); got != own {
		t.Fatalf("a primitive.Error must pass as it is: %+v", got)
	}
}
