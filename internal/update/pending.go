package update

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/hearth-dev/hearth/internal/backup"
	"github.com/hearth-dev/hearth/internal/instance"
)

// pending is a hand-over under way, recorded in the update folder before
// the programs are swapped and removed once the new version is confirmed
// healthy or the previous one is back. If the Hearth watching the new
// version is killed during the health wait (a logoff, a shutdown, Task
// Manager), the next start finds it and puts the previous version back
// (Resume): without it the unchecked version would stay installed.
type pending struct {
	// ID is the attempt's id, given to the new program (attemptEnv).
	ID     string    `json:"id"`
	From   string    `json:"from"`
	To     string    `json:"to"`
	SHA256 string    `json:"sha256"`
	Backup string    `json:"backup,omitempty"`
	Args   []string  `json:"args,omitempty"`
	When   time.Time `json:"when"`
	Swap   swapped   `json:"swap"`
}

const pendingFile = "pending.json"

func pendingPath(dataDir string) string { return filepath.Join(Dir(dataDir), pendingFile) }

func removePending(dataDir string) {
	if err := os.Remove(pendingPath(dataDir)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		// Left behind, it would roll a healthy update back at the next
		// start: say so loudly.
		slog.Error("update: remove pending.json", "err", err)
	}
}

func attemptID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Refused is a release that rolled back on this PC, kept in
// <data>/update/refused.json: it is not offered or installed again (by the
// Update button or update.auto) until a newer release is published.
type Refused struct {
	Version string    `json:"version"`
	SHA256  string    `json:"sha256"`
	When    time.Time `json:"when"`
	// Started: the new version was started and did not become healthy;
	// false when the install stopped before (a backup or a file that
	// could not be replaced).
	Started bool `json:"started"`
	// Plain and Detail are the rollback's reason.
	Plain  string `json:"plain"`
	Detail string `json:"detail,omitempty"`
	// Unfinished counts the hand-overs to this release that were cut
	// short (the watching Hearth was killed during the health wait; see
	// Resume); 0 when it rolled back by itself.
	Unfinished int `json:"unfinished,omitempty"`
}

// UnfinishedTries is how many hand-overs to one release may be cut short
// before it is refused. A cut can be no fault of the release (the
// computer shut down during the health wait), so it is tried once more;
// a second cut refuses it, so a release that itself ends the Hearth
// watching it is not installed over and over by update.auto.
const UnfinishedTries = 2

// refuses reports whether r keeps its release from being offered or
// installed again.
func (r Refused) refuses() bool {
	return r.Unfinished == 0 || r.Unfinished >= UnfinishedTries
}

const refusedFile = "refused.json"

// ReadRefused reads the release that rolled back; ok is false when none
// did.
func ReadRefused(dataDir string) (Refused, bool, error) {
	var r Refused
	ok, err := readJSON(filepath.Join(Dir(dataDir), refusedFile), &r)
	return r, ok, err
}

// Resume finishes a hand-over that was cut short, at the start of the
// program h.Exe (version), before it opens its database. When a pending
// hand-over is on disk and no Hearth is watching it (the new program was
// not started by the watching Hearth, whose attempt it would carry, and no
// other Hearth runs), the watch was killed before it could decide: the
// previous program, tunnel-client, config and database are put back, the
// outcome says so, and when this program is the new version it starts the
// previous one (restarted: the caller exits at once). ok is false when
// there was nothing to resume.
func Resume(ctx context.Context, h Handoff, version string) (o Outcome, restarted, ok bool) {
	// The attempt's id is for this program only, not for what it starts.
	attempt := os.Getenv(attemptEnv)
	os.Unsetenv(attemptEnv)
	var p pending
	found, err := readJSON(pendingPath(h.DataDir), &p)
	if err != nil || !found {
		return Outcome{}, false, false
	}
	if attempt != "" && attempt == p.ID {
		return Outcome{}, false, false // the watched new version: Confirm finishes it
	}
	if held, err := instance.Held(instance.LockHearth, h.DataDir); err != nil || held {
		return Outcome{}, false, false // a Hearth runs: it is not ours to undo
	}
	now := h.Now
	if now == nil {
		now = time.Now
	}
	o = Outcome{From: p.From, To: p.To, Result: ResultRolledBack, When: now().UTC(),
		Plain:  "Hearth was stopped while it checked the new version " + Display(p.To) + " (the computer shut down, or Hearth was ended), so Hearth went back to version " + Display(p.From) + " and the database as it was before the update.",
		Detail: fmt.Sprintf("hand-over %s from %s, found unfinished at the start of version %s", p.ID, p.When.Format(time.RFC3339), version)}
	if err := p.Swap.undo(); err != nil {
		o.Detail += "\nput the previous program back: " + err.Error()
	}
	if p.Backup != "" {
		if _, err := backup.Restore(ctx, h.DataDir, p.Backup, "", now()); err != nil {
			o.Detail += "\nrestore the database: " + err.Error()
		}
	}
	if err := writeOutcome(h.DataDir, o); err != nil {
		o.Detail += "\nkeep the outcome: " + err.Error()
	}
	if err := refuseUnfinished(h.DataDir, p, o); err != nil {
		o.Detail += "\nremember the hand-over that did not finish: " + err.Error()
	}
	removePending(h.DataDir)
	if Compare(version, p.To) == 0 && Compare(p.To, p.From) != 0 {
		if _, _, err := startProgram(h, h.Exe, ""); err != nil {
			o.Detail += "\nstart the previous version again: " + err.Error()
			return o, false, true
		}
		return o, true, true
	}
	return o, false, true
}

// refuseUnfinished counts, in refused.json, the cut-short hand-over p to
// its release (Refused.Unfinished): the first time the release is still
// offered, the UnfinishedTries-th time it is refused.
func refuseUnfinished(dataDir string, p pending, o Outcome) error {
	n := 1
	if r, ok, err := ReadRefused(dataDir); err == nil && ok && r.Unfinished > 0 && Compare(r.Version, p.To) == 0 && r.SHA256 == p.SHA256 {
		n = r.Unfinished + 1
	}
	r := Refused{Version: p.To, SHA256: p.SHA256, When: o.When, Started: true, Unfinished: n, Plain: o.Plain, Detail: o.Detail}
	if n >= UnfinishedTries {
		r.Plain = fmt.Sprintf("Hearth was stopped %d times while it checked the new version %s, so Hearth will not install it again.", n, Display(p.To))
		r.Detail = o.Plain + "\n" + o.Detail
	}
	return writeJSON(filepath.Join(Dir(dataDir), refusedFile), r)
}

// Confirm ends the hand-over to version once that version serves: the
// pending record goes, and so do the leftovers of earlier updates beside
// exe. The watching Hearth does the same when it sees the new version
// healthy; Confirm covers a watch killed before it did.
func Confirm(dataDir, exe, version string) {
	var p pending
	if ok, err := readJSON(pendingPath(dataDir), &p); err != nil || !ok || Compare(p.To, version) != 0 {
		return
	}
	removePending(dataDir)
	removeLeftovers(exe)
}
