package setup

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/tunnel"
	"github.com/hearth-dev/hearth/web/session"
)

var (
	detailsRe = regexp.MustCompile(`(?s)<details.*?</details>`)
	buttonRe  = regexp.MustCompile(`<(button|a class="button")[^>]*>`)
)

// primaries counts the primary buttons outside Details (a button without
// the secondary or danger class, or a link styled as a button).
func primaries(html string) int {
	n := 0
	for _, b := range buttonRe.FindAllString(detailsRe.ReplaceAllString(html, ""), -1) {
		if !strings.Contains(b, "secondary") && !strings.Contains(b, "danger") {
			n++
		}
	}
	return n
}

// primaryStep names the step whose card holds the first primary button
// outside Details (the last step card opened before it): "" when there is
// no primary button, "(none)" when it comes before every step's card.
func primaryStep(html string) string {
	html = detailsRe.ReplaceAllString(html, "")
	for _, loc := range buttonRe.FindAllStringIndex(html, -1) {
		b := html[loc[0]:loc[1]]
		if strings.Contains(b, "secondary") || strings.Contains(b, "danger") {
			continue
		}
		const mark = ` id="step-`
		i := strings.LastIndex(html[:loc[0]], mark)
		if i < 0 {
			return "(none)"
		}
		name, _, _ := strings.Cut(html[i+len(mark):], `"`)
		return name
	}
	return ""
}

// TestGuidedSteps: each state of setup has its steps done, current or
// waiting in order, and at most one primary button, in the current step
// (primaryStep).
func TestGuidedSteps(t *testing.T) {
	pinned := Client{Pinned: tunnel.Pin{Path: `C:\Hearth\tunnel-client.exe`, SHA256: pinnedSum}}
	ready := tunnel.Status{State: tunnel.StateReady}
	for _, c := range []struct {
		name    string
		v       View
		phase   Phase
		current string
	}{
		{"no program", View{}, PhaseProgram, StepProgram},
		{"program found", View{Client: Client{Candidates: []tunnel.Candidate{{Path: `D:\t\tunnel-client.exe`, Source: tunnel.SourceConfigured, SHA256: pinnedSum}}}}, PhaseProgram, StepProgram},
		{"beside hearth-tray", View{BesideExe: true}, PhaseKey, StepKey},
		{"key", View{Pinned: true, Client: pinned}, PhaseKey, StepKey},
		{"tunnel ID", View{Pinned: true, Client: pinned, KeyPresent: true}, PhaseTunnelID, StepTunnelID},
		{"connect", View{Pinned: true, Client: pinned, KeyPresent: true, TunnelID: "tunnel_ab"}, PhaseConnect, StepConnect},
		{"connecting", View{Pinned: true, Client: pinned, KeyPresent: true, TunnelID: "tunnel_ab", Running: true, Status: tunnel.Status{State: tunnel.StateStarting}}, PhaseConnecting, StepConnect},
		{"key refused", View{Pinned: true, Client: pinned, KeyPresent: true, TunnelID: "tunnel_ab", Running: true, Status: tunnel.Status{State: tunnel.StateKeyRefused}}, PhaseKey, StepKey},
		{"chatgpt", View{Pinned: true, Client: pinned, KeyPresent: true, TunnelID: "tunnel_ab", Running: true, Status: ready}, PhaseChatGPT, StepChatGPT},
		{"done", View{Pinned: true, Client: pinned, KeyPresent: true, TunnelID: "tunnel_ab", Running: true, Status: ready, FirstCall: time.Now()}, PhaseDone, ""},
	} {
		if got := c.v.Phase(); got != c.phase {
			t.Errorf("%s: phase %s, want %s", c.name, got, c.phase)
		}
		seen := false
		for _, s := range steps {
			st := c.v.Step(s)
			switch {
			case s == c.current && st != Current:
				t.Errorf("%s: step %s is %s, want current", c.name, s, st)
			case s == c.current:
				seen = true
			case !seen && c.current != "" && st != Done:
				t.Errorf("%s: step %s before the current one is %s", c.name, s, st)
			case seen && s != StepFirstCall && st == Current:
				t.Errorf("%s: step %s after the current one is current too", c.name, s)
			}
		}
		html := render(t, c.v)
		if n := primaries(html); n > 1 {
			t.Errorf("%s: %d primary buttons outside Details", c.name, n)
		}
		if at := primaryStep(html); at != "" && at != c.current {
			t.Errorf("%s: the primary button is in step %q, not in the current step %q", c.name, at, c.current)
		}
		// One step is "now" at a time (while ChatGPT is set up, the wait
		// for its first call says it comes next).
		if n := strings.Count(html, `data-testid="step-badge">now<`); (c.current != "" && n != 1) || (c.current == "" && n != 0) {
			t.Errorf("%s: %d steps are marked now", c.name, n)
		}
		if c.current != "" && !strings.Contains(html, `data-testid="step-`+c.current+`" data-step-state="current"`) {
			t.Errorf("%s: the page does not show step %s as current", c.name, c.current)
		}
	}
}

// TestStepsAfterARefusedKey: with the key refused, the tunnel ID saved
// stays done and Connect waits.
func TestStepsAfterARefusedKey(t *testing.T) {
	v := View{Pinned: true, Client: Client{Pinned: tunnel.Pin{Path: "x", SHA256: pinnedSum}}, KeyPresent: true, TunnelID: "tunnel_ab",
		Running: true, Status: tunnel.Status{State: tunnel.StateKeyRefused}}
	for name, want := range map[string]StepState{StepProgram: Done, StepKey: Current, StepTunnelID: Done, StepConnect: Waiting, StepChatGPT: Waiting, StepFirstCall: Waiting} {
		if got := v.Step(name); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
}

// TestCardFlash: a message shows in the card of the form that was posted.
func TestCardFlash(t *testing.T) {
	v := View{Pinned: true, Client: Client{Pinned: tunnel.Pin{Path: "x", SHA256: pinnedSum}}, KeyPresent: true,
		Flash: &session.Flash{Error: true, Text: "Tunnel ID: that is not a tunnel ID.", Card: StepTunnelID}}
	html := render(t, v)
	card := html[strings.Index(html, `id="step-tunnel-id"`):]
	card = card[:strings.Index(card, "</li>")]
	if !strings.Contains(card, `data-testid="flash-error">Tunnel ID: that is not a tunnel ID.<`) {
		t.Errorf("the message is not in its card:\n%s", card)
	}
	if strings.Count(html, "that is not a tunnel ID") != 1 {
		t.Error("the message shows more than once")
	}
}

// TestLeadPollsOnlyWithoutFields: the steps with fields (and the program
// step, which only the full page checks) do not poll; the later ones do,
// naming their phase.
func TestLeadPollsOnlyWithoutFields(t *testing.T) {
	pinned := Client{Pinned: tunnel.Pin{Path: "x", SHA256: pinnedSum}}
	for _, c := range []struct {
		v    View
		poll bool
	}{
		{View{}, false},
		{View{Pinned: true, Client: pinned}, false},
		{View{Pinned: true, Client: pinned, KeyPresent: true}, false},
		{View{Pinned: true, Client: Client{Pinned: pinned.Pinned, Changed: true}, KeyPresent: true, TunnelID: "tunnel_ab"}, false},
		{View{Pinned: true, Client: pinned, KeyPresent: true, TunnelID: "tunnel_ab"}, true},
	} {
		html := render(t, c.v)
		polls := strings.Contains(html, `hx-get="/setup/progress/live?phase=`+string(c.v.Phase())+`"`)
		if polls != c.poll {
			t.Errorf("phase %s: polls %v, want %v", c.v.Phase(), polls, c.poll)
		}
	}
}

func TestPrimaryStep(t *testing.T) {
	page := `<button class="secondary">a</button><li id="step-key" data-testid="step-key"><span data-testid="step-badge"></span><ol><li>x</li></ol>` +
		`<details><button>hidden</button></details></li><li id="step-tunnel-id"><button type="submit">Save</button></li>`
	if got := primaryStep(page); got != "tunnel-id" {
		t.Errorf("primaryStep = %q, want tunnel-id", got)
	}
	if got := primaryStep(`<a class="button" href="/">x</a><li id="step-key"></li>`); got != "(none)" {
		t.Errorf("primaryStep before every step = %q", got)
	}
	if got := primaryStep(`<li id="step-key"><button class="danger">x</button></li>`); got != "" {
		t.Errorf("primaryStep without a primary = %q", got)
	}
}
