package web_test

import (
	"context"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/hearth-dev/hearth/internal/hearthtest"
)

var (
	ledgerSeq  = regexp.MustCompile(`data-testid="ledger-entry" data-seq="(\d+)"`)
	ledgerKind = regexp.MustCompile(`data-testid="ledger-kind">([^<]+)<`)
)

// ledgerPage returns the sequence numbers and kinds a Ledger page lists.
func ledgerPage(t *testing.T, f *fixture, b *browser, query string) (seqs []int64, kinds []string) {
	t.Helper()
	page := f.get(t, b, "/ledger"+query)
	for _, m := range ledgerSeq.FindAllStringSubmatch(page, -1) {
		n, _ := strconv.ParseInt(m[1], 10, 64)
		seqs = append(seqs, n)
	}
	for _, m := range ledgerKind.FindAllStringSubmatch(page, -1) {
		kinds = append(kinds, m[1])
	}
	if len(kinds) != len(seqs) {
		t.Fatalf("/ledger%s: %d entries but %d kinds", query, len(seqs), len(kinds))
	}
	return seqs, kinds
}

// TestLedgerPagesAndFilter runs the Ledger page's paging and filter over a
// real ledger: a page holds 25 entries, newest first; the next page
// continues where it ended, without overlap; "decisions" lists only the
// operator's entries, all of them, and "calls" none of them.
func TestLedgerPagesAndFilter(t *testing.T) {
	f := newFixture(t, hearthtest.Trusted)
	b := f.login(t)
	c := hearthtest.Connect(t, f.in.URL, "conv-ledger-pages")
	for i := range 3 {
		if r := f.post(t, b, "/safety/estop", "operator", "Ann", "reason", "test "+strconv.Itoa(i)); r.StatusCode != http.StatusSeeOther {
			t.Fatalf("estop: %d", r.StatusCode)
		}
		if err := f.in.App.Operator.Reset(context.Background(), "Ann"); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; ; i++ {
		n, err := f.in.App.Ledger.Size(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n > 40 {
			break
		}
		if i > 200 {
			t.Fatalf("the ledger holds only %d entries after %d calls", n, i)
		}
		c.Call("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{"entry", strconv.Itoa(i)}})
	}
	size, _ := f.in.App.Ledger.Size(context.Background())

	first, _ := ledgerPage(t, f, b, "")
	second, _ := ledgerPage(t, f, b, "?page=2")
	if len(first) != 25 || len(second) == 0 {
		t.Fatalf("pages of %d and %d entries (ledger %d)", len(first), len(second), size)
	}
	all := append(append([]int64{}, first...), second...)
	if !slices.IsSortedFunc(all, func(a, b int64) int { return int(b - a) }) || slices.Contains(first, second[0]) {
		t.Errorf("pages not newest first or overlapping: %v then %v", first, second)
	}
	if all[0] != size {
		t.Errorf("the first page starts at %d, not at the newest entry %d", all[0], size)
	}
	last, _ := ledgerPage(t, f, b, "?page="+strconv.FormatInt((size+24)/25, 10))
	if p, _ := ledgerPage(t, f, b, "?page=99"); len(p) == 0 || !slices.Equal(p, last) {
		t.Errorf("a page past the end shows %v, not the last page %v", p, last)
	}

	decisionKinds := map[string]bool{"estop": true, "reset": true}
	_, kinds := ledgerPage(t, f, b, "?show=decisions")
	if len(kinds) != 6 {
		t.Errorf("decisions: %d entries %v, want the 3 e-stops and 3 resets", len(kinds), kinds)
	}
	for _, k := range kinds {
		if !decisionKinds[k] {
			t.Errorf("decisions lists a %s entry", k)
		}
	}
	_, kinds = ledgerPage(t, f, b, "?show=calls")
	if len(kinds) == 0 {
		t.Error("calls lists nothing")
	}
	for _, k := range kinds {
		if decisionKinds[k] {
			t.Errorf("calls lists a %s entry", k)
		}
	}
}
