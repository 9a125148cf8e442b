//go:build !windows

package govern_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/govern/governtest"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/jobs"
	"github.com/hearth-dev/hearth/internal/ledger/ledgertest"
	"github.com/hearth-dev/hearth/internal/mcpserver"
	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/recipes"
	"github.com/hearth-dev/hearth/internal/risk"
)

// matrix is one wired Hearth driven through every entry point.
type matrix struct {
	t      *testing.T
	in     *hearthtest.Instance
	c      *hearthtest.Client
	route  string
	counts map[string]*atomic.Int64
	n      int
	// unknown is the command id of the UNKNOWN the gate opened last.
	unknown string
	// parking is set while calls are expected to park for a permit:
	// nothing arrives for them until the operator decides.
	parking bool
	// recipes holds the one-step recipe made for each step primitive
	// (made while no gate is closed).
	recipes map[string]string
}

func (m *matrix) cmd() string { m.n++; return fmt.Sprintf("cmd-matrix-%d", m.n) }

// entryPoint reaches a primitive one way: it makes the call under command
// id cmd and returns the command id the primitive's own run is journaled
// under, and everything the caller was told (answers and arrivals).
type entryPoint struct {
	name  string
	prims func(m *matrix) []*primitive.Spec
	call  func(m *matrix, s *primitive.Spec, cmd string) (child, told string)
}

func (m *matrix) try(tool string, args map[string]any, cmd string) *hearthtest.Result {
	m.t.Helper()
	r, err := m.c.TryCall(tool, args, map[string]any{"hearth/command_id": cmd})
	if err != nil {
		m.t.Fatalf("%s: %v", tool, err)
	}
	return r
}

// told is a result plus the arrival of the future it names, if any.
func (m *matrix) told(r *hearthtest.Result, fid string) string {
	m.t.Helper()
	if fid == "" {
		fid, _ = r.Get("future_id").(string)
	}
	if fid == "" || r.Get("permit_id") != nil || m.parking {
		return string(r.Raw)
	}
	b, _ := json.Marshal(m.c.WaitArrival(fid, r))
	return string(r.Raw) + string(b)
}

func journaledSpecs(m *matrix, names []string) []*primitive.Spec {
	var out []*primitive.Spec
	for _, s := range m.in.App.Registry.All() {
		if names != nil && !slices.Contains(names, s.Name()) {
			continue
		}
		if s.Risk == primitive.RiskRead || s.Risk == primitive.RiskControl || s.Risk == primitive.RiskKill || s.Compound {
			continue
		}
		out = append(out, s)
	}
	return out
}

var entryPoints = []entryPoint{
	{name: "tool call",
		prims: func(m *matrix) []*primitive.Spec { return journaledSpecs(m, nil) },
		call: func(m *matrix, s *primitive.Spec, cmd string) (string, string) {
			return cmd, m.told(m.try(s.Tool, sampleArgs(s), cmd), "")
		}},
	{name: "scatter item",
		prims: func(m *matrix) []*primitive.Spec { return journaledSpecs(m, m.in.App.Runs.Kinds()) },
		call: func(m *matrix, s *primitive.Spec, cmd string) (string, string) {
			item := sampleArgs(s)
			delete(item, "operation")
			item["kind"] = s.Name()
			r := m.try("run", map[string]any{"operation": "scatter", "calls": []any{item}}, cmd)
			fid, _ := r.Get("result.futures.0.future_id").(string)
			if fid == "" {
				fid, _ = r.Get("error.details.futures.0.future_id").(string)
			}
			if fid == "" {
				m.t.Fatalf("scatter of %s: %s", s.Name(), r.Raw)
			}
			return cmd + "/call0", m.told(r, fid)
		}},
	{name: "recipe step",
		prims: func(m *matrix) []*primitive.Spec { return journaledSpecs(m, recipes.StepPrimitives()) },
		call: func(m *matrix, s *primitive.Spec, cmd string) (string, string) {
			name := m.recipes[s.Name()]
			if name == "" {
				input := sampleArgs(s)
				delete(input, "operation")
				name = "matrix-" + strings.ReplaceAll(s.Name(), ".", "-")
				r := m.try("recipe", map[string]any{"operation": "create", "name": name,
					"steps": []any{map[string]any{"primitive": s.Name(), "input": input}}}, cmd+"-create")
				if r.State() != "completed" {
					m.t.Fatalf("create a recipe with one %s step: %s", s.Name(), r.Raw)
				}
				m.recipes[s.Name()] = name
			}
			return cmd + "/step0", m.told(m.try("recipe", map[string]any{"operation": "run", "name": name}, cmd), "")
		}},
	{name: "job run",
		prims: func(m *matrix) []*primitive.Spec { return journaledSpecs(m, []string{"task.submit"}) },
		call: func(m *matrix, s *primitive.Spec, cmd string) (string, string) {
			// The run is due once the queue is released: the gate under
			// test is set while it waits (see held).
			r := m.try("task", map[string]any{"operation": "submit", "job": map[string]any{"command": "true"}}, cmd)
			id, _ := r.Get("result.id").(string)
			if id == "" {
				m.t.Fatalf("submit: %s", r.Raw)
			}
			m.release()
			j := m.waitJob(id)
			b, _ := json.Marshal(j)
			return jobs.RunCommandID(id, 1), string(b)
		}},
}

// held, for the job entry point, holds the queue before the submit (a
// submit is itself refused by every gate under test) so that the gate is
// set before the run is due; release lets it run.
func (m *matrix) hold() {
	ctx := context.Background()
	if err := m.in.App.Operator.EStop(ctx, "alice", "hold"); err != nil {
		m.t.Fatal(err)
	}
	if err := m.in.App.Operator.Reset(ctx, "alice"); err != nil {
		m.t.Fatal(err)
	}
}

func (m *matrix) release() {
	// The e-stop gate of a run is set by writing the latch alone (an
	// operator's e-stop would also hold the queue); resuming is then the
	// queue's own Resume.
	if _, err := m.in.App.DB.W.Exec(`UPDATE settings SET value = 'false' WHERE key = 'queue_held'`); err != nil {
		m.t.Fatal(err)
	}
	m.in.App.Dispatcher.Resume(jobs.Class)
}

func (m *matrix) waitJob(id string) *jobs.Job {
	m.t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		j, err := m.in.App.Jobs.Get(context.Background(), m.route, id)
		if err != nil {
			m.t.Fatal(err)
		}
		parked := j.State == jobs.StateQueued && strings.Contains(j.Reason, "permit")
		held := j.State == jobs.StateQueued && strings.HasPrefix(j.Reason, "held:")
		if dispatch.Settled(j.State) || parked || held {
			return j
		}
		if time.Now().After(deadline) {
			m.t.Fatalf("job %s: %+v", id, j)
		}
	}
}

// journal returns the seq of cmd's intent and outcome entries (0 when
// absent), waiting for the outcome when wait is set.
func (m *matrix) journal(cmd string, wait bool) (intent, outcome int64, intentData map[string]any) {
	m.t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		intent, outcome = 0, 0
		for _, e := range ledgertest.OfCommand(m.t, m.in.App.DB, cmd) {
			switch {
			case e.Kind == "intent" && intent == 0:
				intent, intentData = e.Seq, e.Data
			case e.Kind == "outcome" && e.Data["outcome"] != "in_flight":
				outcome = e.Seq
			}
		}
		if !wait || outcome != 0 || time.Now().After(deadline) {
			return intent, outcome, intentData
		}
	}
}

// gate is one governance refusal, set and cleared by the operator.
type gate struct {
	code, text string // the refusal's code, and what a job's reason says
	set, clear func(m *matrix)
}

var gates = []gate{
	{code: "estop", text: "emergency stop",
		set: func(m *matrix) {
			_, err := m.in.App.DB.W.Exec(`INSERT INTO settings(key, value) VALUES ('estop', '{"latched":true,"reason":"matrix"}')
				ON CONFLICT(key) DO UPDATE SET value = excluded.value`)
			if err != nil {
				m.t.Fatal(err)
			}
		},
		clear: func(m *matrix) {
			if err := m.in.App.Operator.Reset(context.Background(), "alice"); err != nil {
				m.t.Fatal(err)
			}
		}},
	{code: "read_only", text: "read-only",
		set: func(m *matrix) { m.policy(config.ModeReadOnly) }, clear: func(m *matrix) { m.policy(config.ModeTrusted) }},
	{code: "unknown_open", text: "UNKNOWN",
		set: func(m *matrix) {
			m.unknown = m.cmd() + "-unknown"
			err := m.in.App.DB.InTx(context.Background(), func(tx *sql.Tx) error {
				return governtest.OpenUnknownTx(context.Background(), tx, m.unknown, m.route, "machine.exec", time.Now())
			})
			if err != nil {
				m.t.Fatal(err)
			}
		},
		clear: func(m *matrix) {
			if err := m.in.App.Operator.Reconcile(context.Background(), "alice", m.unknown, "checked"); err != nil {
				m.t.Fatal(err)
			}
		}},
}

func (m *matrix) policy(mode string) {
	if err := m.in.App.Operator.SetPolicy(context.Background(), "alice", mode); err != nil {
		m.t.Fatal(err)
	}
}

// TestEveryEntryPointIsGoverned is generated from the registry: for every
// journaled primitive and every way to reach it (tool call, scatter item,
// recipe step, job run), the ledger shows its intent before its outcome
// under one command id; the e-stop, read-only mode and an open UNKNOWN
// refuse it before anything runs or is journaled; and a call that needs a
// permit parks without running until the operator approves it, after
// which (the approved-permit entry point) it is journaled, intent before
// outcome, as approved.
func TestEveryEntryPointIsGoverned(t *testing.T) {
	if testing.Short() {
		t.Skip("drives every primitive through every entry point")
	}
	hearthtest.FakeOpener(t)
	in := hearthtest.Start(t, hearthtest.Trusted)
	m := &matrix{t: t, in: in, c: hearthtest.Connect(t, in.URL, "matrix"), counts: countRuns(in), recipes: map[string]string{},
		route: mcpserver.Route(map[string]any{"hearth/conversation": "matrix"})}
	ctx := context.Background()
	checked, permitted := 0, 0
	for _, ep := range entryPoints {
		specs := ep.prims(m)
		if len(specs) == 0 {
			t.Fatalf("%s reaches no journaled primitive", ep.name)
		}
		job := ep.name == "job run"
		count := func(s *primitive.Spec) int64 {
			if job {
				return 0 // the job's process is not a primitive's Run
			}
			return m.counts[s.Name()].Load()
		}
		for _, s := range specs {
			where := ep.name + " " + s.Name()
			// Trusted: it runs, journaled intent before outcome.
			if job {
				m.hold()
			}
			was := count(s)
			child, told := ep.call(m, s, m.cmd())
			intent, outcome, _ := m.journal(child, true)
			if intent == 0 || outcome == 0 || intent > outcome {
				t.Errorf("%s: intent %d, outcome %d under %s: %s", where, intent, outcome, child, told)
			}
			if !job && count(s) == was {
				t.Errorf("%s did not run: %s", where, told)
			}
			// Each gate refuses it before anything runs or is journaled.
			for _, g := range gates {
				if job {
					m.hold()
				} else {
					g.set(m)
				}
				was := count(s)
				var child, told string
				if job {
					// The submit is made before the gate closes.
					r := m.try("task", map[string]any{"operation": "submit", "job": map[string]any{"command": "true"}}, m.cmd())
					id, _ := r.Get("result.id").(string)
					if id == "" {
						t.Fatalf("submit: %s", r.Raw)
					}
					g.set(m)
					m.release()
					j := m.waitJob(id)
					b, _ := json.Marshal(j)
					child, told = jobs.RunCommandID(id, 1), string(b)
					// An open UNKNOWN holds a due job until it is
					// reconciled (the clear below releases it); the other
					// gates end it blocked.
					want, prefix := jobs.StateBlocked, ""
					if g.code == "unknown_open" {
						want, prefix = jobs.StateQueued, "held:"
					}
					if j.State != want || !strings.HasPrefix(j.Reason, prefix) || !strings.Contains(j.Reason, g.text) {
						t.Errorf("%s under %s: %s", where, g.code, told)
					}
				} else {
					child, told = ep.call(m, s, m.cmd())
					if !strings.Contains(told, `"code":"`+g.code+`"`) {
						t.Errorf("%s under %s was not refused for it: %s", where, g.code, told)
					}
				}
				if intent, _, _ := m.journal(child, false); intent != 0 {
					t.Errorf("%s under %s: its intent was journaled", where, g.code)
				}
				if count(s) != was {
					t.Errorf("%s ran under %s", where, g.code)
				}
				g.clear(m)
			}
			// Ask: an exec-class call parks for a permit; approved, it runs
			// journaled as approved.
			if s.Risk != primitive.RiskExec {
				checked++
				continue
			}
			if k, _ := risk.KindOf(s.Name()); k == risk.KindSession {
				// Keys typed into a session whose start was approved
				// need no permit of their own: under ask the call runs
				// at once, journaled as unapproved.
				m.policy(config.ModeAsk)
				was = count(s)
				child, told := ep.call(m, s, m.cmd())
				m.policy(config.ModeTrusted)
				intent, outcome, data := m.journal(child, true)
				if intent == 0 || outcome == 0 || data["approved"] == true || count(s) == was {
					t.Errorf("%s under ask: intent %d (%v), outcome %d, ran %v: %s", where, intent, data, outcome, count(s) != was, told)
				}
				checked++
				continue
			}
			was = count(s)
			var permit, parent string
			if job {
				m.hold()
				r := m.try("task", map[string]any{"operation": "submit", "job": map[string]any{"command": "true"}}, m.cmd())
				id, _ := r.Get("result.id").(string)
				m.policy(config.ModeAsk)
				m.release()
				m.waitJob(id)
				child = jobs.RunCommandID(id, 1)
			} else {
				m.policy(config.ModeAsk)
				m.parking = true
				parent = m.cmd()
				child, _ = ep.call(m, s, parent)
				m.parking = false
			}
			// A scatter item parks once its runner admits it, after the
			// scatter answered.
			var ps []govern.Permit
			for deadline := time.Now().Add(30 * time.Second); permit == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				var err error
				if ps, err = in.App.Operator.Permits(ctx, "pending"); err != nil {
					t.Fatal(err)
				}
				for _, p := range ps {
					if p.CommandID == child {
						permit = p.ID
					}
				}
			}
			m.policy(config.ModeTrusted)
			if permit == "" {
				t.Errorf("%s under ask did not park for a permit (pending: %+v)", where, ps)
				continue
			}
			if intent, _, _ := m.journal(child, false); intent != 0 || count(s) != was {
				t.Errorf("%s ran or was journaled before its permit was approved", where)
			}
			if err := in.App.Operator.Approve(ctx, permit, "alice", nil); err != nil {
				t.Fatalf("%s: approve: %v", where, err)
			}
			intent, outcome, data := m.journal(child, true)
			if intent == 0 || outcome == 0 || intent > outcome || data["approved"] != true {
				t.Errorf("approved permit of %s: intent %d (%v), outcome %d", where, intent, data, outcome)
			}
			// The call that made it (a recipe run, a scatter) settles
			// before the next pair's e-stop could stop it part way.
			if parent != "" && parent != child {
				if _, outcome, _ := m.journal(parent, true); outcome == 0 {
					t.Errorf("%s: %s never settled after its approved call", where, parent)
				}
			}
			checked++
			permitted++
		}
	}
	t.Logf("%d primitive/entry-point pairs checked, %d through an approved permit", checked, permitted)
	if checked < 15 || permitted < 4 {
		t.Fatalf("only %d primitive/entry-point pairs checked, %d through an approved permit", checked, permitted)
	}
}
