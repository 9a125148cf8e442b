package primitive_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/store"
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
	var pages int
	if err := db.W.QueryRow("PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := db.W.Exec("PRAGMA max_page_count = " + strconv.Itoa(pages)); err != nil {
		t.Fatal(err)
	}
	werr := db.InTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO store_probe(b) VALUES (zeroblob(1000000))`)
		return err
	})
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
