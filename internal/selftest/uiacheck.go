package selftest

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/risk"
	"github.com/hearth-dev/hearth/internal/uia"
)

// The ui checks call the ui tool of the temporary Hearth over MCP, scoped
// to the fixture window's handle, and read the fixture child's state to
// see what each action did.

// fixtureSnapshotDepth and fixtureSnapshotNodes bound the full snapshot:
// the fixture is small, so a truncated walk is a FAIL.
const (
	fixtureSnapshotDepth = 4
	fixtureSnapshotNodes = 300
)

// checkUIAvailable asks host_info whether UI Automation works here, which
// probes the provider (Windows: CoCreateInstance of CUIAutomation).
func (r *run) checkUIAvailable(ctx context.Context) (string, error) {
	res, err := r.hearth.callSettled(ctx, "machine", map[string]any{"operation": "host_info"})
	if err != nil {
		return "", err
	}
	if res.Get("result.ui_automation.available") != true {
		reason := res.Str("result.ui_automation.reason")
		if reason == "" {
			return "", fmt.Errorf("host_info says UI Automation is unavailable without a reason: %s", res.Brief())
		}
		return "", skip("%s", reason)
	}
	return "host_info: UI Automation is available (the COM client API answered)", nil
}

// checkFixture starts the fixture child and checks, through the window's
// own messages, that its controls are there.
func (r *run) checkFixture(ctx context.Context) (string, error) {
	start := r.startFixture
	switch {
	case r.o.fixture != nil:
		start = func(context.Context) (*fixtureProc, error) { return r.o.fixture(r) }
	case runtime.GOOS != "windows":
		return "", skip("the fixture window is a Win32 window; this is not Windows")
	}
	f, err := start(ctx)
	if err != nil {
		return "", err
	}
	r.fixture = f
	st, err := f.state()
	if err != nil {
		return "", err
	}
	if st.Items != len(ListItems) || st.Clicks != 0 || st.Checked || st.Edit != "" {
		return "", fmt.Errorf("the fresh fixture reports %+v", st)
	}
	return fmt.Sprintf("window %q (hwnd %d, process %d) with a button, an edit box, a check box and a list of %d items, and a window titled like the control panel",
		f.model.Title, f.ready.HWND, f.ready.PID, st.Items), nil
}

// snapshot runs ui.snapshot on the fixture window.
func (r *run) snapshot(ctx context.Context, depth, nodes int) (*uia.SnapshotResult, *result, error) {
	res, err := r.hearth.callSettled(ctx, "ui", map[string]any{"operation": "snapshot", "hwnd": r.fixture.ready.HWND, "max_depth": depth, "max_nodes": nodes})
	if err != nil {
		return nil, nil, err
	}
	if res.State() != "completed" {
		return nil, res, fmt.Errorf("ui.snapshot answered %s: %s", res.Code(), res.Brief())
	}
	var snap uia.SnapshotResult
	b, _ := json.Marshal(res.Get("result"))
	if err := json.Unmarshal(b, &snap); err != nil {
		return nil, res, fmt.Errorf("decode ui.snapshot's result: %w", err)
	}
	return &snap, res, nil
}

func (r *run) checkSnapshot(ctx context.Context) (string, error) {
	snap, _, err := r.snapshot(ctx, fixtureSnapshotDepth, fixtureSnapshotNodes)
	if err != nil {
		return "", err
	}
	if snap.Truncated {
		return "", fmt.Errorf("the fixture's snapshot was truncated by %v at %d nodes", snap.TruncatedBy, snap.NodeCount)
	}
	sum, err := r.fixture.model.CheckTree(snap.Roots, r.fixture.ready.PID)
	if err != nil {
		return "", err
	}
	return "ui.snapshot: " + sum, nil
}

func (r *run) checkBounds(ctx context.Context) (string, error) {
	const few = 3
	snap, _, err := r.snapshot(ctx, fixtureSnapshotDepth, few)
	if err != nil {
		return "", err
	}
	if !snap.Truncated || !slices.Contains(snap.TruncatedBy, "max_nodes") || snap.NodeCount > few {
		return "", fmt.Errorf("max_nodes %d: %d nodes, truncated=%v by %v", few, snap.NodeCount, snap.Truncated, snap.TruncatedBy)
	}
	flat, _, err := r.snapshot(ctx, 0, fixtureSnapshotNodes)
	if err != nil {
		return "", err
	}
	if flat.NodeCount != 1 || len(flat.Roots) != 1 || len(flat.Roots[0].Children) != 0 || !slices.Contains(flat.TruncatedBy, "max_depth") {
		return "", fmt.Errorf("max_depth 0: %d nodes, truncated_by %v", flat.NodeCount, flat.TruncatedBy)
	}
	res, err := r.hearth.callSettled(ctx, "ui", map[string]any{"operation": "snapshot", "hwnd": r.fixture.ready.HWND, "max_depth": uia.MaxDepth + 1})
	if err != nil {
		return "", err
	}
	if res.State() != "failed" || !strings.Contains(res.Str("error.message"), `"max_depth"`) {
		return "", fmt.Errorf("max_depth %d must be refused naming the field: %s", uia.MaxDepth+1, res.Brief())
	}
	return fmt.Sprintf("max_nodes %d stopped the walk at %d nodes, max_depth 0 listed the window alone, max_depth %d was refused naming the field", few, snap.NodeCount, uia.MaxDepth+1), nil
}

func (r *run) checkQuery(ctx context.Context) (string, error) {
	res, err := r.hearth.callSettled(ctx, "ui", map[string]any{"operation": "query", "hwnd": r.fixture.ready.HWND,
		"target": map[string]any{"automation_id": fmt.Sprint(IDButton)}})
	if err != nil {
		return "", err
	}
	if res.State() != "completed" || res.Num("result.match_count") != 1 || res.Str("result.matches.0.control_type") != "Button" || res.Str("result.matches.0.name") != "Count" {
		return "", fmt.Errorf("query of the button: %s", res.Brief())
	}
	items, err := r.hearth.callSettled(ctx, "ui", map[string]any{"operation": "query", "hwnd": r.fixture.ready.HWND,
		"target": map[string]any{"control_type": "ListItem"}})
	if err != nil {
		return "", err
	}
	if items.Num("result.match_count") != float64(len(ListItems)) {
		return "", fmt.Errorf("query of the list items: %s", items.Brief())
	}
	return fmt.Sprintf("ui.query found the button exactly once (locator %s, parent %s) and the %d list items", res.Str("result.matches.0.locator"), res.Str("result.matches.0.parent"), len(ListItems)), nil
}

// act runs ui.action on the fixture window's control id.
func (r *run) act(ctx context.Context, hwnd uint64, id int, action string, extra map[string]any) (*result, error) {
	args := map[string]any{"operation": "action", "action": action, "hwnd": hwnd, "target": map[string]any{"automation_id": fmt.Sprint(id)}}
	for k, v := range extra {
		args[k] = v
	}
	return r.hearth.callSettled(ctx, "ui", args)
}

func (r *run) checkInvoke(ctx context.Context) (string, error) {
	before, err := r.fixture.state()
	if err != nil {
		return "", err
	}
	res, err := r.act(ctx, r.fixture.ready.HWND, IDButton, uia.ActInvoke, nil)
	if err != nil {
		return "", err
	}
	// Policy ask: the first use of an app in a conversation waits for the
	// operator, who allows the app for the rest of it (the checks after
	// this one run without asking).
	app, _, err := r.allowApp(ctx, res)
	if err != nil {
		return "", err
	}
	after, err := r.waitState(func(s State) bool { return s.Clicks == before.Clicks+1 })
	if err != nil {
		return "", fmt.Errorf("after invoke: %w", err)
	}
	return fmt.Sprintf("ui.action invoke waited for the operator to allow %s in this chat, then the button's click counter went from %d to %d", app, before.Clicks, after.Clicks), nil
}

// allowApp approves, as the operator, the permit the first ui.action on
// the fixture's app waits for, and waits for that call's result.
func (r *run) allowApp(ctx context.Context, res *result) (string, *result, error) {
	pid, fid := res.Str("permit_id"), res.Str("future_id")
	if res.State() != "pending" || pid == "" || fid == "" {
		return "", nil, fmt.Errorf("the first ui.action on an app under policy ask must wait for the operator: %s", res.Brief())
	}
	op := r.hearth.app.Operator
	pending, err := op.Permits(ctx, "pending")
	if err != nil {
		return "", nil, err
	}
	i := slices.IndexFunc(pending, func(p govern.Permit) bool { return p.ID == pid })
	if i < 0 || pending[i].Case != string(risk.CaseUIApp) {
		return "", nil, fmt.Errorf("the operator does not see permit %s as the use of an app", pid)
	}
	if err := op.Approve(ctx, pid, Operator, nil); err != nil {
		return "", nil, fmt.Errorf("approve permit %s as %s: %w", pid, Operator, err)
	}
	env, err := r.hearth.await(ctx, fid, 60*time.Second)
	if err != nil {
		return "", nil, err
	}
	raw, _ := json.Marshal(env)
	settled := &result{Env: env, Raw: raw}
	if env["state"] != "completed" && env["state"] != "blocked" {
		return "", nil, fmt.Errorf("the approved ui.action answered: %.300s", raw)
	}
	app := pending[i].Subject
	if app == "" {
		// A window whose program cannot be told (a fake desktop's) is
		// asked about call by call.
		app = "the fixture's app"
	}
	return app, settled, nil
}

// actAllowed is act, the operator allowing the fixture's app first when
// the call waits for that (an earlier check that would have done so did
// not run).
func (r *run) actAllowed(ctx context.Context, hwnd uint64, id int, action string, extra map[string]any) (*result, error) {
	res, err := r.act(ctx, hwnd, id, action, extra)
	if err != nil || res.State() != "pending" || res.Str("permit_id") == "" {
		return res, err
	}
	_, settled, err := r.allowApp(ctx, res)
	return settled, err
}

// selftestText is what set_value types into the edit box.
const selftestText = "typed by the Hearth selftest"

func (r *run) checkSetValue(ctx context.Context) (string, error) {
	res, err := r.actAllowed(ctx, r.fixture.ready.HWND, IDEdit, uia.ActSetValue, map[string]any{"value": selftestText})
	if err != nil {
		return "", err
	}
	if res.State() != "completed" || res.Str("result.value_after") != selftestText {
		return "", fmt.Errorf("set_value answered %s: %s", res.Code(), res.Brief())
	}
	if _, err := r.waitState(func(s State) bool { return s.Edit == selftestText }); err != nil {
		return "", fmt.Errorf("after set_value: %w", err)
	}
	return fmt.Sprintf("ui.action set_value: the edit box holds %q (value_after and the window agree)", selftestText), nil
}

func (r *run) checkFocus(ctx context.Context) (string, error) {
	res, err := r.actAllowed(ctx, r.fixture.ready.HWND, IDCheckBox, uia.ActFocus, nil)
	if err != nil {
		return "", err
	}
	if res.State() != "completed" {
		return "", fmt.Errorf("focus answered %s: %s", res.Code(), res.Brief())
	}
	if _, err := r.waitState(func(s State) bool { return s.Focus == IDCheckBox }); err != nil {
		return "", fmt.Errorf("after focus: %w", err)
	}
	return "ui.action focus: the check box took the keyboard focus", nil
}

// fallback runs fallback input, which must wait for a permit; the
// selftest approves it through the operator API and waits for its result.
func (r *run) fallback(ctx context.Context, id int, action string, extra map[string]any) (map[string]any, string, error) {
	extra["allow_fallback"] = true
	res, err := r.act(ctx, r.fixture.ready.HWND, id, action, extra)
	if err != nil {
		return nil, "", err
	}
	pid, fid := res.Str("permit_id"), res.Str("future_id")
	if res.State() != "pending" || pid == "" || fid == "" {
		return nil, "", fmt.Errorf("fallback %s must wait for a permit: %s", action, res.Brief())
	}
	op := r.hearth.app.Operator
	pending, err := op.Permits(ctx, "pending")
	if err != nil {
		return nil, "", err
	}
	i := slices.IndexFunc(pending, func(p govern.Permit) bool { return p.ID == pid })
	if i < 0 || pending[i].Primitive != "ui.action" || !strings.Contains(pending[i].Input, `"allow_fallback":true`) {
		return nil, "", fmt.Errorf("the operator does not see permit %s for the exact ui.action input", pid)
	}
	if err := op.Approve(ctx, pid, Operator, nil); err != nil {
		return nil, "", fmt.Errorf("approve permit %s as %s: %w", pid, Operator, err)
	}
	if err := r.journaled(ctx, pid); err != nil {
		return nil, "", err
	}
	env, err := r.hearth.await(ctx, fid, 60*time.Second)
	if err != nil {
		return nil, "", err
	}
	if env["state"] != "completed" {
		b, _ := json.Marshal(env)
		return nil, "", fmt.Errorf("the approved %s answered: %.300s", action, b)
	}
	return env, pid, nil
}

func (r *run) checkFallbackClick(ctx context.Context) (string, error) {
	before, err := r.fixture.state()
	if err != nil {
		return "", err
	}
	_, pid, err := r.fallback(ctx, IDCheckBox, uia.ActClick, map[string]any{})
	if err != nil {
		return "", err
	}
	if _, err := r.waitState(func(s State) bool { return s.Checked != before.Checked }); err != nil {
		return "", fmt.Errorf("after the fallback click: %w", err)
	}
	return fmt.Sprintf("fallback click waited for permit %s, approved as %q through the operator API and journaled; the click toggled the check box", pid, Operator), nil
}

// vkA is the virtual-key code of the A key.
const vkA = 0x41

func (r *run) checkFallbackKey(ctx context.Context) (string, error) {
	before, err := r.fixture.state()
	if err != nil {
		return "", err
	}
	_, pid, err := r.fallback(ctx, IDEdit, uia.ActKey, map[string]any{"virtual_key": vkA})
	if err != nil {
		return "", err
	}
	count := func(s State) int { return strings.Count(strings.ToLower(s.Edit), "a") }
	after, err := r.waitState(func(s State) bool { return count(s) == count(before)+1 && len(s.Edit) == len(before.Edit)+1 })
	if err != nil {
		return "", fmt.Errorf("after the fallback key: %w", err)
	}
	return fmt.Sprintf("fallback key A waited for permit %s, approved as %q; the edit box went from %d to %d characters", pid, Operator, len(before.Edit), len(after.Edit)), nil
}

func (r *run) checkPanelRefused(ctx context.Context) (string, error) {
	res, err := r.actAllowed(ctx, r.fixture.ready.PanelHWND, IDPanelButton, uia.ActInvoke, nil)
	if err != nil {
		return "", err
	}
	if res.Code() != "blocked/operator_surface" {
		return "", fmt.Errorf("invoke in a window titled like the control panel answered %s, want blocked/operator_surface: %s", res.Code(), res.Brief())
	}
	st, err := r.fixture.state()
	if err != nil {
		return "", err
	}
	if st.PanelClicks != 0 {
		return "", fmt.Errorf("the refused invoke clicked the panel window's button %d time(s)", st.PanelClicks)
	}
	return fmt.Sprintf("ui.action in a window titled %q was refused (blocked/operator_surface); its button was not clicked", r.fixture.model.PanelTitle), nil
}

// checkElevated: Hearth must answer blocked for a target that runs with
// more privilege. Making one takes the user's consent (a UAC prompt),
// which a selftest must not ask for; when Hearth itself runs elevated, no
// target can be more so.
func (r *run) checkElevated(context.Context) (string, error) {
	if elevatedSelf() {
		return "", skip("Hearth runs elevated here, so no window can be more elevated than it; run the selftest from an ordinary (not \"Run as administrator\") terminal")
	}
	return "", skip("an elevated target needs the user's consent (a UAC prompt) to start, which the selftest never asks for; the elevation refusal is covered by the provider's token check (ui.action reads the target's token elevation before any input)")
}

// waitState polls the fixture's state until ok, for up to 10 seconds:
// an action's effect can reach the window's thread a moment after the
// call answered.
func (r *run) waitState(ok func(State) bool) (State, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		s, err := r.fixture.state()
		if err != nil {
			return s, err
		}
		if ok(s) {
			return s, nil
		}
		if time.Now().After(deadline) {
			return s, fmt.Errorf("the fixture reports %+v", s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// journaled requires the temporary Hearth's ledger to record the approval
// of permit pid by the selftest operator.
func (r *run) journaled(ctx context.Context, pid string) error {
	tail, err := r.hearth.app.Ledger.Tail(ctx, 50)
	if err != nil {
		return err
	}
	for _, e := range tail {
		if e.Kind != "permit_approved" {
			continue
		}
		var d map[string]any
		if json.Unmarshal(e.Data, &d) == nil && strings.Contains(string(e.Data), pid) && d["operator"] == Operator {
			return nil
		}
	}
	return fmt.Errorf("the ledger has no permit_approved entry for %s by operator %q", pid, Operator)
}
