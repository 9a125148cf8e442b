package update

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hearth-dev/hearth/internal/atomicfile"
	"github.com/hearth-dev/hearth/internal/backup"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/instance"
)

// DefaultHealthWithin is how long a new version has to become healthy
// (listening, its database opened and migrated, its panel answering)
// before the previous one comes back.
const DefaultHealthWithin = 60 * time.Second

// Handoff is how the stopped Hearth hands over to a new version.
type Handoff struct {
	// Exe is the running program's file; Args and Env are what the new
	// one (and, on a rollback, this one again) is started with.
	Exe  string
	Args []string
	Env  []string
	// DataDir holds hearth.db, backups/ and update/; ConfigPath the
	// config file (its tunnel-client pin is re-pinned from the manifest).
	DataDir    string
	ConfigPath string
	// BackupKeep is backup_keep.
	BackupKeep int
	// HealthWithin bounds the new version's start; zero means
	// DefaultHealthWithin.
	HealthWithin time.Duration
	Log          *slog.Logger
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time
}

// Outcome is what became of an update, kept in <data>/update/outcome.json
// for the Status page of whichever version runs next.
type Outcome struct {
	From string    `json:"from"`
	To   string    `json:"to"`
	When time.Time `json:"when"`
	// Result is "updated" or "rolled-back".
	Result string `json:"result"`
	// Plain says what happened; Detail is the technical detail.
	Plain  string `json:"plain"`
	Detail string `json:"detail,omitempty"`
	// Recorded: the Hearth that ran next has written it into the ledger.
	Recorded bool `json:"recorded,omitempty"`
}

// Outcome results.
const (
	ResultUpdated    = "updated"
	ResultRolledBack = "rolled-back"
)

// Dir is the update folder in the data directory: downloads, unpacked
// programs, the started programs' output (start-*.log), the kept manifest
// (manifest.signed), a hand-over under way (pending.json), the release
// that rolled back (refused.json) and outcome.json.
func Dir(dataDir string) string { return filepath.Join(dataDir, "update") }

const outcomeFile = "outcome.json"

// previousName is where the replaced program waits beside the new one
// until the next update (a running program's file cannot be deleted on
// Windows, only renamed).
func previousName(path string) string {
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + ".previous" + ext
}

// Apply hands over to the new version in p. The Hearth that calls it has
// stopped serving and closed its database; the program file it runs from
// may still be running (it is renamed, never deleted). It backs the
// database up, records the hand-over on disk (pending.json: what to put
// back, so that a Hearth killed during the health wait is finished or
// rolled back at the next start, see Resume), moves the running program
// aside and the new one into its place (and the tunnel-client beside it,
// re-pinned with the manifest's SHA-256), starts the new program and waits
// for it to become healthy. If it does not in time, or exits, it is
// stopped, the previous program, tunnel-client, config and database come
// back, the release is remembered as refused (not offered or installed
// again until a newer one is published), and the previous program is
// started again. Either way the outcome is written for the Status page
// and returned; the caller then exits.
func Apply(ctx context.Context, p Plan, h Handoff) Outcome {
	now := h.Now
	if now == nil {
		now = time.Now
	}
	log := h.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	out := Outcome{From: p.From, To: p.To}
	finish := func(o Outcome) Outcome {
		o.When = now().UTC()
		if err := writeOutcome(h.DataDir, o); err != nil {
			log.Error("update: keep the outcome", "err", err)
		}
		return o
	}
	restart := func(o Outcome) Outcome {
		if _, _, err := startProgram(h, h.Exe, ""); err != nil {
			o.Detail += "\nstart the previous version again: " + err.Error()
		}
		return o
	}
	refuse := func(o Outcome, started bool) {
		r := Refused{Version: p.To, SHA256: p.SHA256, When: now().UTC(), Started: started, Plain: o.Plain, Detail: o.Detail}
		if err := writeJSON(filepath.Join(Dir(h.DataDir), refusedFile), r); err != nil {
			log.Error("update: remember the release that rolled back", "err", err)
		}
	}
	failBefore := func(plain string, err error) Outcome {
		o := out
		o.Result, o.Plain, o.Detail = ResultRolledBack, plain+"; Hearth stayed at version "+Display(p.From)+".", err.Error()
		o = finish(o)
		refuse(o, false)
		removePending(h.DataDir)
		return restart(o)
	}
	if err := os.MkdirAll(Dir(h.DataDir), 0o700); err != nil {
		return failBefore("Hearth did not update because it could not write in its update folder", err)
	}

	// 1. The database, as this version left it.
	db := filepath.Join(h.DataDir, backup.DBName)
	var saved backup.Info
	if _, err := os.Stat(db); err == nil {
		saved, err = backup.MakeFromFile(ctx, db, backup.Options{Dir: backup.Dir(h.DataDir), Keep: h.BackupKeep, Reason: backup.ReasonUpdate})
		if err != nil {
			return failBefore("Hearth did not update because it could not back up its database first", err)
		}
	}

	// 2. The hand-over on disk, then the programs swapped by renames in
	// the program folder.
	pend := pending{ID: attemptID(), From: p.From, To: p.To, SHA256: p.SHA256, Backup: saved.Path, Args: h.Args, When: now().UTC()}
	pend.Swap = planSwap(p, h)
	if err := writeJSON(pendingPath(h.DataDir), pend); err != nil {
		return failBefore("Hearth did not update because it could not record the update on disk first", err)
	}
	sw := &pend.Swap
	if err := sw.do(p, h); err != nil {
		return failBefore("Hearth did not update because it could not replace its program", err)
	}

	// 3. The new version, watched until healthy. Its outcome is written
	// first, for the new version's Status page to read as it starts; a
	// rollback (here, or at the next start when this watch is cut short)
	// overwrites it.
	updated := out
	updated.Result = ResultUpdated
	updated.Plain = "Hearth updated itself from version " + Display(p.From) + " to " + Display(p.To) + "."
	updated = finish(updated)
	cmd, logPath, err := startProgram(h, h.Exe, pend.ID)
	var exited chan error
	if err == nil {
		exited = make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		err = waitHealthy(ctx, cmd.Process.Pid, exited, h, p.To)
	}
	if err == nil {
		log.Info("update: new version healthy", "from", p.From, "to", p.To)
		removePending(h.DataDir)
		removeLeftovers(h.Exe)
		return updated
	}
	log.Error("update: new version not healthy; rolling back", "to", p.To, "err", err)
	if exited != nil {
		killTree(cmd.Process)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
		}
	}
	o := out
	o.Result = ResultRolledBack
	o.Plain = "Hearth tried to update to version " + Display(p.To) + ", but the new version did not start properly, so Hearth went back to version " + Display(p.From) + " and the database as it was before the update."
	o.Detail = err.Error()
	if tail := startLog(logPath); tail != "" {
		o.Detail += "\nthe new version's output:\n" + tail
	}
	if err := sw.undo(); err != nil {
		o.Detail += "\nput the previous program back: " + err.Error()
	}
	if saved.Path != "" {
		if _, err := backup.Restore(ctx, h.DataDir, saved.Path, "", now()); err != nil {
			o.Detail += "\nrestore the database: " + err.Error()
		}
	}
	o = finish(o)
	refuse(o, true)
	removePending(h.DataDir)
	return restart(o)
}

// swapped is a swap of the programs (planned, then done), and how to undo
// it; it is kept in pending.json, so that the next start can undo it too.
type swapped struct {
	Exe      string `json:"exe"`
	ExeAside string `json:"exe_aside"`
	// TC is the tunnel-client beside the program when the update carries
	// one (TCNew); TCAside where the previous one went ("" when there was
	// none).
	TC      string `json:"tc,omitempty"`
	TCAside string `json:"tc_aside,omitempty"`
	TCNew   bool   `json:"tc_new,omitempty"`
	// Config and ConfigBefore are the config file and its bytes before
	// the re-pin.
	Config       string `json:"config,omitempty"`
	ConfigBefore []byte `json:"config_before,omitempty"`
}

// planSwap names where the running program (and tunnel-client) go aside,
// and keeps the config as it is, before anything moves.
func planSwap(p Plan, h Handoff) swapped {
	dir := filepath.Dir(h.Exe)
	s := swapped{Exe: h.Exe, ExeAside: freeAside(previousName(h.Exe))}
	if p.NewTunnel != "" {
		s.TC, s.TCNew = filepath.Join(dir, TunnelClientName()), true
		if _, err := os.Stat(s.TC); err == nil {
			s.TCAside = freeAside(previousName(s.TC))
		}
	}
	if b, err := os.ReadFile(h.ConfigPath); err == nil {
		s.Config, s.ConfigBefore = h.ConfigPath, b
	}
	return s
}

// freeAside is name when an earlier update's file there can be removed,
// else the first free name.<n>: a stale previous program held open (an
// antivirus scan, a program still running from it) must not block an
// update. The numbered ones are removed once no longer needed
// (removeLeftovers).
func freeAside(name string) string {
	if err := os.Remove(name); err == nil || errors.Is(err, fs.ErrNotExist) {
		return name
	}
	for n := 1; ; n++ {
		alt := fmt.Sprintf("%s.%d", name, n)
		if err := os.Remove(alt); err == nil || errors.Is(err, fs.ErrNotExist) {
			return alt
		}
	}
}

// do moves the running program (and the tunnel-client beside it) aside
// and the new ones into place; a failure part way undoes what was done.
func (s *swapped) do(p Plan, h Handoff) error {
	dir := filepath.Dir(h.Exe)
	// Copied into the program folder first: the data folder may be on
	// another drive (a copy run from a download folder), and a rename
	// moves a file only within one.
	newExe, err := copyInto(p.NewExe, dir)
	if err != nil {
		return err
	}
	if err := os.Rename(h.Exe, s.ExeAside); err != nil {
		os.Remove(newExe)
		return fmt.Errorf("move the running program aside: %w", err)
	}
	if err := os.Rename(newExe, h.Exe); err != nil {
		os.Remove(newExe)
		return errors.Join(fmt.Errorf("move the new program in: %w", err), os.Rename(s.ExeAside, h.Exe))
	}
	if !s.TCNew {
		return nil
	}
	newTC, err := copyInto(p.NewTunnel, dir)
	if err != nil {
		return errors.Join(err, s.undo())
	}
	if s.TCAside != "" {
		if err := os.Rename(s.TC, s.TCAside); err != nil {
			os.Remove(newTC)
			return errors.Join(fmt.Errorf("move the tunnel-client aside: %w", err), s.undo())
		}
	}
	if err := os.Rename(newTC, s.TC); err != nil {
		os.Remove(newTC)
		return errors.Join(fmt.Errorf("move the new tunnel-client in: %w", err), s.undo())
	}
	if err := s.repin(p.TunnelSHA256); err != nil {
		return errors.Join(err, s.undo())
	}
	return nil
}

// repin sets the config's tunnel-client pin to the new hash when it pins
// the tunnel-client beside the program; another pinned file is the
// operator's choice and stays. Only that key of the file changes.
func (s *swapped) repin(sum string) error {
	if s.Config == "" {
		return nil
	}
	c, err := config.Parse(s.Config, s.ConfigBefore)
	if err != nil {
		return fmt.Errorf("re-pin tunnel-client: %w", err)
	}
	if c.Tunnel.ClientSHA256 == "" || !samePath(c.Tunnel.ClientPath, s.TC) {
		return nil
	}
	if err := config.SetNestedString(s.Config, []string{"tunnel", "client_sha256"}, sum); err != nil {
		return fmt.Errorf("re-pin tunnel-client: %w", err)
	}
	return nil
}

// undo puts the previous program, tunnel-client and config back. It
// reads what is on disk, not what was done, so it also finishes an undo
// (or a swap) cut short, at the next start (Resume).
func (s *swapped) undo() error {
	var errs []error
	if s.Config != "" {
		if now, err := os.ReadFile(s.Config); err != nil || !bytes.Equal(now, s.ConfigBefore) {
			if _, err := atomicfile.Write(s.Config, s.ConfigBefore, 0o600); err != nil {
				errs = append(errs, fmt.Errorf("restore the config: %w", err))
			}
		}
	}
	if s.TCNew {
		aside := s.TCAside != "" && exists(s.TCAside)
		if aside || s.TCAside == "" {
			failed := freeAside(s.TC + ".failed")
			if err := os.Rename(s.TC, failed); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("move the new tunnel-client out: %w", err))
			}
		}
		if aside {
			if err := os.Rename(s.TCAside, s.TC); err != nil {
				errs = append(errs, fmt.Errorf("put the previous tunnel-client back: %w", err))
			}
		}
	}
	if exists(s.ExeAside) {
		failed := freeAside(s.Exe + ".failed")
		if err := os.Rename(s.Exe, failed); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("move the new program out: %w", err))
		}
		if err := os.Rename(s.ExeAside, s.Exe); err != nil {
			errs = append(errs, fmt.Errorf("put the previous program back: %w", err))
		}
	}
	return errors.Join(errs...)
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// removeLeftovers deletes, beside exe, what earlier updates left and no
// one needs once an update is confirmed: numbered previous programs
// (hearth-tray.previous.exe.<n>) and the programs of rollbacks
// (.failed, .failed.<n>). One still held open stays until the next time.
// hearth-tray.previous.exe itself stays until the next update.
func removeLeftovers(exe string) {
	var names []string
	for _, base := range []string{exe, filepath.Join(filepath.Dir(exe), TunnelClientName())} {
		for _, pat := range []string{previousName(base) + ".*", base + ".failed", base + ".failed.*"} {
			m, _ := filepath.Glob(pat)
			names = append(names, m...)
		}
	}
	for _, n := range names {
		os.Remove(n)
	}
}

// copyInto copies src into a new file in dir (executable) and returns it.
func copyInto(src, dir string) (string, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", fmt.Errorf("copy the new program into %s: %w", dir, err)
	}
	defer in.Close()
	out, err := os.CreateTemp(dir, ".hearth-update-*")
	if err != nil {
		return "", fmt.Errorf("copy the new program into %s: %w", dir, err)
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(out.Name(), 0o755)
	}
	if err != nil {
		os.Remove(out.Name())
		return "", fmt.Errorf("copy the new program into %s: %w", dir, err)
	}
	return out.Name(), nil
}

// attemptEnv carries a hand-over's id to the program it starts, so that
// program knows the hand-over is watched (Resume leaves it alone) and can
// confirm it once it serves (Confirm).
const attemptEnv = "HEARTH_UPDATE_ATTEMPT"

// startProgram starts exe detached with h's arguments and environment
// (and attempt, when it is a hand-over's new program), its output in a
// new file of its own in the update folder (start-<time>-*.log): a
// program still writing to an earlier file cannot mix its lines into
// this one. It returns the file's path.
func startProgram(h Handoff, exe, attempt string) (*exec.Cmd, string, error) {
	if err := os.MkdirAll(Dir(h.DataDir), 0o700); err != nil {
		return nil, "", fmt.Errorf("start %s: %w", exe, err)
	}
	logf, err := os.CreateTemp(Dir(h.DataDir), "start-"+time.Now().UTC().Format("20060102T150405")+"-*.log")
	if err != nil {
		return nil, "", fmt.Errorf("start %s: %w", exe, err)
	}
	defer logf.Close()
	pruneStartLogs(h.DataDir, logf.Name())
	cmd := exec.Command(exe, h.Args...)
	cmd.Env = withoutEnv(h.Env, attemptEnv)
	if attempt != "" {
		cmd.Env = append(cmd.Env, attemptEnv+"="+attempt)
	}
	cmd.Dir = filepath.Dir(exe)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd, err = detach(cmd)()
	if err != nil {
		return nil, "", fmt.Errorf("start %s: %w", exe, err)
	}
	return cmd, logf.Name(), nil
}

// keepStartLogs is how many programs' output files the update folder
// keeps (the running program's among them).
const keepStartLogs = 4

// pruneStartLogs removes all but the newest start logs, never keep.
func pruneStartLogs(dataDir, keep string) {
	logs, _ := filepath.Glob(filepath.Join(Dir(dataDir), "start-*.log"))
	sort.Strings(logs) // by the time in their names
	for i := 0; i < len(logs)-keepStartLogs; i++ {
		if logs[i] != keep {
			os.Remove(logs[i])
		}
	}
}

// StartLog is the newest program output file in the update folder (the
// program a hand-over started last), or "" when there is none.
func StartLog(dataDir string) string {
	logs, _ := filepath.Glob(filepath.Join(Dir(dataDir), "start-*.log"))
	var newest string
	var when time.Time
	for _, l := range logs {
		if fi, err := os.Stat(l); err == nil && !fi.ModTime().Before(when) {
			newest, when = l, fi.ModTime()
		}
	}
	return newest
}

func withoutEnv(env []string, key string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// startLog is the end of a program's output file, for a rollback's
// detail: printable text only (no NUL or other control bytes).
func startLog(path string) string {
	if path == "" {
		return ""
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	text := strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || (r >= ' ' && r != 0x7f && r != utf8.RuneError) {
			return r
		}
		return -1
	}, string(b))
	return strings.TrimSpace(text)
}

// waitHealthy waits until the program started as pid is healthy: it published
// instance.json with its own process id and version to (so it holds the
// instance lock, opened and migrated the database and listens), and its
// control panel answers. It fails when the program exits (exited) or HealthWithin passes.
func waitHealthy(ctx context.Context, pid int, exited chan error, h Handoff, version string) error {
	within := orDefault(h.HealthWithin, DefaultHealthWithin)
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	last := "it published no address"
	for {
		select {
		case err := <-exited:
			exited <- err // for the caller, which waits for the exit too
			if err == nil {
				err = errors.New("exit code 0")
			}
			return fmt.Errorf("the new version stopped at once (%v)", err)
		case <-ctx.Done():
			return fmt.Errorf("the new version was not healthy within %s: %s", within, last)
		case <-tick.C:
		}
		info, err := instance.ReadInfo(h.DataDir)
		switch {
		case err != nil:
			continue
		case info.PID != pid:
			last = fmt.Sprintf("instance.json names process %d, not %d", info.PID, pid)
			continue
		case Compare(info.Version, version) != 0 || info.Version == "":
			last = fmt.Sprintf("the program that started says it is version %q, not %q", info.Version, version)
			continue
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(info.PanelURL, "/")+"/static/icon.png", nil)
		resp, err := client.Do(req)
		if err != nil {
			last = "its control panel does not answer: " + err.Error()
			continue
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			last = "its control panel answers " + resp.Status
			continue
		}
		return nil
	}
}

func writeOutcome(dataDir string, o Outcome) error {
	if err := os.MkdirAll(Dir(dataDir), 0o700); err != nil {
		return err
	}
	return writeJSON(filepath.Join(Dir(dataDir), outcomeFile), o)
}

// ReadOutcome reads the last update's outcome; ok is false when there was
// none.
func ReadOutcome(dataDir string) (Outcome, bool, error) {
	var o Outcome
	ok, err := readJSON(filepath.Join(Dir(dataDir), outcomeFile), &o)
	return o, ok, err
}

func samePath(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	ca, err1 := filepath.Abs(a)
	cb, err2 := filepath.Abs(b)
	if err1 != nil || err2 != nil {
		return false
	}
	if ra, err := filepath.EvalSymlinks(ca); err == nil {
		ca = ra
	}
	if rb, err := filepath.EvalSymlinks(cb); err == nil {
		cb = rb
	}
	if strings.EqualFold(filepath.VolumeName(ca), "") {
		return ca == cb
	}
	return strings.EqualFold(ca, cb)
}
