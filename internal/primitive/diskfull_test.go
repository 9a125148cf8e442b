package primitive_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/store"
	"github.com/hearth-dev/hearth/internal/store/storetest"
)

// TestAsErrorSaysAFullDiskInWords: a write refused for lack of room
// (SQLite's page limit reached, as on a full disk), wrapped as the engines
// wrap it, becomes disk_full in Hearth's words with SQLite's text in
// details — not "internal".
func TestAsErrorSaysAFullDiskInWords(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	werr := storetest.FullDiskError(t, db)
	if !store.IsFull(werr) {
		t.Fatalf("the write did not fail for lack of room: %v", werr)
	}
	pe := primitive.AsError(fmt.Errorf("request permit: %w", werr))
	if pe.Code != "disk_full" || !strings.Contains(pe.Message, "disk that holds Hearth's data is full") || pe.Details["system_error"] == nil {
		t.Fatalf("AsError of a full disk: %+v", pe)
	}
	if full := db.DiskFull(ctx); !full.Full || full.Since.IsZero() {
		t.Fatalf("the store does not know the disk is full: %+v", full)
	}
}
