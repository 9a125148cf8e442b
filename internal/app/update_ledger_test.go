package app_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/app"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/internal/update"
)

// TestUpdateOutcomeIsJournaledOnce: the Hearth that starts after an
// update writes what became of it (here a rollback) into the ledger, and
// a second start does not write it again.
func TestUpdateOutcomeIsJournaledOnce(t *testing.T) {
	home := t.TempDir()
	o := update.Outcome{From: "1.3.0", To: "1.4.0", When: time.Now().UTC(), Result: update.ResultRolledBack, Plain: "went back", Detail: "not healthy within 60s"}
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(update.Dir(home), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(update.Dir(home), "outcome.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	only := ledger.KindFilter{Kinds: []string{app.KindUpdateOutcome}}
	var in *hearthtest.Instance
	for start := 1; start <= 2; start++ {
		if in != nil {
			in.Stop()
		}
		in = hearthtest.StartHome(t, home, nil)
		n, err := in.App.Ledger.Count(context.Background(), only)
		if err != nil || n != 1 {
			t.Fatalf("start %d: %d update_outcome entries (%v), want 1", start, n, err)
		}
	}
	es, err := in.App.Ledger.Newest(context.Background(), only, 1, 0)
	if err != nil || len(es) != 1 {
		t.Fatalf("newest: %v %v", es, err)
	}
	if d := string(es[0].Data); !strings.Contains(d, `"result":"rolled-back"`) || !strings.Contains(d, `"to":"1.4.0"`) {
		t.Fatalf("entry %s", d)
	}
}
