package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/jsonx"
	"github.com/hearth-dev/hearth/internal/ledger"
)

// This file holds the demo steps of governance: the operator's allow-rule,
// a permit, the e-stop, command-id replay and the evidence export.
// allSteps (steps.go) lists every step in order.

// The demo program's calls that run under the operator's rules, and the
// names and words in them: a rule covers exactly the call its card showed
// (the demo program has no row in the argument table), so there is a rule
// for each call, as an operator who chose "Always allow" on each card
// would have.
const (
	jobsLogName       = "jobs.log"
	replayCounterName = "replay-counter.txt"
	greeted           = "the operator"
	detachedText      = "detached hello"
	afterResetText    = "working again"
)

// ruledCalls are the demo program's arguments (after ChildArg) in the
// calls its rules cover.
func (d *demo) ruledCalls() [][]string {
	return [][]string{
		{"lines", fmt.Sprint(spillLines)},
		{"log", "parent"},
		{"log", "dependent"},
		{"sleep-echo", "300", detachedText},
		{"echo", "hello, " + greeted},
		{"echo", afterResetText},
		{"count", "ran"},
	}
}

// allowRule is the operator's standing decisions that let the demo
// program's calls run under the fs root without a permit; anything else
// the model runs in ask mode still waits for one (see the permit step).
func (d *demo) allowRule(ctx context.Context) (string, error) {
	var ids []string
	for _, args := range d.ruledCalls() {
		rule, err := d.app().Operator.AddRule(ctx, operator, globEscape(d.exe), d.root, childArgs(args...)...)
		if err != nil {
			return "", fmt.Errorf("operator AddRule: %w", err)
		}
		if rule.Interpreter {
			return "", fmt.Errorf("the demo program was flagged as a general interpreter")
		}
		ids = append(ids, rule.ID)
	}
	return fmt.Sprintf("operator rules %s: the demo program may make these %d calls, each exactly, with cwd under <fs-root>; any other call, or elsewhere, still asks",
		strings.Join(ids, ", "), len(ids)), nil
}

func (d *demo) permit(ctx context.Context) (string, error) {
	const text = "approved by the operator"
	r, err := d.c.call(ctx, "machine", d.exec("", "echo", text), nil) // no cwd: outside the allow-rule
	if err != nil {
		return "", err
	}
	pid, fid := r.Str("permit_id"), r.Str("future_id")
	if r.State() != "pending" || pid == "" || fid == "" {
		return "", expect(false, r, "an exec outside the allow-rule must wait for a permit in ask mode")
	}
	op := d.app().Operator
	pending, err := op.Permits(ctx, "pending")
	if err != nil {
		return "", fmt.Errorf("operator Permits: %w", err)
	}
	i := slices.IndexFunc(pending, func(p govern.Permit) bool { return p.ID == pid })
	if i < 0 || pending[i].Primitive != "machine.exec" || !strings.Contains(pending[i].Input, text) {
		return "", fmt.Errorf("the operator does not see permit %s with the exact input", pid)
	}
	if err := op.Approve(ctx, pid, operator, nil); err != nil {
		return "", fmt.Errorf("operator Approve: %w", err)
	}
	env, err := d.c.await(ctx, fid, 30*time.Second)
	if err != nil {
		return "", err
	}
	if jsonx.GetPath(env, "state") != "completed" || jsonx.GetPath(env, "result.stdout.text") != text+"\n" {
		b, _ := json.Marshal(env)
		return "", fmt.Errorf("approved exec: %.300s", b)
	}
	return fmt.Sprintf("exec outside the allow-rule answered pending with permit %s; the operator saw its exact input (sha256 %.12s…) and approved it once; the result arrived in the conversation, completed",
		pid, pending[i].Digest), nil
}

func (d *demo) estop(ctx context.Context) (string, error) {
	r, err := d.c.call(ctx, "machine", map[string]any{"operation": "estop", "reason": "demo: the model pulls the emergency stop"}, nil)
	if err != nil {
		return "", err
	}
	if r.State() != "completed" {
		return "", expect(false, r, "machine.estop")
	}
	marker := filepath.Join(d.root, "estop-marker.txt")
	r, err = d.c.call(ctx, "machine", d.exec(d.root, "append", marker, "ran under the e-stop"), nil)
	if err != nil {
		return "", err
	}
	if r.State() != "blocked" || r.Get("error.code") != "estop" {
		return "", expect(false, r, "an exec under the e-stop must be blocked with code estop")
	}
	st, err := d.completed(ctx, "fs.stat", "fs", map[string]any{"operation": "stat", "path": marker}, nil)
	if err != nil {
		return "", err
	}
	if jsonx.GetPath(st, "result.exists") != false {
		return "", fmt.Errorf("the refused exec ran: its marker file exists")
	}
	h, err := d.c.hostInfo(ctx)
	if err != nil {
		return "", err
	}
	if h.Get("result.estop") != true {
		return "", expect(false, h, "host_info must disclose the latched e-stop")
	}
	op, gov := d.app().Operator, d.app().Gov
	if err := op.Reset(ctx, operator); err != nil {
		return "", fmt.Errorf("operator Reset: %w", err)
	}
	if held, err := gov.QueueHeld(ctx); err != nil || !held {
		return "", fmt.Errorf("after the reset the queue must stay held until resumed (held %v, %v)", held, err)
	}
	if err := op.ResumeQueue(ctx, operator); err != nil {
		return "", fmt.Errorf("operator ResumeQueue: %w", err)
	}
	if held, err := gov.QueueHeld(ctx); err != nil || held {
		return "", fmt.Errorf("the queue is still held after the resume (%v)", err)
	}
	env, err := d.completed(ctx, "exec after the reset", "machine", d.exec(d.root, "echo", afterResetText), nil)
	if err != nil {
		return "", err
	}
	if jsonx.GetPath(env, "result.stdout.text") != afterResetText+"\n" {
		b, _ := json.Marshal(env)
		return "", fmt.Errorf("exec after the reset: %.300s", b)
	}
	return "machine.estop by the model latched; an exec was refused (blocked, code estop) and did not run; host_info disclosed the latch; operator reset (queue stayed held) → operator resume → an exec completed again", nil
}

func (d *demo) replay(ctx context.Context) (string, error) {
	counter := filepath.Join(d.root, replayCounterName)
	meta := map[string]any{"hearth/command_id": "demo-replay-1"}
	first, err := d.completed(ctx, "first exec", "machine", d.exec(d.root, "count", "ran"), meta)
	if err != nil {
		return "", err
	}
	if got, err := d.readFile(ctx, counter); err != nil || got != "ran\n" {
		return "", fmt.Errorf("after the first call the counter reads %q (%v)", got, err)
	}
	r, err := d.c.call(ctx, "machine", d.exec(d.root, "count", "ran"), meta)
	if err != nil {
		return "", err
	}
	if r.State() != "completed" || r.Get("replayed") != true || r.Get("result.pid") != jsonx.GetPath(first, "result.pid") {
		return "", expect(false, r, "the same command id and input must return the stored outcome, replayed")
	}
	other, err := d.c.call(ctx, "machine", d.exec(d.root, "count", "other"), meta)
	if err != nil {
		return "", err
	}
	if other.State() != "conflict" {
		return "", expect(false, other, "the same command id with another input must be a conflict")
	}
	if got, err := d.readFile(ctx, counter); err != nil || got != "ran\n" {
		return "", fmt.Errorf("the replay ran again: the counter reads %q (%v)", got, err)
	}
	return "command id demo-replay-1 ran once (counter file: 1 line); the repeat with the same input returned the stored outcome (replayed:true, same pid) without running; another input under that id was a conflict; the counter still has 1 line", nil
}

func (d *demo) evidenceStep(ctx context.Context) (string, error) {
	a := d.app()
	path := filepath.Join(d.outDir, EvidenceName)
	if err := a.Ledger.ExportFile(ctx, path, 0); err != nil {
		return "", fmt.Errorf("write the bundle: %w", err)
	}
	// Offline: the file alone and the key the demo expects; no database.
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	rep, err := ledger.VerifyBundle(bytes.NewReader(raw), ledger.ExpectKey(a.Ledger.PublicKey()))
	if err != nil {
		return "", fmt.Errorf("offline verification of the bundle: %w", err)
	}
	kinds, err := bundleKinds(raw)
	if err != nil {
		return "", err
	}
	var missing []string
	for _, k := range []string{"intent", "outcome", "rule_added", "permit_requested", "permit_approved", "estop", "reset", "queue_resume"} {
		if kinds[k] == 0 {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("the verified ledger lacks entries of kind %s", strings.Join(missing, ", "))
	}
	d.evidence = &Evidence{Bundle: EvidenceName, Entries: rep.Entries, CheckpointSize: rep.CheckpointSize, RootHash: rep.RootHash,
		Origin: rep.Origin, PublicKey: rep.PublicKey, InclusionProofs: rep.InclusionProofs, Kinds: kinds}
	own, parts, err := d.conversationEvidence(ctx)
	if err != nil {
		return "", fmt.Errorf("the conversation's evidence over MCP: %w", err)
	}
	return fmt.Sprintf("exported %s and verified it offline (no database): %d entries hash-chained, checkpoint %d signed by %s, root %s, %d inclusion proofs; it records the permit, e-stop, reset and resume; "+
		"the conversation's own evidence, read as an MCP resource in %d part(s), verified offline too: %d entries, each proven included",
		EvidenceName, rep.Entries, rep.CheckpointSize, rep.Origin, rep.RootHash, rep.InclusionProofs, parts, own), nil
}

// bundleKinds counts the entry kinds of a bundle already verified.
func bundleKinds(raw []byte) (map[string]int, error) {
	var b struct {
		Entries []string `json:"entries"`
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		return nil, fmt.Errorf("read the bundle's entries: %w", err)
	}
	kinds := map[string]int{}
	for _, e := range b.Entries {
		var k struct {
			Kind string `json:"kind"`
		}
		if err := json.Unmarshal([]byte(e), &k); err != nil {
			return nil, fmt.Errorf("read a bundle entry: %w", err)
		}
		kinds[k.Kind]++
	}
	return kinds, nil
}
