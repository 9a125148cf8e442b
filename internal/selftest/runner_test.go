package selftest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/selftestreport"
)

func results(t *testing.T, checks []check, scrub *selftestreport.Scrubber) map[string]selftestreport.Result {
	t.Helper()
	if scrub == nil {
		scrub = selftestreport.NewScrubber(nil, nil)
	}
	got := map[string]selftestreport.Result{}
	var order []string
	runChecks(context.Background(), checks, scrub, func(r selftestreport.Result) {
		got[r.Name] = r
		order = append(order, r.Name)
	})
	for i, c := range checks {
		if order[i] != c.name {
			t.Fatalf("results out of order: %v", order)
		}
	}
	return got
}

func ok(detail string) func(context.Context) (string, error) {
	return func(context.Context) (string, error) { return detail, nil }
}

// TestSkipRules: a SkipError skips with its reason; a dependent of a
// skipped check is skipped with the root cause, however deep; a dependent
// of a failed check is skipped saying which failed; an error or a panic is
// a FAIL; a need that is not in the list is named.
func TestSkipRules(t *testing.T) {
	ran := map[string]bool{}
	mark := func(name string, f func(context.Context) (string, error)) func(context.Context) (string, error) {
		return func(ctx context.Context) (string, error) { ran[name] = true; return f(ctx) }
	}
	got := results(t, []check{
		{name: "probe", run: mark("probe", func(context.Context) (string, error) { return "", skip("no CUIAutomation here") })},
		{name: "a", needs: []string{"probe"}, run: mark("a", ok("never"))},
		{name: "b", needs: []string{"a"}, run: mark("b", ok("never"))},
		{name: "broken", run: mark("broken", func(context.Context) (string, error) { return "", errors.New("the button was not clicked") })},
		{name: "after-broken", needs: []string{"broken"}, run: mark("after-broken", ok("never"))},
		{name: "panics", run: mark("panics", func(context.Context) (string, error) { panic("boom") })},
		{name: "fine", run: mark("fine", ok("all\nheld   here"))},
		{name: "after-fine", needs: []string{"fine"}, run: mark("after-fine", ok("ran"))},
		{name: "orphan", needs: []string{"later"}, run: mark("orphan", ok("never"))},
		{name: "later", run: ok("x")},
	}, nil)
	want := map[string]struct {
		status selftestreport.Status
		detail string
	}{
		"probe":        {selftestreport.Skipped, "no CUIAutomation here"},
		"a":            {selftestreport.Skipped, "needs probe: no CUIAutomation here"},
		"b":            {selftestreport.Skipped, "needs probe: no CUIAutomation here"},
		"broken":       {selftestreport.Fail, "the button was not clicked"},
		"after-broken": {selftestreport.Skipped, "needs broken, which failed"},
		"panics":       {selftestreport.Fail, "the check panicked: boom"},
		"fine":         {selftestreport.OK, "all held here"},
		"after-fine":   {selftestreport.OK, "ran"},
		"orphan":       {selftestreport.Skipped, "needs later, which did not run before it"},
	}
	for name, w := range want {
		if g := got[name]; g.Status != w.status || g.Detail != w.detail {
			t.Errorf("%s: %s %q, want %s %q", name, g.Status, g.Detail, w.status, w.detail)
		}
	}
	for _, name := range []string{"a", "b", "after-broken", "orphan"} {
		if ran[name] {
			t.Errorf("%s ran although a need did not pass", name)
		}
	}
	if !ran["after-fine"] {
		t.Error("a check whose needs passed did not run")
	}
}

// TestCheckDetailsAreScrubbed: what a check says passes through the
// scrubber before it is printed or reported.
func TestCheckDetailsAreScrubbed(t *testing.T) {
	s := selftestreport.NewScrubber(map[string]string{"/home/ada/tmp/hearth-selftest-1": "<selftest-temp>"}, map[string]string{"ada": "<user>"})
	got := results(t, []check{
		{name: "x", run: ok("wrote /home/ada/tmp/hearth-selftest-1/files/f.txt for ada")},
		{name: "y", run: func(context.Context) (string, error) {
			return "", errors.New("open /HOME/ADA/TMP/hearth-selftest-1/x: denied")
		}},
	}, s)
	if d := got["x"].Detail; d != "wrote <selftest-temp>/files/f.txt for <user>" {
		t.Errorf("ok detail: %q", d)
	}
	if d := got["y"].Detail; d != "open <selftest-temp>/x: denied" {
		t.Errorf("FAIL detail: %q", d)
	}
}

// TestCheckTimeout: a check that never returns is a FAIL once its
// deadline passes, and the run goes on.
func TestCheckTimeout(t *testing.T) {
	var got []selftestreport.Result
	runChecks(context.Background(), []check{
		{name: "hangs", timeout: time.Millisecond, run: func(ctx context.Context) (string, error) { <-make(chan struct{}); return "", nil }},
		{name: "next", run: ok("ran")},
	}, selftestreport.NewScrubber(nil, nil), func(r selftestreport.Result) { got = append(got, r) })
	if len(got) != 2 || got[0].Status != selftestreport.Fail || !strings.Contains(got[0].Detail, "did not finish") || got[1].Status != selftestreport.OK {
		t.Fatalf("%+v", got)
	}
}
