// Package selftest is `hearth-tray selftest`: one command that proves, on
// the PC it runs on, the parts of Hearth that only Windows can run — UI
// Automation against a window of its own, the notification-area icon, the
// logon task and the Start-menu shortcut, junctions, long paths, a replace
// of a file another process holds open, and the Credential Manager.
//
// Every check runs against disposable fixtures the run creates and removes:
// its own temporary data directory (where an in-process Hearth serves on
// loopback ports), its own window in a child process, its own credential,
// task and shortcut names, all carrying the run's id. It never touches the
// user's windows, files, tasks or credentials. Each check prints one line,
// ok, FAIL with what happened, or skipped with why; a check is skipped
// only when probing shows the host lacks what it needs (UI Automation's
// COM server, a notification area, a Task Scheduler that reports what it
// registered), never because of a guess about which Windows this is.
//
// The ui checks drive the real ui tool through Hearth's MCP endpoint, the
// code path ChatGPT's calls take; the fallback input they send waits for a
// permit like any other, which the selftest approves through the operator
// API under the operator name "selftest", so the ledger records it.
package selftest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/hearth-dev/hearth/internal/removetree"
	"github.com/hearth-dev/hearth/internal/selftestreport"
	"github.com/hearth-dev/hearth/internal/tray"
	"github.com/hearth-dev/hearth/internal/uia"
)

// Operator is the operator name the selftest's permit approvals are
// journaled under.
const Operator = "selftest"

// ErrFailed is returned by Run when a check failed.
var ErrFailed = errors.New("selftest: a check failed")

// Options say where a run reports.
type Options struct {
	// Stdout gets one line per check.
	Stdout io.Writer
	// DataDir is the user's data directory: the report is saved there as
	// selftestreport.FileName for the control panel. Nothing else in it is read or
	// written. Empty: not saved.
	DataDir string
	// ReportPath, when set, gets a copy of the selftestreport.
	ReportPath string
	// Keep keeps the temporary directory (and says where it is).
	Keep    bool
	Version string
	// Exe is the program the fixtures' child processes run (this
	// hearth-tray, which answers Child); empty means os.Executable.
	Exe string
	Log *slog.Logger

	// checks replaces the check list (tests of the runner's reporting).
	checks func(*run) []check
	// uiProvider replaces the temporary Hearth's UI Automation, and
	// fixture the fixture child (tests of the ui checks against a named
	// fake desktop, where no Windows desktop exists).
	uiProvider uia.Provider
	fixture    func(*run) (*fixtureProc, error)
	// notify replaces the Windows notification area (tests of the
	// notification check, where there is none).
	notify func(tray.Notice) error
}

// Run runs every check and writes the selftestreport. Its error is ErrFailed when
// a check failed, or what kept the run from starting or reporting.
func Run(ctx context.Context, o Options) (*selftestreport.Report, error) {
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	r, err := newRun(o)
	if err != nil {
		return nil, err
	}
	rep := &selftestreport.Report{
		RunID: r.id, HearthVersion: o.Version, GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH,
		StartedAt: time.Now().UTC().Truncate(time.Millisecond),
		Fixtures:  r.fixtures(),
	}
	checks := r.checks()
	if o.checks != nil {
		checks = o.checks(r)
	}
	fmt.Fprintf(o.Stdout, "Hearth selftest %s (%s/%s), run %s: %d checks on disposable fixtures\n",
		o.Version, runtime.GOOS, runtime.GOARCH, r.id, len(checks))
	runChecks(ctx, checks, r.scrub, func(res selftestreport.Result) {
		rep.Add(res)
		fmt.Fprintln(o.Stdout, selftestreport.Line(res))
	})
	for _, res := range r.finish() {
		res.Detail = r.scrub.Scrub(res.Detail)
		rep.Add(res)
		fmt.Fprintln(o.Stdout, selftestreport.Line(res))
	}
	rep.FinishedAt = time.Now().UTC().Truncate(time.Millisecond)
	var werr error
	var saved []string
	if o.DataDir != "" {
		p := filepath.Join(o.DataDir, selftestreport.FileName)
		werr = selftestreport.Write(p, rep)
		saved = append(saved, p)
	}
	if o.ReportPath != "" {
		werr = errors.Join(werr, selftestreport.Write(o.ReportPath, rep))
		saved = append(saved, o.ReportPath)
	}
	fmt.Fprintf(o.Stdout, "%d ok, %d FAIL, %d skipped", rep.Counts.OK, rep.Counts.Fail, rep.Counts.Skipped)
	if len(saved) > 0 && werr == nil {
		fmt.Fprintf(o.Stdout, "; report %s", strings.Join(saved, " and "))
	}
	fmt.Fprintln(o.Stdout)
	if werr != nil {
		return rep, werr
	}
	if rep.Failed() {
		return rep, ErrFailed
	}
	return rep, nil
}

// newRunID is 8 random hex digits: enough that two runs (or a run and a
// leftover of a crashed one) never share a fixture name.
func newRunID() (string, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("selftest: run id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// run is one selftest run's state: its fixtures' names and places and the
// parts started for the checks, each torn down by finish.
type run struct {
	o       Options
	id      string
	exe     string
	base    string // the temporary directory; everything the run writes is under it
	dataDir string // the temporary Hearth's data directory
	root    string // its fs root
	outside string // a directory outside the root, for the escape checks
	scrub   *selftestreport.Scrubber

	hearth  *hearth
	fixture *fixtureProc
	plat    platformState
	// undo are the teardowns of what the checks made, run last first.
	undo []teardown
}

// teardown removes one fixture; its name says what in the finish line.
type teardown struct {
	what string
	fn   func() error
}

func newRun(o Options) (*run, error) {
	id, err := newRunID()
	if err != nil {
		return nil, err
	}
	exe := o.Exe
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("selftest: find this program: %w", err)
		}
	}
	base, err := os.MkdirTemp("", "hearth-selftest-"+id+"-")
	if err != nil {
		return nil, fmt.Errorf("selftest: make a temporary directory: %w", err)
	}
	// The fs tool compares real paths; a temporary directory behind a link
	// (or an 8.3 alias on Windows) would otherwise look like an escape.
	if real, err := realDir(base); err == nil {
		base = real
	}
	r := &run{
		o: o, id: id, exe: exe, base: base,
		dataDir: filepath.Join(base, "data"),
		root:    filepath.Join(base, "files"),
		outside: filepath.Join(base, "outside"),
	}
	for _, d := range []string{r.dataDir, r.root, r.outside} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			removetree.All(base)
			return nil, fmt.Errorf("selftest: %w", err)
		}
	}
	r.scrub = newScrubber(r)
	return r, nil
}

// newScrubber hides the machine's paths and the user's name from the
// selftestreport.
func newScrubber(r *run) *selftestreport.Scrubber {
	paths := map[string]string{
		r.root: "<fs-root>", r.outside: "<outside>", r.dataDir: "<selftest-data>", r.base: "<selftest-temp>",
		r.exe: "<program>", filepath.Dir(r.exe): "<program-dir>", os.TempDir(): "<temp>",
	}
	if h, err := os.UserHomeDir(); err == nil {
		paths[h] = "<home>"
	}
	if r.o.DataDir != "" {
		paths[r.o.DataDir] = "<data-dir>"
	}
	words := map[string]string{}
	for _, k := range []string{"USERNAME", "USER", "COMPUTERNAME", "USERDOMAIN"} {
		if v := os.Getenv(k); v != "" {
			words[v] = "<" + strings.ToLower(k) + ">"
		}
	}
	if h, err := os.Hostname(); err == nil {
		words[h] = "<hostname>"
	}
	return selftestreport.NewScrubber(paths, words)
}

// fixtures names what the run creates.
func (r *run) fixtures() selftestreport.Fixtures {
	return selftestreport.Fixtures{
		WindowTitle: FixtureTitle(r.id),
		Credential:  CredentialName(r.id),
		Task:        TaskName(r.id),
		Shortcut:    ShortcutName(r.id),
	}
}

// CredentialName is a run's credential (never the tunnel key's name).
func CredentialName(id string) string { return "selftest-" + id }

// TaskName is a run's copy of the logon task (never Hearth-Ensure itself).
func TaskName(id string) string { return "Hearth-Selftest-" + id }

// ShortcutName is a run's shortcut, made in the run's temporary directory.
func ShortcutName(id string) string { return "Hearth selftest " + id + ".lnk" }

// onFinish registers a teardown of a fixture a check made.
func (r *run) onFinish(what string, fn func() error) { r.undo = append(r.undo, teardown{what, fn}) }

// finish tears down what the checks made, last first, and then removes
// the temporary directory (unless Keep). A teardown that fails is a FAIL:
// the run promised to leave nothing behind.
func (r *run) finish() []selftestreport.Result {
	t0 := time.Now()
	var problems []string
	for i := len(r.undo) - 1; i >= 0; i-- {
		if err := r.undo[i].fn(); err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", r.undo[i].what, err))
		}
	}
	r.undo = nil
	res := selftestreport.Result{Name: "cleanup"}
	if r.o.Keep {
		res.Detail = fmt.Sprintf("removed the run's task, credential, windows and processes; kept its temporary directory %s (--keep)", r.base)
		fmt.Fprintf(r.o.Stdout, "kept the selftest's temporary directory: %s\n", r.base)
	} else {
		if err := removeAll(r.base); err != nil {
			problems = append(problems, fmt.Sprintf("remove the temporary directory: %v", err))
		}
		res.Detail = "removed every fixture and the temporary directory"
	}
	res.MS = time.Since(t0).Milliseconds()
	res.Status = selftestreport.OK
	if len(problems) > 0 {
		res.Status, res.Detail = selftestreport.Fail, "left behind: "+strings.Join(problems, "; ")
	}
	return []selftestreport.Result{res}
}

// removeAll removes dir, retrying briefly: on Windows a child process that
// just exited, or a scanner, can hold a file in it for a moment. It goes
// through removetree, which finishes where os.RemoveAll's POSIX-semantics
// delete is not implemented (Wine answers "Invalid function" to it).
func removeAll(dir string) error {
	var err error
	for i := range 20 {
		if err = removetree.All(dir); err == nil {
			return nil
		}
		time.Sleep(time.Duration(50*(i+1)) * time.Millisecond)
	}
	return err
}
