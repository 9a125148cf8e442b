package update

import (
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
	"strings"
	"time"

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
// programs, the new program's start log and outcome.json.
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
// database up, moves the running program aside and the new one into its
// place (and the tunnel-client beside it, re-pinned with the manifest's
// SHA-256), starts the new program and waits for it to become healthy.
// If it does not in time, or exits, it is stopped, the previous program,
// tunnel-client, config and database come back, and the previous program
// is started again. Either way the outcome is written for the Status page
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
		if _, err := startProgram(h, h.Exe); err != nil {
			o.Detail += "\nstart the previous version again: " + err.Error()
		}
		return o
	}
	failBefore := func(plain string, err error) Outcome {
		o := out
		o.Result, o.Plain, o.Detail = ResultRolledBack, plain+"; Hearth stayed at version "+Display(p.From)+".", err.Error()
		o = finish(o)
		return restart(o)
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

	// 2. The programs, swapped by renames in the program folder.
	sw, err := swap(p, h)
	if err != nil {
		return failBefore("Hearth did not update because it could not replace its program", err)
	}

	// 3. The new version, watched until healthy. Its outcome is written
	// first, for the new version's Status page to read as it starts; a
	// rollback overwrites it.
	updated := out
	updated.Result = ResultUpdated
	updated.Plain = "Hearth updated itself from version " + Display(p.From) + " to " + Display(p.To) + "."
	updated = finish(updated)
	cmd, err := startProgram(h, h.Exe)
	var exited chan error
	if err == nil {
		exited = make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		err = waitHealthy(ctx, cmd.Process.Pid, exited, h, p.To)
	}
	if err == nil {
		log.Info("update: new version healthy", "from", p.From, "to", p.To)
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
	if tail := startLog(h.DataDir); tail != "" {
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
	return restart(o)
}

// swapped is a done swap, and how to undo it.
type swapped struct {
	exe, exeAside   string
	tc, tcAside     string
	tcNew           bool
	config          string
	configBefore    []byte
	configRewritten bool
}

// swap moves the running program (and the tunnel-client beside it) aside
// and the new ones into place; a failure part way undoes what was done.
func swap(p Plan, h Handoff) (*swapped, error) {
	dir := filepath.Dir(h.Exe)
	s := &swapped{exe: h.Exe, exeAside: previousName(h.Exe)}
	// Copied into the program folder first: the data folder may be on
	// another drive (a copy run from a download folder), and a rename
	// moves a file only within one.
	newExe, err := copyInto(p.NewExe, dir)
	if err != nil {
		return nil, err
	}
	removeStale(s.exeAside)
	if err := os.Rename(h.Exe, s.exeAside); err != nil {
		os.Remove(newExe)
		return nil, fmt.Errorf("move the running program aside: %w", err)
	}
	if err := os.Rename(newExe, h.Exe); err != nil {
		os.Remove(newExe)
		return nil, errors.Join(fmt.Errorf("move the new program in: %w", err), os.Rename(s.exeAside, h.Exe))
	}
	if p.NewTunnel == "" {
		return s, nil
	}
	s.tc = filepath.Join(dir, TunnelClientName())
	s.tcAside = previousName(s.tc)
	newTC, err := copyInto(p.NewTunnel, dir)
	if err != nil {
		return nil, errors.Join(err, s.undo())
	}
	removeStale(s.tcAside)
	if err := os.Rename(s.tc, s.tcAside); err != nil && !errors.Is(err, fs.ErrNotExist) {
		os.Remove(newTC)
		return nil, errors.Join(fmt.Errorf("move the tunnel-client aside: %w", err), s.undo())
	} else if err != nil {
		s.tcAside = ""
	}
	s.tcNew = true
	if err := os.Rename(newTC, s.tc); err != nil {
		os.Remove(newTC)
		return nil, errors.Join(fmt.Errorf("move the new tunnel-client in: %w", err), s.undo())
	}
	if err := s.repin(h.ConfigPath, p.TunnelSHA256); err != nil {
		return nil, errors.Join(err, s.undo())
	}
	return s, nil
}

// repin sets the config's tunnel-client pin to the new hash when it pins
// the tunnel-client beside the program; another pinned file is the
// operator's choice and stays.
func (s *swapped) repin(path, sum string) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the config to re-pin tunnel-client: %w", err)
	}
	c, err := config.Parse(path, b)
	if err != nil {
		return fmt.Errorf("re-pin tunnel-client: %w", err)
	}
	if c.Tunnel.ClientSHA256 == "" || !samePath(c.Tunnel.ClientPath, s.tc) {
		return nil
	}
	s.config, s.configBefore = path, b
	c.Tunnel.ClientSHA256 = sum
	if err := config.Write(path, c); err != nil {
		return fmt.Errorf("re-pin tunnel-client: %w", err)
	}
	s.configRewritten = true
	return nil
}

// undo puts the previous program, tunnel-client and config back.
func (s *swapped) undo() error {
	var errs []error
	if s.configRewritten {
		if err := os.WriteFile(s.config, s.configBefore, 0o600); err != nil {
			errs = append(errs, fmt.Errorf("restore the config: %w", err))
		}
	}
	if s.tcNew {
		failed := s.tc + ".failed"
		removeStale(failed)
		if err := os.Rename(s.tc, failed); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("move the new tunnel-client out: %w", err))
		}
		if s.tcAside != "" {
			if err := os.Rename(s.tcAside, s.tc); err != nil {
				errs = append(errs, fmt.Errorf("put the previous tunnel-client back: %w", err))
			}
		}
	}
	failed := s.exe + ".failed"
	removeStale(failed)
	if err := os.Rename(s.exe, failed); err != nil && !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, fmt.Errorf("move the new program out: %w", err))
	}
	if err := os.Rename(s.exeAside, s.exe); err != nil {
		errs = append(errs, fmt.Errorf("put the previous program back: %w", err))
	}
	return errors.Join(errs...)
}

// removeStale deletes a file an earlier update left (the program before
// the previous one). On Windows it may still be running (deletion then
// fails and the rename over it replaces nothing); that is harmless, as
// only the name is reused.
func removeStale(path string) {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		// A running program's file: give the name back by moving it.
		os.Rename(path, path+fmt.Sprintf(".%d", time.Now().UnixNano()))
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

// startProgram starts exe detached with h's arguments and environment,
// its output appended to <data>/update/start.log.
func startProgram(h Handoff, exe string) (*exec.Cmd, error) {
	if err := os.MkdirAll(Dir(h.DataDir), 0o700); err != nil {
		return nil, fmt.Errorf("start %s: %w", exe, err)
	}
	logf, err := os.OpenFile(filepath.Join(Dir(h.DataDir), "start.log"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", exe, err)
	}
	defer logf.Close()
	cmd := exec.Command(exe, h.Args...)
	cmd.Env = h.Env
	cmd.Dir = filepath.Dir(exe)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd, err = detach(cmd)()
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", exe, err)
	}
	return cmd, nil
}

// startLog is the end of the new program's output, for the rollback's
// detail.
func startLog(dataDir string) string {
	b, err := os.ReadFile(filepath.Join(Dir(dataDir), "start.log"))
	if err != nil {
		return ""
	}
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return strings.TrimSpace(string(b))
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
