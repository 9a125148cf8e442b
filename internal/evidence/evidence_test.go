package evidence

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/hearth-dev/hearth/internal/artifacts"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/govern/governtest"
	"github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/internal/startup/startuptest"
	"github.com/hearth-dev/hearth/internal/store"
)

const (
	routeA = "r:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	routeB = "r:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

type fixture struct {
	db  *store.DB
	gov *govern.Governor
	led *ledger.Ledger
	art *artifacts.Store
}

func newFixture(t *testing.T) *fixture { return newFixtureTB(t) }

func newFixtureTB(t testing.TB) *fixture {
	t.Helper()
	dir := t.TempDir()
	db, err := store.Open(context.Background(), filepath.Join(dir, "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	skey, _, err := note.GenerateKey(nil, "hearth/evidence-test")
	if err != nil {
		t.Fatal(err)
	}
	led, err := ledger.Open(db, skey)
	if err != nil {
		t.Fatal(err)
	}
	futures, err := dispatch.NewFutureReader(db)
	if err != nil {
		t.Fatal(err)
	}
	gov, err := govern.New(govern.Options{DB: db, Ledger: led, Futures: futures, Startup: startuptest.Index(t), DefaultMode: config.ModeAsk, PermitTTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{db: db, gov: gov, led: led, art: &artifacts.Store{DB: db, Dir: filepath.Join(dir, "artifacts")}}
}

func (f *fixture) service(t *testing.T, lim Limits) *Service {
	t.Helper()
	s, err := New(f.gov, f.led, f.art, lim)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// command records a command of route, as the governor does: its row and
// its intent and outcome entries (the outcome names only the command).
func (f *fixture) command(t testing.TB, route, id string, at int64) {
	t.Helper()
	ctx := context.Background()
	governtest.InsertCommand(t, f.db.W, governtest.Command{ID: id, Route: route, Primitive: "fs.write", InputSHA256: "digest", FutureID: "fut_x",
		State: "completed", Envelope: `{"state":"completed"}`, CreatedAt: at, FinishedAt: at + 1})
	if _, err := f.led.Append(ctx, ledger.KindIntent, map[string]any{"command_id": id, "route": route, "primitive": "fs.write"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.led.Append(ctx, ledger.KindOutcome, map[string]any{"command_id": id, "outcome": "receipt"}); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) permit(t *testing.T, route, id string, at int64) {
	t.Helper()
	ctx := context.Background()
	governtest.InsertPermits(t, f.db.W, governtest.Permit{ID: id, Route: route, Primitive: "machine.exec", Input: `{"command":"echo"}`, InputSHA256: "digest",
		FutureID: "fut_p", CommandID: "cmd_p", State: "pending", CreatedAt: at, ExpiresAt: at + 1000})
	if _, err := f.led.Append(ctx, ledger.KindPermitApproved, map[string]any{"permit_id": id, "operator": "alice"}); err != nil {
		t.Fatal(err)
	}
}

// TestListPagesEverySection: with a page size of 3, a conversation's
// evidence, receipts, permits and artifacts come in pages of at most 3,
// each once, in order, and another conversation's never.
func TestListPagesEverySection(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for i := range 4 {
		f.command(t, routeA, fmt.Sprintf("cmd_a%d", i), int64(100+i/2)) // equal times too
		f.command(t, routeB, fmt.Sprintf("cmd_b%d", i), int64(100+i))
	}
	f.permit(t, routeA, "pmt_a0", 50)
	f.permit(t, routeB, "pmt_b0", 50)
	var arts []string
	for range 3 {
		m, err := f.art.Put(ctx, routeA, "a.txt", "text/plain", "test", []byte("x"), false)
		if err != nil {
			t.Fatal(err)
		}
		arts = append(arts, m.ID)
	}
	if _, err := f.art.Put(ctx, routeB, "b.txt", "text/plain", "test", []byte("x"), false); err != nil {
		t.Fatal(err)
	}
	s := f.service(t, Limits{PageSize: 3})
	var got []string
	cur := ""
	for page := 0; ; page++ {
		if page > 10 {
			t.Fatal("paging does not end")
		}
		rs, next, err := s.List(ctx, routeA, cur)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) > 3 || len(rs) == 0 {
			t.Fatalf("page %d has %d resources, want 1..3", page, len(rs))
		}
		for _, r := range rs {
			got = append(got, r.URI)
		}
		if cur = next; cur == "" {
			break
		}
	}
	want := []string{EvidenceURI(routeA, 0),
		"hearth://receipts/cmd_a2", "hearth://receipts/cmd_a3", "hearth://receipts/cmd_a0", "hearth://receipts/cmd_a1",
		"hearth://permits/pmt_a0"}
	// Artifacts: newest first; made within the same millisecond or not.
	all, err := f.art.In(routeA).Page(ctx, artifacts.PageKey{}, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range all {
		want = append(want, "hearth://artifacts/"+m.ID)
	}
	if len(all) != len(arts) || !slices.Equal(got, want) {
		t.Fatalf("listed\n%v\nwant\n%v", got, want)
	}
	// Without the page size the whole list is one page.
	one, next, err := f.service(t, Limits{}).List(ctx, routeA, "")
	if err != nil || next != "" || len(one) != len(want) {
		t.Fatalf("default page: %d resources, next %q, %v", len(one), next, err)
	}
}

func TestListRefusesForeignCursor(t *testing.T) {
	f := newFixture(t)
	s := f.service(t, Limits{})
	for _, c := range []string{"!!", "bm9wZQ", "eyJzIjo5LCJpZCI6IngifQ" /* {"s":9,"id":"x"} */, "eyJzIjoxfQ" /* {"s":1} without id */} {
		_, _, err := s.List(context.Background(), routeA, c)
		var bad *BadRequestError
		if err == nil || !strings.Contains(err.Error(), "cursor") || !asBad(err, &bad) {
			t.Errorf("cursor %q: %v, want a bad request naming the cursor", c, err)
		}
	}
}

func asBad(err error, bad **BadRequestError) bool {
	b, ok := err.(*BadRequestError)
	*bad = b
	return ok
}

// TestEvidencePartsBounded: with BundleEntries 3, a conversation's 8
// entries come in parts of at most 3; with ScanEntries 5, in parts that
// each look at 5 of the ledger's 16; each part verifies alone, they are
// chained by hearth/next, and together they are exactly its entries.
func TestEvidencePartsBounded(t *testing.T) {
	f := newFixture(t)
	for i := range 4 {
		f.command(t, routeA, fmt.Sprintf("cmd_a%d", i), int64(i))
		f.command(t, routeB, fmt.Sprintf("cmd_b%d", i), int64(i))
	}
	for _, tc := range []struct {
		lim   Limits
		parts int
	}{
		{Limits{BundleEntries: 3}, 3},
		// 16 entries, looked at 5 at a time: parts end at 5, 10, 15, 16.
		{Limits{ScanEntries: 5}, 4},
	} {
		s := f.service(t, tc.lim)
		parts, entries := readParts(t, s, f.led.PublicKey())
		if parts != tc.parts || entries != 8 {
			t.Errorf("%+v: %d parts with %d entries, want %d parts with a's 8", tc.lim, parts, entries, tc.parts)
		}
	}
}

// readParts reads routeA's evidence part after part, checking each.
func readParts(t *testing.T, s *Service, vkey string) (parts, entries int) {
	t.Helper()
	ctx := context.Background()
	uri := EvidenceURI(routeA, 0)
	for uri != "" {
		if parts++; parts > 10 {
			t.Fatal("too many parts")
		}
		c, err := s.Read(ctx, routeA, uri)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := ledger.VerifyBundle(strings.NewReader(c.Text), ledger.ExpectKey(vkey))
		if err != nil {
			t.Fatalf("part %d: %v", parts, err)
		}
		if rep.Entries > 3 || strings.Contains(c.Text, "cmd_b") {
			t.Fatalf("part %d: %d entries (limit 3), or b's: %s", parts, rep.Entries, c.Text)
		}
		entries += int(rep.Entries)
		uri, _ = c.Meta["hearth/next"].(string)
	}
	return parts, entries
}

// TestReadScoped: receipts, permits and evidence of another conversation
// are ErrNotFound, as are malformed URIs; query parameters are checked.
func TestReadScoped(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.command(t, routeA, "cmd_a", 1)
	f.permit(t, routeA, "pmt_a", 1)
	s := f.service(t, Limits{})
	for _, u := range []string{"hearth://receipts/cmd_a", "hearth://permits/pmt_a", EvidenceURI(routeA, 0)} {
		if _, err := s.Read(ctx, routeA, u); err != nil {
			t.Errorf("%s in a: %v", u, err)
		}
		if _, err := s.Read(ctx, routeB, u); err != ErrNotFound {
			t.Errorf("%s in b: %v, want ErrNotFound", u, err)
		}
		if _, err := s.Read(ctx, "anon:req_x", u); err != ErrNotFound {
			t.Errorf("%s anonymous: %v, want ErrNotFound", u, err)
		}
	}
	for _, u := range []string{"hearth://receipts/", "hearth://receipts/cmd_a/x", "other://receipts/cmd_a", "hearth:receipts", "hearth://receipts/cmd_a#f", "hearth://conversations/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/evidence/x"} {
		if _, err := s.Read(ctx, routeA, u); err != ErrNotFound {
			t.Errorf("%s: %v, want ErrNotFound", u, err)
		}
	}
	for u, field := range map[string]string{
		"hearth://receipts/cmd_a?x=1":              `"x"`,
		EvidenceURI(routeA, 0) + "?after_seq=a":    "after_seq",
		EvidenceURI(routeA, 0) + "?after_seq=1&n=": `"n"`,
	} {
		if _, err := s.Read(ctx, routeA, u); !asBad(err, new(*BadRequestError)) || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: %v, want a bad request naming %s", u, err, field)
		}
	}
}

func TestArtifactReadBoundsAndWholeRunes(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	text := strings.Repeat("é", 10) // 20 bytes
	m, err := f.art.Put(ctx, routeA, "t.txt", "text/plain", "test", []byte(text), false)
	if err != nil {
		t.Fatal(err)
	}
	s := f.service(t, Limits{ReadBytes: 5})
	var got strings.Builder
	uri := artifactURI(m.ID, 0)
	for n := 0; uri != ""; n++ {
		if n > 10 {
			t.Fatal("no end")
		}
		c, err := s.Read(ctx, routeA, uri)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Text) > 5 || c.IsBlob {
			t.Fatalf("part %q (blob %v): more than 5 bytes or not text", c.Text, c.IsBlob)
		}
		got.WriteString(c.Text)
		uri, _ = c.Meta["hearth/next"].(string)
	}
	if got.String() != text {
		t.Fatalf("reassembled %q", got.String())
	}
	if _, err := s.Read(ctx, routeA, artifactURI(m.ID, 21)); !asBad(err, new(*BadRequestError)) {
		t.Fatalf("offset past the end: %v", err)
	}
	if _, err := s.Read(ctx, routeB, artifactURI(m.ID, 0)); err != ErrNotFound {
		t.Fatalf("another conversation's artifact: %v", err)
	}
}
