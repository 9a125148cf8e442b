// Package demo is Hearth's end-to-end demonstration (docs/DESIGN.md, "The demo"), the
// definition of "done": it starts Hearth in-process on a temporary data
// directory and free loopback ports, drives it through one real MCP client
// (go-sdk, protocol 2026-07-28) across every promise Hearth makes — tools,
// bounded output, fs receipts, futures, durable jobs across a restart,
// detached results, recipes, permits, the e-stop, command-id replay — and
// ends by exporting the evidence bundle and verifying it offline. It needs
// no network, no LLM and no Windows: every program it runs is the demo
// program itself in its child role (see ChildArg).
//
// The operator's actions (an allow-rule, a permit approval, the e-stop
// reset and queue resume) go through App.Operator, the same API the
// control panel and CLI use; no tool call can reach them.
package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/hearth-dev/hearth/internal/app"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/removetree"
)

// Options configure a demo run.
type Options struct {
	// Out is the report file (default demo-report.json in the working
	// directory). The evidence bundle is written beside it.
	Out string
	// Keep leaves the temporary data directory and fs root in place.
	Keep bool
	// Version is the Hearth version recorded in the report.
	Version string
	// Stdout receives one progress line per step (nil: discarded).
	Stdout io.Writer
	// Log receives Hearth's own log (nil: discarded).
	Log *slog.Logger
	// AfterStep, when set, runs after each step that held; an error makes
	// that step fail. Tests use it to prove a failure is named.
	AfterStep func(step string) error
}

// DefaultOut is the report file name.
const DefaultOut = "demo-report.json"

// EvidenceName is the evidence bundle's file name, beside the report.
const EvidenceName = "demo-evidence.json"

// Conversation is the demo client's _meta["hearth/conversation"].
const Conversation = "hearth-demo"

// operator is the name the demo's operator actions are journaled under.
const operator = "demo-operator"

// Step is one step of the report.
type Step struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	MS     int64  `json:"ms"`
}

// Report is demo-report.json. Every path in it is relative to the
// report's directory.
type Report struct {
	OK            bool      `json:"ok"`
	HearthVersion string    `json:"hearth_version"`
	GoVersion     string    `json:"go_version"`
	OS            string    `json:"os"`
	Arch          string    `json:"arch"`
	Protocol      string    `json:"protocol,omitempty"`
	PolicyMode    string    `json:"policy_mode"`
	StartedAt     time.Time `json:"started_at"`
	Steps         []Step    `json:"steps"`
	Totals        Totals    `json:"totals"`
	Evidence      *Evidence `json:"evidence,omitempty"`
	// Failure names the failed step and why, when OK is false.
	Failure string `json:"failure,omitempty"`
}

// Totals sums up the steps.
type Totals struct {
	Steps     int   `json:"steps"`
	Passed    int   `json:"passed"`
	Failed    int   `json:"failed"`
	NotRun    int   `json:"not_run"`
	ToolCalls int   `json:"tool_calls"`
	MS        int64 `json:"ms"`
}

// Evidence is what the offline verification of the exported bundle found.
type Evidence struct {
	Bundle          string `json:"bundle"`
	Entries         int64  `json:"entries"`
	CheckpointSize  int64  `json:"checkpoint_size"`
	RootHash        string `json:"root_hash"`
	Origin          string `json:"origin"`
	PublicKey       string `json:"public_key"`
	InclusionProofs int    `json:"inclusion_proofs"`
	// Kinds counts the verified entries by kind.
	Kinds map[string]int `json:"kinds"`
}

// StepNames lists the steps in the order they run.
func StepNames() []string {
	steps := allSteps()
	names := make([]string, len(steps))
	for i, s := range steps {
		names[i] = s.name
	}
	return names
}

// StepError is the error Run returns when a step did not hold.
type StepError struct {
	Step string
	Err  error
}

func (e *StepError) Error() string { return fmt.Sprintf("demo step %q failed: %v", e.Step, e.Err) }

func (e *StepError) Unwrap() error { return e.Err }

// demo is one run's state.
type demo struct {
	opts    Options
	base    string // temporary directory holding data and files
	dataDir string
	root    string // the fs root
	outDir  string
	exe     string // the demo program, run as the child
	cfgPath string

	inst *app.Running // the running Hearth, in-process on loopback; nil while stopped
	c    *client

	// Filled in by steps for the report.
	evidence *Evidence
	protocol string
}

// Run runs the demonstration and writes the report. It returns nil only if
// every step held; otherwise a *StepError naming the first failed step (or
// the error that kept the demo from starting or stopping cleanly).
func Run(ctx context.Context, opts Options) (err error) {
	if opts.Out == "" {
		opts.Out = DefaultOut
	}
	if opts.Stdout == nil {
		opts.Stdout = io.Discard
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	d := &demo{opts: opts, outDir: filepath.Dir(opts.Out)}
	if d.exe, err = os.Executable(); err != nil {
		return fmt.Errorf("demo: find the demo program: %w", err)
	}
	if err := d.prepare(); err != nil {
		return err
	}
	defer d.cleanup()

	rep := &Report{
		HearthVersion: opts.Version, GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH,
		PolicyMode: config.ModeAsk, StartedAt: time.Now().UTC().Truncate(time.Millisecond),
	}
	fmt.Fprintf(opts.Stdout, "Hearth demo %s (%s, %s/%s): %d steps, policy %q, one MCP client\n",
		opts.Version, rep.GoVersion, rep.OS, rep.Arch, len(allSteps()), config.ModeAsk)
	start := time.Now()
	runErr := d.runSteps(ctx, rep)
	if serr := d.stop(); serr != nil && runErr == nil {
		runErr = fmt.Errorf("demo: stop Hearth: %w", serr)
		rep.Failure = d.scrub(runErr.Error())
	}
	rep.Totals.MS = time.Since(start).Milliseconds()
	rep.Totals.ToolCalls = d.c.calls
	rep.Protocol = d.protocol
	rep.Evidence = d.evidence
	rep.OK = runErr == nil
	if werr := writeReport(opts.Out, rep); werr != nil {
		return errors.Join(runErr, werr)
	}
	if rep.OK {
		fmt.Fprintf(opts.Stdout, "all %d steps held in %.1f s; report %s, evidence %s\n",
			rep.Totals.Passed, float64(rep.Totals.MS)/1000, filepath.Clean(opts.Out), filepath.Join(d.outDir, EvidenceName))
	} else {
		fmt.Fprintf(opts.Stdout, "FAILED: %s; report %s\n", rep.Failure, filepath.Clean(opts.Out))
	}
	return runErr
}

// prepare makes the temporary data directory and fs root and writes the
// demo's config.
func (d *demo) prepare() error {
	base, err := os.MkdirTemp("", "hearth-demo-")
	if err != nil {
		return fmt.Errorf("demo: make a temporary directory: %w", err)
	}
	// The fs tool compares real paths; a temp dir behind a symlink (macOS
	// /var) would otherwise look like an escape.
	if real, err := filepath.EvalSymlinks(base); err == nil {
		base = real
	}
	d.base = base
	d.dataDir = filepath.Join(base, "data")
	d.root = filepath.Join(base, "files")
	for _, dir := range []string{d.dataDir, d.root} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			removetree.All(base)
			return fmt.Errorf("demo: %w", err)
		}
	}
	if d.outDir != "" {
		if err := os.MkdirAll(d.outDir, 0o755); err != nil {
			removetree.All(base)
			return fmt.Errorf("demo: output directory: %w", err)
		}
	}
	cfg := config.Default()
	cfg.Roots = []string{d.root}
	cfg.Policy.Mode = config.ModeAsk
	cfg.MCPAddr, cfg.PanelAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.MaxOutputBytes = spillLimit
	d.cfgPath = filepath.Join(d.dataDir, "config.json")
	if err := config.Write(d.cfgPath, cfg); err != nil {
		removetree.All(base)
		return fmt.Errorf("demo: %w", err)
	}
	d.c = newClient(d.opts.Version, Conversation)
	return nil
}

func (d *demo) cleanup() {
	d.c.close()
	if d.opts.Keep {
		fmt.Fprintf(d.opts.Stdout, "kept the demo's data directory and fs root in %s\n", d.base)
		return
	}
	if err := removetree.All(d.base); err != nil {
		fmt.Fprintf(d.opts.Stdout, "could not remove %s: %v\n", d.base, err)
	}
}

// runSteps runs every step in order and stops at the first that fails;
// the rest are reported as not run.
func (d *demo) runSteps(ctx context.Context, rep *Report) error {
	steps := allSteps()
	var failed error
	for i, s := range steps {
		if failed != nil {
			rep.Steps = append(rep.Steps, Step{Name: s.name, Detail: "not run: an earlier step failed"})
			rep.Totals.NotRun++
			continue
		}
		t0 := time.Now()
		detail, err := d.runStep(ctx, s)
		st := Step{Name: s.name, OK: err == nil, Detail: d.scrub(detail), MS: time.Since(t0).Milliseconds()}
		mark := "ok  "
		if err != nil {
			mark = "FAIL"
			st.Detail = d.scrub(err.Error())
			failed = &StepError{Step: s.name, Err: errors.New(st.Detail)}
			rep.Failure = failed.Error()
			rep.Totals.Failed++
		} else {
			rep.Totals.Passed++
		}
		rep.Steps = append(rep.Steps, st)
		fmt.Fprintf(d.opts.Stdout, "[%2d/%d] %s %-24s %5d ms  %s\n", i+1, len(steps), mark, s.name, st.MS, st.Detail)
	}
	rep.Totals.Steps = len(steps)
	return failed
}

func (d *demo) runStep(ctx context.Context, s step) (detail string, err error) {
	defer func() {
		// A step is demo code exercising a live server; a panic in it is a
		// failed step with a name, not a crashed demo.
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	detail, err = s.run(d, ctx)
	if err == nil && d.opts.AfterStep != nil {
		err = d.opts.AfterStep(s.name)
	}
	return detail, err
}

// scrub replaces this machine's paths in text meant for the report with
// stable placeholders, so the report holds relative paths only.
func (d *demo) scrub(s string) string {
	type sub struct{ path, with string }
	subs := []sub{{d.root, "<fs-root>"}, {d.dataDir, "<data-dir>"}, {d.base, "<demo-temp>"}, {d.exe, "<demo-program>"}}
	if abs, err := filepath.Abs(d.outDir); err == nil && d.outDir != "" {
		subs = append(subs, sub{abs, "<out-dir>"})
	}
	if tmp := os.TempDir(); tmp != "" {
		subs = append(subs, sub{tmp, "<temp>"})
	}
	for _, r := range subs {
		if r.path == "" || r.path == "." || r.path == string(filepath.Separator) {
			continue
		}
		s = strings.ReplaceAll(s, r.path, r.with)
		if esc, err := json.Marshal(r.path); err == nil { // as it appears inside JSON text
			s = strings.ReplaceAll(s, strings.Trim(string(esc), `"`), r.with)
		}
	}
	return s
}

func writeReport(path string, rep *Report) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // the report is read by people: keep <fs-root> and → as they are
	enc.SetIndent("", "  ")
	if err := enc.Encode(rep); err != nil {
		return fmt.Errorf("demo: encode report: %w", err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("demo: write report: %w", err)
	}
	return nil
}

// start opens Hearth on the demo's data directory, serves it and connects
// the client. The app runs on its own context, a child of ctx.
func (d *demo) start(ctx context.Context) error {
	h, err := app.Start(ctx, app.Options{DataDir: d.dataDir, ConfigPath: d.cfgPath, Version: d.opts.Version, Log: d.opts.Log})
	if err != nil {
		return fmt.Errorf("start Hearth: %w", err)
	}
	d.inst = h
	return d.c.connect(ctx, h.MCPURL())
}

// stop shuts the running Hearth down in its own order (stop accepting,
// cancel work, wait, sign a checkpoint) and closes its database.
func (d *demo) stop() error {
	h := d.inst
	if h == nil {
		return nil
	}
	d.inst = nil
	d.c.close()
	stopped := make(chan error, 1)
	go func() { stopped <- h.Stop() }()
	select {
	case err := <-stopped:
		return err
	case <-time.After(30 * time.Second):
		return errors.New("serve did not return within 30 s of cancellation")
	}
}

// app returns the running Hearth.
func (d *demo) app() *app.App { return d.inst.App }
