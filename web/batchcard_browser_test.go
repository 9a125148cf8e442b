//go:build !windows

package web_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/web/permits"
)

// batchHome is a Hearth in the default configuration (ask mode, the
// user's home as its root) over a fresh home whose Downloads holds 36
// invoices and setup.exe, and a chat that asks to move all 37 into
// Documents/Invoices; it returns the chat and the waiting permit.
func batchHome(t *testing.T) (in *hearthtest.Instance, home string, c *hearthtest.Client, p govern.Permit) {
	t.Helper()
	home = t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("XDG_DATA_HOME", "")
	in = hearthtest.Start(t, func(c *config.Config) {
		def := config.Default()
		c.Roots, c.Policy = def.Roots, def.Policy
	})
	downloads, invoices := filepath.Join(home, "Downloads"), filepath.Join(home, "Documents", "Invoices")
	if err := os.MkdirAll(downloads, 0o755); err != nil {
		t.Fatal(err)
	}
	var items []any
	for i := range 36 {
		f := filepath.Join(downloads, fmt.Sprintf("invoice %02d.pdf", i))
		if err := os.WriteFile(f, fmt.Appendf(nil, "%%PDF-1.4\n%% invoice %d\n", i), 0o644); err != nil {
			t.Fatal(err)
		}
		items = append(items, map[string]any{"from": f, "to": invoices})
	}
	setup := filepath.Join(downloads, "setup.exe")
	if err := os.WriteFile(setup, []byte("MZ\x90\x00\x03\x00\x00\x00 a program"), 0o644); err != nil {
		t.Fatal(err)
	}
	items = append(items, map[string]any{"from": setup, "to": invoices})
	c = hearthtest.Connect(t, in.URL, "batch-card")
	if r := c.Call("fs", map[string]any{"operation": "move", "items": items}); r.State() != "pending" || r.Get("permit_id") == nil {
		t.Fatalf("the batch with a program does not ask: %s", r.Raw)
	}
	ps, err := in.App.Operator.Permits(t.Context(), "pending")
	if err != nil || len(ps) != 1 {
		t.Fatalf("pending permits %+v %v", ps, err)
	}
	return in, home, c, ps[0]
}

// batchSentence is the card's sentence of batchHome's call, with this
// system's separator.
var batchSentence = "move 37 files from Downloads to " + filepath.Join("Documents", "Invoices") + ", including setup.exe"

// TestBatchCardSentence: governance's permit of a batch that carries a
// program among 36 documents gives its card exactly one sentence, naming
// the program, and the Permits page says it on the card's main line in
// plain words, as does the waiting banner on the other pages.
func TestBatchCardSentence(t *testing.T) {
	in, _, _, p := batchHome(t)
	it := permits.NewItem(p)
	if it.Batch == nil || it.Batch.Sentence != batchSentence {
		t.Fatalf("the card's sentence is %+v, want %q", it.Batch, batchSentence)
	}
	if it.Batch.Why != "setup.exe: it would "+p.Said+"." || it.Batch.Asking != 1 || len(it.Batch.Items) != 37 {
		t.Fatalf("the card says why %q, %d of %d items ask", it.Batch.Why, it.Batch.Asking, len(it.Batch.Items))
	}
	if got := permits.Words(p); got != batchSentence {
		t.Fatalf("the banner and the answers say %q", got)
	}
	f := fixtureOf(t, in)
	page := f.get(t, f.login(t), "/permits")
	head, _, _ := strings.Cut(page[strings.Index(page, `data-testid="permit-summary"`):], "</h3>")
	if got := strings.Join(strings.Fields(mainText("<h3 "+head+"</h3>")), " "); !strings.HasSuffix(got, "ChatGPT wants to "+batchSentence) {
		t.Fatalf("the card's headline is %q", got)
	}
	checkPlain(t, "a batch waiting: /permits", page)
	status := f.get(t, f.login(t), "/")
	if got := strings.Join(strings.Fields(mainText(status)), " "); !strings.Contains(got, "ChatGPT is waiting for you: it wants to "+batchSentence+" ") {
		t.Errorf("the waiting banner on Status does not say the batch in its sentence:\n%s", got)
	}
	checkPlain(t, "a batch waiting: /", status)
}

// TestBrowserBatchCard: in headless Chromium over a real Hearth, the
// card of a batch move says it in one sentence on its main line, why it
// asks below it, and every item — from where to where, the one that asks
// with why — only under Details; Allow once moves all 37 and says so in
// the same words.
func TestBrowserBatchCard(t *testing.T) {
	chromium(t)
	in, home, c, p := batchHome(t)
	card := `[data-permit-id="` + p.ID + `"]`
	b := openTab(t, in, "batch-card", "/permits", chromedp.WaitVisible(chromedp.CSS(card+` [data-testid="permit-summary"]`)))
	b.shot("card")
	visible := func(sel string) string {
		return b.eval(`(function () { var e = document.querySelector('` + sel + `'); return e && e.checkVisibility() ? e.innerText.replace(/\s+/g, " ").trim() : "(hidden)"; })()`)
	}
	if got := visible(card + ` [data-testid="permit-summary"]`); got != "ChatGPT wants to "+batchSentence {
		t.Errorf("the card's main line says %q", got)
	}
	if got := visible(card + ` [data-testid="permit-why"]`); got != "Hearth asks because of setup.exe: it would "+p.Said+"." {
		t.Errorf("the card says why it asks: %q", got)
	}
	if got := visible(card + ` [data-testid="permit-items"]`); got != "(hidden)" {
		t.Errorf("the list of items shows before Details is opened: %q", got)
	}
	b.run("open Details", chromedp.Click(chromedp.CSS(card+` [data-testid="permit-details"] > summary`)), chromedp.WaitVisible(chromedp.CSS(card+` [data-testid="permit-items"]`)))
	b.shot("details")
	if n := b.eval(`String(document.querySelectorAll('` + card + ` [data-testid="permit-item"]').length)`); n != "37" {
		t.Errorf("Details lists %s items, want 37", n)
	}
	asks := b.eval(`Array.from(document.querySelectorAll('` + card + ` [data-testid="permit-item"][data-asks="true"]')).map(function (e) { return e.innerText.replace(/\s+/g, " ").trim(); }).join(" | ")`)
	downloads, invoices := filepath.Join(home, "Downloads"), filepath.Join(home, "Documents", "Invoices")
	if want := filepath.Join(downloads, "setup.exe") + " → " + filepath.Join(invoices, "setup.exe") + " asks: it would " + p.Said; asks != want {
		t.Errorf("Details names as asking %q, want %q", asks, want)
	}
	if first := visible(card + ` [data-testid="permit-item"]`); first != filepath.Join(downloads, "invoice 00.pdf")+" → "+filepath.Join(invoices, "invoice 00.pdf") {
		t.Errorf("Details' first item says %q", first)
	}

	b.run("allow once", chromedp.Click(chromedp.CSS(card+` [data-testid="approve-once"]`)))
	b.waitFor("the answer to Allow once", `!!document.querySelector('#permits-live [data-testid="flash"]')`)
	if got := b.eval(`document.querySelector('#permits-live [data-testid="flash"]').textContent`); !strings.Contains(got, "Hearth will "+batchSentence+", and ChatGPT") {
		t.Errorf("Allow once answers %q", got)
	}
	if env := await(t, c, p.FutureID); hearthtest.Get(env, "result.status") != "completed" || hearthtest.Get(env, "result.done") != float64(37) {
		t.Fatalf("allowed, the batch ended %v", env)
	}
	if des, _ := os.ReadDir(downloads); len(des) != 0 {
		t.Errorf("Downloads still holds %d entries after Allow once", len(des))
	}
	b.checkConsole()
}
