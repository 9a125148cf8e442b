package ledger

import (
	"context"
	"strings"
	"testing"
	"time"

	hledger "github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/web/ui"
)

func TestLedgerView(t *testing.T) {
	v := View{Size: 7, Entries: []Entry{{Seq: 7, Time: time.Now(), Kind: "estop", Data: `{"by": "model"}`, Hash: strings.Repeat("c", 64)}},
		Verified: &Verification{Report: hledger.Report{Entries: 7, PublicKey: "hearth/x+1+key"}}}
	var b strings.Builder
	if err := Page(ui.Chrome{Title: "Ledger", CSRF: "tok"}, v).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{`data-testid="ledger-size">7<`, `data-testid="ledger-entry" data-seq="7"`, `data-testid="ledger-kind">estop<`,
		`data-testid="verify-ok"`, `data-testid="verify-entries">7<`, `data-testid="verify-key">hearth/x+1+key<`,
		`action="/ledger/verify"`, `action="/ledger/export"`, `data-testid="export-button"`} {
		if !strings.Contains(html, want) {
			t.Errorf("missing %q", want)
		}
	}
	b.Reset()
	v.Verified = &Verification{Failure: "entry seq 3: prev hash mismatch"}
	if err := Report(*v.Verified).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `data-testid="verify-failed"`) || !strings.Contains(b.String(), "seq 3") {
		t.Errorf("failure: %s", b.String())
	}
}
