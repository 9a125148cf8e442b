package dispatch

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/artifacts"
)

// TestSpilledPayloadIsBounded: an envelope over max_result_bytes arrives
// as a short one naming its artifact, bounded whatever the error's details
// hold (a stopped or failed recipe's details carry every step's result);
// the code and message stay, and the artifact holds it all.
func TestSpilledPayloadIsBounded(t *testing.T) {
	ctx := context.Background()
	arts := &artifacts.Store{DB: openTestDB(t), Dir: filepath.Join(t.TempDir(), "artifacts")}
	a := &Arrivals{Artifacts: arts, MaxResultBytes: 1024}
	big := strings.Repeat("x", 64<<10)
	env := &Envelope{State: "cancelled", Primitive: "recipe.run", Error: &ErrorBody{Code: "cancelled",
		Message: "recipe.run was stopped (emergency stop) before it finished",
		Details: map[string]any{"steps": []any{map[string]any{"state": "completed", "result": map[string]any{"stdout": big}}}}}}
	payload := a.Payload(ctx, "route-1", "fut_spill", env)
	if len(payload) > 2048 {
		t.Fatalf("the spilled arrival is %d bytes (max_result_bytes 1024): %.300s", len(payload), payload)
	}
	var short Envelope
	if err := json.Unmarshal(payload, &short); err != nil {
		t.Fatal(err)
	}
	if short.Artifact == nil || short.Error == nil || short.Error.Code != "cancelled" || short.Error.Message != env.Error.Message || short.Error.Details != nil {
		t.Fatalf("the spilled arrival: %s", payload)
	}
	chunk, err := arts.ReadRange(ctx, short.Artifact.ID, 0, 1<<20, "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(chunk.Data, big) {
		t.Fatalf("the artifact does not hold the details (%d bytes)", len(chunk.Data))
	}
}
