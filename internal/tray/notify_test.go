package tray

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

func obs(estop bool, ids ...string) Observation {
	o := Observation{EStop: estop, EStopReason: "test"}
	for _, id := range ids {
		o.Permits = append(o.Permits, WaitingPermit{ID: id, Summary: "ChatGPT wants to run " + id})
	}
	return o
}

func TestNotifierDecides(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	type step struct {
		at    int
		obs   Observation
		want  []string // "permit:<title>|<text>" or "estop"
		label string
	}
	permit := func(title, text string) string { return "permit:" + title + "|" + text }
	one := "ChatGPT is waiting for your permission"
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"a permit is announced once", []step{
			{0, obs(false), nil, "nothing waiting"},
			{2, obs(false, "a"), []string{permit(one, "ChatGPT wants to run a Click to decide.")}, "a starts waiting"},
			{4, obs(false, "a"), nil, "a still waiting: no repeat"},
			{40, obs(false, "a"), nil, "long after: still no repeat"},
			{42, obs(false), nil, "a decided"},
		}},
		{"permits waiting at start are announced", []step{
			{0, obs(false, "a", "b"), []string{permit(one+" (2 requests)", "2 new requests, the first: ChatGPT wants to run a Click to decide.")}, "start"},
		}},
		{"a burst becomes two notices", []step{
			{0, obs(false), nil, ""},
			{2, obs(false, "a"), []string{permit(one, "ChatGPT wants to run a Click to decide.")}, "a"},
			{4, obs(false, "a", "b"), nil, "b within the debounce"},
			{6, obs(false, "a", "b", "c"), nil, "c within the debounce"},
			{12, obs(false, "a", "b", "c"), []string{permit(one+" (3 requests)", "2 new requests, the first: ChatGPT wants to run b Click to decide.")}, "debounce over"},
			{30, obs(false, "a", "b", "c", "d"), []string{permit(one, "ChatGPT wants to run d (4 requests are waiting) Click to decide.")}, "d after the debounce"},
		}},
		{"a permit decided within the debounce is not announced", []step{
			{0, obs(false, "a"), []string{permit(one, "ChatGPT wants to run a Click to decide.")}, "a"},
			{3, obs(false, "a", "b"), nil, "b within the debounce"},
			{5, obs(false, "a"), nil, "b approved at once"},
			{20, obs(false, "a"), nil, "nothing new to say"},
		}},
		{"the e-stop latching is announced once", []step{
			{0, obs(false), nil, "released"},
			{2, obs(true), []string{"estop"}, "latched"},
			{4, obs(true), nil, "still latched"},
			{6, obs(false), nil, "reset"},
			{8, obs(true), []string{"estop"}, "latched again"},
		}},
		{"an e-stop latched at start is not announced", []step{
			{0, obs(true), nil, "latched before the tray started"},
			{2, obs(true), nil, ""},
		}},
		{"e-stop and permit together", []step{
			{0, obs(false), nil, ""},
			{2, obs(true, "a"), []string{"estop", permit(one, "ChatGPT wants to run a Click to decide.")}, ""},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var n Notifier
			for _, s := range tc.steps {
				var got []string
				for _, nt := range n.Observe(at(s.at), s.obs) {
					switch nt.Kind {
					case NoticeEStop:
						if nt.Page != "/safety" || !strings.Contains(nt.Text, "Reason: test.") {
							t.Errorf("e-stop notice %+v", nt)
						}
						got = append(got, "estop")
					case NoticePermit:
						if nt.Page != "/permits" {
							t.Errorf("permit notice page %q", nt.Page)
						}
						got = append(got, permit(nt.Title, nt.Text))
					}
				}
				if strings.Join(got, "\n") != strings.Join(s.want, "\n") {
					t.Fatalf("at %ds (%s): notices\n%v\nwant\n%v", s.at, s.label, got, s.want)
				}
			}
		})
	}
}

func TestNoticeTextIsBounded(t *testing.T) {
	long := strings.Repeat("x", 500)
	var n Notifier
	nts := n.Observe(time.Now(), Observation{Permits: []WaitingPermit{{ID: "a", Summary: long}}})
	if len(nts) != 1 || len([]rune(nts[0].Text)) > maxNoticeText || len([]rune(nts[0].Title)) > 63 {
		t.Fatalf("notice %+v", nts)
	}
	s := PermitSummary(govern.Permit{Primitive: "machine.exec", Input: `{"command":"` + long + `"}`})
	if len([]rune(s)) > 30+maxSummaryPart {
		t.Fatalf("summary of %d runes", len([]rune(s)))
	}
}

func TestPermitSummary(t *testing.T) {
	for _, tc := range []struct{ prim, input, want string }{
		{"machine.exec", `{"command":"ls","args":["-la"],"cwd":"C:\\Users\\Ann\\src"}`, `ChatGPT wants to run ls -la in C:\Users\Ann\src`},
		{"machine.exec", `{"command":"echo"}`, "ChatGPT wants to run echo"},
		{"machine.session_start", `{"command":"python3","args":["-i"]}`, "ChatGPT wants to start python3 -i and type into it"},
		{"machine.batch", `{"commands":[{"command":"a"},{"command":"b"}]}`, "ChatGPT wants to run 2 commands"},
		{"fs.write", `{"operation":"write","path":"C:\\notes.txt"}`, `ChatGPT wants to change C:\notes.txt`},
		{"ui.action", `{}`, "ChatGPT wants to use an app on your screen"},
		{"jobs.submit", `not json`, "ChatGPT asks to use jobs.submit"},
	} {
		if got := PermitSummary(govern.Permit{Primitive: tc.prim, Input: tc.input}); got != tc.want {
			t.Errorf("%s %s: %q, want %q", tc.prim, tc.input, got, tc.want)
		}
	}
}

// TestNotificationsOfRealHearth polls a real in-process Hearth (ask mode):
// an exec call that needs a permit gives one permit notice naming the
// command, the e-stop latched by the operator gives one e-stop notice, and
// each notice's page is a signed-in login that lands there.
func TestNotificationsOfRealHearth(t *testing.T) {
	in := hearthtest.Start(t, nil)
	var mu sync.Mutex
	var shown []Notice
	clock := time.Now()
	w := NotificationsFor(hearthOf(in.App), func(nt Notice) error { mu.Lock(); defer mu.Unlock(); shown = append(shown, nt); return nil })
	w.Now = func() time.Time { return clock }
	ctx := context.Background()
	if got := w.Poll(ctx); len(got) != 0 {
		t.Fatalf("a quiet Hearth: %+v", got)
	}
	c := hearthtest.Connect(t, in.URL, "notify")
	if r := c.Call("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{"hello"}}); r.State() != "pending" {
		t.Fatalf("ask mode must park exec for a permit: %s", r.Raw)
	}
	clock = clock.Add(time.Second)
	got := w.Poll(ctx)
	if len(got) != 1 || got[0].Kind != NoticePermit || !strings.Contains(got[0].Text, "ChatGPT wants to run echo hello") {
		t.Fatalf("after a call needing a permit: %+v", got)
	}
	clock = clock.Add(time.Minute)
	if again := w.Poll(ctx); len(again) != 0 {
		t.Fatalf("the same permit again: %+v", again)
	}
	if err := in.App.Operator.EStop(ctx, "Ada", "testing the notice"); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(time.Second)
	es := w.Poll(ctx)
	if len(es) != 1 || es[0].Kind != NoticeEStop || !strings.Contains(es[0].Text, "testing the notice") {
		t.Fatalf("after the e-stop: %+v", es)
	}
	mu.Lock()
	if len(shown) != 2 {
		t.Fatalf("shown %d notices, want 2", len(shown))
	}
	mu.Unlock()

	// A click opens the notice's page, signed in.
	var browsed []string
	tr := &Tray{Hearth: hearthOf(in.App), Browse: func(u string) error { browsed = append(browsed, u); return nil }}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for i, nt := range []Notice{got[0], es[0]} {
		if err := tr.OpenPanelAt(nt.Page); err != nil {
			t.Fatal(err)
		}
		resp, err := noRedirect.Get(browsed[i])
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || loc != nt.Page || len(resp.Cookies()) == 0 {
			t.Fatalf("the %s notice's login lands on %q (%s), want %s signed in", nt.Title, loc, resp.Status, nt.Page)
		}
	}
}

// A failed read decides nothing: the permits are not "gone" and come back
// unannounced; a failing Show is retried with the next notice.
func TestNotificationsReadFailure(t *testing.T) {
	fail := errors.New("database is busy")
	var readErr error
	perms := []govern.Permit{{ID: "p1", Primitive: "machine.exec", Input: `{"command":"dir"}`}}
	var shown int
	showErr := errors.New("no notification area")
	w := &Notifications{
		Permits: func(context.Context) ([]govern.Permit, error) { return perms, readErr },
		Status:  func(context.Context) (govern.Status, error) { return govern.Status{}, nil },
		Show: func(Notice) error {
			shown++
			return showErr
		},
	}
	ctx := context.Background()
	if got := w.Poll(ctx); len(got) != 1 || shown != 1 {
		t.Fatalf("first poll: %+v, shown %d", got, shown)
	}
	readErr = fail
	if got := w.Poll(ctx); got != nil {
		t.Fatalf("a failed read: %+v", got)
	}
	readErr = nil
	if got := w.Poll(ctx); len(got) != 0 {
		t.Fatalf("after the failed read the same permit came back as new: %+v", got)
	}
}
