package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/jsonx"
)

// Bounds the demo sets and checks.
const (
	// spillLimit is the demo's max_output_bytes: small, so a modest output
	// spills to an artifact.
	spillLimit = 1024
	// spillLines is how many lines the spilling exec prints (32 bytes each).
	spillLines = 2000
	// rangeLimit is the size of each artifact.range read.
	rangeLimit = 8192
	// jobDelay keeps the dependent job queued while Hearth restarts.
	jobDelay = 2 * time.Second
)

// step is one named step of the demonstration.
type step struct {
	name string
	run  func(d *demo, ctx context.Context) (string, error)
}

// allSteps are docs/DESIGN.md, "The demo" in order. Each returns a one-line detail for the
// report, or an error saying what did not hold.
func allSteps() []step {
	return []step{
		{"discover_tools", (*demo).discoverTools},
		{"host_info", (*demo).hostInfo},
		{"operator_allow_rule", (*demo).allowRule},
		{"exec_spill_range", (*demo).execSpill},
		{"fs_patch_conflict_undo", (*demo).fsPatchUndo},
		{"scatter_future_ref", (*demo).scatter},
		{"jobs_across_restart", (*demo).jobsAcrossRestart},
		{"detached_arrival", (*demo).detached},
		{"recipe_run", (*demo).recipe},
		{"permit_approved", (*demo).permit},
		{"estop_reset_resume", (*demo).estop},
		{"command_id_replay", (*demo).replay},
		{"evidence_export_verify", (*demo).evidenceStep},
	}
}

// exec is machine.exec of the demo program in its child role.
func (d *demo) exec(cwd string, args ...string) map[string]any {
	m := map[string]any{"operation": "exec", "command": d.exe, "args": childArgs(args...)}
	if cwd != "" {
		m["cwd"] = cwd
	}
	return m
}

// job is one task.submit job running the demo program.
func (d *demo) job(args ...string) map[string]any {
	return map[string]any{"command": d.exe, "args": childArgs(args...), "cwd": d.root}
}

// expect fails with what the call answered unless cond holds.
func expect(cond bool, r *result, format string, a ...any) error {
	if cond {
		return nil
	}
	msg := fmt.Sprintf(format, a...)
	if r != nil {
		msg += ": " + r.Brief()
	}
	return errors.New(msg)
}

// completed calls and settles, and fails unless the outcome is completed.
func (d *demo) completed(ctx context.Context, what, tool string, args, meta map[string]any) (map[string]any, error) {
	r, err := d.c.call(ctx, tool, args, meta)
	if err != nil {
		return nil, err
	}
	env, err := d.c.settle(ctx, r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if jsonx.GetPath(env, "state") != "completed" {
		b, _ := json.Marshal(env)
		return nil, fmt.Errorf("%s: state %v, want completed: %.400s", what, jsonx.GetPath(env, "state"), b)
	}
	return env, nil
}

// readFile reads a file under the fs root through fs.read.
func (d *demo) readFile(ctx context.Context, path string) (string, error) {
	env, err := d.completed(ctx, "fs.read "+filepath.Base(path), "fs", map[string]any{"operation": "read", "path": path, "limit": 1 << 16}, nil)
	if err != nil {
		return "", err
	}
	s, _ := jsonx.GetPath(env, "result.data").(string)
	return s, nil
}

func (d *demo) discoverTools(ctx context.Context) (string, error) {
	if err := d.start(ctx); err != nil {
		return "", err
	}
	init := d.c.session.InitializeResult()
	if init == nil || init.ProtocolVersion != protocolVersion {
		got := ""
		if init != nil {
			got = init.ProtocolVersion
		}
		return "", fmt.Errorf("negotiated protocol %q, want %s (server/discover)", got, protocolVersion)
	}
	d.protocol = init.ProtocolVersion
	server := "Hearth"
	if init.ServerInfo != nil {
		server = init.ServerInfo.Name + " " + init.ServerInfo.Version
	}
	res, err := d.c.session.ListTools(ctx, nil)
	if err != nil {
		return "", fmt.Errorf("tools/list: %w", err)
	}
	var names []string
	for _, t := range res.Tools {
		names = append(names, t.Name)
	}
	sort.Strings(names)
	var missing []string
	for _, want := range []string{"machine", "fs", "task", "artifact", "run", "recipe"} {
		if !slices.Contains(names, want) {
			missing = append(missing, want)
		}
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("tools/list lacks %s (has %s)", strings.Join(missing, ", "), strings.Join(names, ", "))
	}
	ui := ""
	if !slices.Contains(names, "ui") {
		ui = " (ui is not served by this build)"
	}
	return fmt.Sprintf("%s answered server/discover with protocol %s; tools/list: %s%s", server, d.protocol, strings.Join(names, ", "), ui), nil
}

func (d *demo) hostInfo(ctx context.Context) (string, error) {
	r, err := d.c.hostInfo(ctx)
	if err != nil {
		return "", err
	}
	checks := []struct {
		path string
		want any
	}{
		{"state", "completed"},
		{"result.os", runtime.GOOS},
		{"result.hearth", d.opts.Version},
		{"result.policy_mode", config.ModeAsk},
		{"result.estop", false},
		{"result.limits.max_output_bytes", float64(spillLimit)},
	}
	for _, c := range checks {
		if got := r.Get(c.path); got != c.want {
			return "", expect(false, r, "host_info %s = %v, want %v", c.path, got, c.want)
		}
	}
	var unavailable []string
	for _, u := range r.Get("result.unavailable").([]any) {
		unavailable = append(unavailable, fmt.Sprint(u))
	}
	if len(unavailable) == 0 {
		unavailable = []string{"none"}
	}
	return fmt.Sprintf("%s/%s, Hearth %s, policy %s, e-stop released, max_output_bytes %d, unavailable: %s",
		r.Get("result.os"), r.Get("result.arch"), d.opts.Version, config.ModeAsk, spillLimit, strings.Join(unavailable, "; ")), nil
}

// globEscape makes a program path match only itself as an allow-rule
// pattern. Windows paths cannot be escaped (\ is the separator there), and
// their metacharacters are rare; the rule then matches a little more.
func globEscape(p string) string {
	if runtime.GOOS == "windows" {
		return p
	}
	var b strings.Builder
	for _, r := range p {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func (d *demo) execSpill(ctx context.Context) (string, error) {
	want := childLines(spillLines)
	env, err := d.completed(ctx, "exec", "machine", d.exec(d.root, "lines", fmt.Sprint(spillLines)), nil)
	if err != nil {
		return "", err
	}
	id, _ := jsonx.GetPath(env, "result.stdout.artifact.id").(string)
	preview, _ := jsonx.GetPath(env, "result.stdout.preview").(string)
	switch {
	case jsonx.GetPath(env, "result.exit_code") != float64(0):
		return "", fmt.Errorf("exit code %v", jsonx.GetPath(env, "result.exit_code"))
	case id == "":
		return "", fmt.Errorf("output of %d bytes did not spill to an artifact (max_output_bytes %d)", len(want), spillLimit)
	case jsonx.GetPath(env, "result.stdout.text") != nil:
		return "", fmt.Errorf("spilled output also returned inline")
	case len(preview) > spillLimit || !strings.HasPrefix(want, preview):
		return "", fmt.Errorf("preview of %d bytes is not a prefix of the output within %d bytes", len(preview), spillLimit)
	case jsonx.GetPath(env, "result.stdout.bytes") != float64(len(want)):
		return "", fmt.Errorf("stdout.bytes = %v, want %d", jsonx.GetPath(env, "result.stdout.bytes"), len(want))
	}
	var got strings.Builder
	ranges := 0
	for offset := 0; ; ranges++ {
		if ranges > len(want)/rangeLimit+2 {
			return "", fmt.Errorf("artifact range did not reach eof after %d reads", ranges)
		}
		// On a slow machine a read may outlast the inline budget and
		// answer pending; completed settles it from its arrival.
		env, err := d.completed(ctx, fmt.Sprintf("artifact.range at %d", offset), "artifact",
			map[string]any{"operation": "range", "id": id, "offset": offset, "limit": rangeLimit}, nil)
		if err != nil {
			return "", err
		}
		data, _ := jsonx.GetPath(env, "result.data").(string)
		got.WriteString(data)
		if jsonx.GetPath(env, "result.eof") == true {
			ranges++
			break
		}
		next, ok := jsonx.GetPath(env, "result.next_offset").(float64)
		if !ok || int(next) <= offset {
			b, _ := json.Marshal(env)
			return "", fmt.Errorf("artifact.range at %d: no progress: %.400s", offset, b)
		}
		offset = int(next)
	}
	if got.String() != want {
		return "", fmt.Errorf("artifact read back by range differs from what the child printed (%d bytes, want %d)", got.Len(), len(want))
	}
	return fmt.Sprintf("stdout %d bytes > max_output_bytes %d: preview %d bytes + artifact %s; read back in %d ranges of ≤%d bytes, identical",
		len(want), spillLimit, len(preview), id, ranges, rangeLimit), nil
}

func (d *demo) fsPatchUndo(ctx context.Context) (string, error) {
	file := filepath.Join(d.root, "notes.txt")
	const original = "first line\nsecond line\n"
	w, err := d.completed(ctx, "fs.write", "fs", map[string]any{"operation": "write", "path": file, "data": original, "expected_sha256": nil}, nil)
	if err != nil {
		return "", err
	}
	p, err := d.completed(ctx, "fs.patch", "fs", map[string]any{"operation": "patch", "path": file,
		"replacements": []any{map[string]any{"old": "first", "new": "1st"}}}, nil)
	if err != nil {
		return "", err
	}
	receipt, _ := jsonx.GetPath(p, "result.receipt_id").(string)
	if got, err := d.readFile(ctx, file); err != nil || got != "1st line\nsecond line\n" {
		return "", fmt.Errorf("after patch the file reads %q (%v)", got, err)
	}
	r, err := d.c.call(ctx, "fs", map[string]any{"operation": "patch", "path": file,
		"replacements": []any{map[string]any{"old": "line", "new": "row"}}}, nil)
	if err != nil {
		return "", err
	}
	if r.State() != "conflict" || !r.IsError || r.Get("error.details.matches") != float64(2) {
		return "", expect(false, r, "a patch whose old text occurs twice must be a conflict naming 2 matches")
	}
	if got, err := d.readFile(ctx, file); err != nil || got != "1st line\nsecond line\n" {
		return "", fmt.Errorf("the conflicting patch changed the file: %q (%v)", got, err)
	}
	if _, err := d.completed(ctx, "fs.undo", "fs", map[string]any{"operation": "undo", "receipt_id": receipt}, nil); err != nil {
		return "", err
	}
	if got, err := d.readFile(ctx, file); err != nil || got != original {
		return "", fmt.Errorf("after undo the file reads %q, want %q (%v)", got, original, err)
	}
	return fmt.Sprintf("write (receipt %s) → patch first→1st (receipt %s) → patch of \"line\" (2 matches) refused as conflict, file untouched → undo %s: original content restored",
		jsonx.GetPath(w, "result.receipt_id"), receipt, receipt), nil
}
