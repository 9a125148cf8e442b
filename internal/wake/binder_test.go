//go:build !windows

package wake

import (
	"context"
	"slices"
	"testing"
	"time"
)

// TestBinderFakeChatGPT covers the binder against the fake ChatGPT page
// in real headless Chromium over the pipe: a nonce binds its one tab, a
// nonce in two tabs binds neither, a tab on another origin is never read,
// and a binding follows its conversation across a reload, a navigation
// away and back in a new tab, and a restart of Hearth.
func TestBinderFakeChatGPT(t *testing.T) {
	fake := NewFakeChatGPT(t)
	dir := t.TempDir()
	r := newRig(t, dir, false, fastSettings(), fake)
	r.open()

	t.Run("opening an open window brings ChatGPT forward", func(t *testing.T) {
		r.t = t
		ctx := context.Background()
		pid := BrowserPidForTest(r.svc)
		before, err := PageCountForTest(ctx, r.svc)
		if err != nil {
			t.Fatal(err)
		}
		// No ChatGPT tab yet: a second open opens one.
		r.open()
		if n, _ := PageCountForTest(ctx, r.svc); n != before+1 || BrowserPidForTest(r.svc) != pid {
			t.Fatalf("pages %d → %d, browser %d → %d", before, n, pid, BrowserPidForTest(r.svc))
		}
		r.tab(fake.URL("front"))
		// A ChatGPT tab exists: it is brought forward, nothing opens.
		r.open()
		if n, _ := PageCountForTest(ctx, r.svc); n != before+2 {
			t.Fatalf("pages %d after opening with a ChatGPT tab, want %d", n, before+2)
		}
	})

	t.Run("bind by nonce", func(t *testing.T) {
		r.t = t
		target := r.bindConv(fake, "conv-a", "r:aaaa")
		b, _ := r.binding("r:aaaa")
		if b.TargetID != target || b.ConvURL != fake.URL("conv-a") {
			t.Fatalf("binding %+v, want target %s url %s", b, target, fake.URL("conv-a"))
		}
		if _, _, ok := r.svc.RouteProbe("r:aaaa"); ok {
			t.Fatal("a bound conversation still gets route probes")
		}
		binds := r.entries(KindBind)
		if len(binds) != 1 || binds[0]["route"] != "r:aaaa" || binds[0]["target_id"] != target || len(binds[0]) != 2 {
			t.Fatalf("journaled binds %v", binds)
		}
		var n int
		var route, tgt, url string
		if err := r.db.R.QueryRow(`SELECT COUNT(*), MAX(route), MAX(target_id), MAX(conv_url) FROM wake_bindings`).Scan(&n, &route, &tgt, &url); err != nil {
			t.Fatal(err)
		}
		if n != 1 || route != "r:aaaa" || tgt != target || url != fake.URL("conv-a") {
			t.Fatalf("stored %d %s %s %s", n, route, tgt, url)
		}
	})

	t.Run("a nonce in two tabs binds neither", func(t *testing.T) {
		r.t = t
		HoldScansForTest(r.svc, true)
		t1, t2 := r.tab(fake.URL("conv-b")), r.tab(fake.URL("conv-c"))
		nonce, _, _ := r.svc.RouteProbe("r:bbbb")
		fake.Show("conv-b", "tool", "pending "+nonce)
		fake.Show("conv-c", "assistant", "I was asked to repeat "+nonce)
		for _, tgt := range []string{t1, t2} {
			waitFor(t, "the nonce rendered", func() bool {
				ns, _ := ReadTabForTest(context.Background(), r.svc, tgt)
				return slices.Contains(ns, nonce)
			})
		}
		before := r.svc.Stats().Ambiguous
		HoldScansForTest(r.svc, false)
		waitFor(t, "both tabs read with the nonce", func() bool { return r.svc.Stats().Ambiguous >= before+2 })
		if _, ok := r.binding("r:bbbb"); ok {
			t.Fatal("a nonce shown in two tabs bound one of them")
		}
		st := r.svc.Stats()
		if st.PageReads[t1] == 0 || st.PageReads[t2] == 0 {
			t.Fatalf("page reads %v", st.PageReads)
		}
		// Once only one tab shows it, it binds.
		fake.Clear("conv-c")
		waitFor(t, "binding after one tab dropped it", func() bool { b, ok := r.binding("r:bbbb"); return ok && b.TargetID == t1 })
	})

	t.Run("a tab on another origin is never read", func(t *testing.T) {
		r.t = t
		other := NewFakeChatGPT(t) // same page, another loopback port: another origin
		foreign := r.tab(other.URL("conv-x"))
		nonce, _, _ := r.svc.RouteProbe("r:cccc")
		other.Show("conv-x", "tool", "pending "+nonce)
		mine := r.tab(fake.URL("conv-d"))
		fake.Show("conv-d", "tool", "pending "+nonce)
		// Had the foreign tab been read, the nonce would be in two tabs
		// and bind neither.
		waitFor(t, "binding on the allowed origin", func() bool { b, ok := r.binding("r:cccc"); return ok && b.TargetID == mine })
		if n := r.svc.Stats().PageReads[foreign]; n != 0 {
			t.Fatalf("the tab on another origin was read %d times", n)
		}
	})

	t.Run("a binding survives a reload and follows its conversation to a new tab", func(t *testing.T) {
		r.t = t
		b, _ := r.binding("r:aaaa")
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := PageForTest(ctx, r.svc, b.TargetID, "Page.reload", map[string]any{}); err != nil {
			t.Fatal(err)
		}
		if err := PageForTest(ctx, r.svc, b.TargetID, "Page.navigate", map[string]any{"url": fake.URL("elsewhere")}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "binding no longer live", func() bool { nb, _ := r.binding("r:aaaa"); return !nb.Live })
		newTab := r.tab(fake.URL("conv-a"))
		waitFor(t, "binding followed to the new tab", func() bool { nb, _ := r.binding("r:aaaa"); return nb.Live && nb.TargetID == newTab })
		doc, err := EvalForTest(ctx, r.svc, newTab, "performance.timeOrigin")
		if err != nil {
			t.Fatal(err)
		}
		if err := PageForTest(ctx, r.svc, newTab, "Page.reload", map[string]any{}); err != nil {
			t.Fatal(err)
		}
		// While the page reloads its target may briefly show no URL; once
		// the new document shows the conversation, the same target is bound
		// and live.
		waitFor(t, "the binding live on the reloaded page", func() bool {
			now, err := EvalForTest(ctx, r.svc, newTab, "performance.timeOrigin")
			if err != nil || now == doc {
				return false
			}
			ns, err := ReadTabForTest(ctx, r.svc, newTab)
			nb, _ := r.binding("r:aaaa")
			return err == nil && len(ns) == 1 && nb.Live && nb.TargetID == newTab
		})
	})

	t.Run("a binding survives a restart of Hearth", func(t *testing.T) {
		r.t = t
		before := r.svc.Bindings()
		r.stop()
		r2 := newRig(t, dir, false, fastSettings(), fake)
		got := r2.svc.Bindings()
		if len(got) != len(before) {
			t.Fatalf("after restart %d bindings, want %d", len(got), len(before))
		}
		for _, b := range got {
			if b.Live {
				t.Fatalf("binding %s live before the window opened", b.Route)
			}
		}
		r2.open()
		tab := r2.tab(fake.URL("conv-a"))
		waitFor(t, "binding followed after restart", func() bool { b, _ := r2.binding("r:aaaa"); return b.Live && b.TargetID == tab })
		follows := slices.IndexFunc(r2.entries(KindBind), func(m map[string]any) bool { return m["target_id"] == tab && m["followed"] == true })
		if follows < 0 {
			t.Fatalf("the follow after restart was not journaled: %v", r2.entries(KindBind))
		}
		r = r2
	})
}

// passesAny waits for n more loop passes of any kind.
func (r *rig) passesAny(n int) {
	r.t.Helper()
	start := r.svc.Stats().Steps
	waitFor(r.t, "loop passes", func() bool {
		PokeForTest(r.svc)
		return r.svc.Stats().Steps >= start+n
	})
}
