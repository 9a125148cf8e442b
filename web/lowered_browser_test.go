package web_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// TestBrowserLoweredBannerIsLive: with a page open, a safety setting
// lowered elsewhere (trusted mode, switched from another session) brings
// the "Safety was lowered" banner without a reload, and marking it seen
// elsewhere takes it away, again without a reload.
func TestBrowserLoweredBannerIsLive(t *testing.T) {
	in := hearthtest.Start(t, nil)
	login, err := in.App.NewLoginURLTo("/tasks")
	if err != nil {
		t.Fatal(err)
	}
	ctx := newBrowser(t, 800, 900)
	problems := watchConsole(ctx)
	shot := screenshots(t, ctx, shotDir(t))
	eval := func(expr string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		return v
	}
	banner := `[data-testid="lowered-banner"]`
	if err := chromedp.Do(ctx, chromedp.Navigate(login), chromedp.WaitVisible(chromedp.CSS(`[data-testid="page-title"]`)), chromedp.WaitReady(chromedp.CSS(`[data-testid="lowered-slot"]`))); err != nil {
		shot("failed")
		t.Fatalf("open Tasks: %v", err)
	}
	if eval(`document.querySelector('`+banner+`') ? "yes" : "no"`) != "no" {
		t.Fatal("a lowered-safety banner with nothing lowered")
	}
	eval(`window.hearthMark = "kept"; "ok"`)

	bg := context.Background()
	if err := in.App.Operator.SetPolicy(govern.WithOrigin(bg, "tray"), "Ann", config.ModeTrusted); err != nil {
		t.Fatal(err)
	}
	if err := waitFor(ctx, `!!document.querySelector('`+banner+`')`); err != nil {
		shot("failed-no-banner")
		t.Fatalf("no banner after trusted mode was switched on elsewhere: %v", err)
	}
	shot("lowered-banner")
	if s := strings.Join(strings.Fields(eval(`document.querySelector('`+banner+`').innerText`)), " "); !strings.Contains(s, "switched to trusted mode") || !strings.Contains(s, "Ann") {
		t.Errorf("the banner says %q", s)
	}
	if eval(`window.hearthMark || ""`) != "kept" {
		t.Error("the page was reloaded to show the banner")
	}

	lowered, err := in.App.Gov.Lowered(bg)
	if err != nil || len(lowered) != 1 {
		t.Fatalf("%v %+v", err, lowered)
	}
	if err := in.App.Operator.SeenLowered(bg, "Ann", lowered[0].Seq); err != nil {
		t.Fatal(err)
	}
	if err := waitFor(ctx, `!document.querySelector('`+banner+`')`); err != nil {
		shot("failed-banner-stayed")
		t.Fatalf("the banner stayed after it was marked seen elsewhere: %v", err)
	}
	if eval(`window.hearthMark || ""`) != "kept" {
		t.Error("the page was reloaded to take the banner away")
	}
	if p := problems(); len(p) > 0 {
		t.Errorf("console problems: %v", p)
	}
}
