// Package doctor is `hearth-tray doctor`: read-only support checks of a
// Hearth's config, data directory, database, ledger, running instance,
// ports, backups, storage, tunnel setup and autostart.
package doctor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/hearth-dev/hearth/internal/app"
	"github.com/hearth-dev/hearth/internal/autostart"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/instance"
	"github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/internal/secrets"
	"github.com/hearth-dev/hearth/internal/store"
	"github.com/hearth-dev/hearth/internal/tunnel"
)

// Doctor check outcomes, as printed at the start of each line.
const (
	checkOK   = "ok"
	checkWarn = "warn"
	checkFail = "FAIL"
)

// ErrFailed is Run's error when at least one check failed; the lines
// above it say which and how to fix them.
var ErrFailed = errors.New("doctor: something is wrong (see the FAIL lines above)")

// doctor runs the read-only support checks of `hearth-tray doctor`. It
// never changes hearth.db, config.json or the ledger, and creates no file of
// its own: the config is parsed, not created; the data directory's
// writability is asked of the operating system, not tried with a file; the
// database is opened read-only, not migrated; the ledger key is loaded, not
// generated; the secrets store is looked at only where it exists. The one
// trace it may leave is SQLite's: opening hearth.db of a stopped Hearth,
// even read-only, creates hearth.db-wal and hearth.db-shm beside it, and a
// read-only connection cannot remove them (the next Hearth start does).
//
// It is safe to run while Hearth runs, and it stays out of the way of a
// Hearth that starts while it runs: the ensure lock is never touched, the
// Hearth lock is only asked about (instance.Held: on Windows without taking
// it, elsewhere for an instant), and the configured ports are bound, for an
// instant, only when no Hearth holds the lock.
type doctor struct {
	out                 io.Writer
	dataDir, configPath string
	// homeExists: the data directory exists (Hearth has run once); checks
	// that would create files in it are skipped otherwise.
	homeExists bool
	cfg        config.Config
	// lockHeld: a Hearth holds the instance lock; lockKnown: the probe
	// answered (the port checks bind only when it said nobody holds it).
	lockHeld, lockKnown bool
	// running is the instance found running, if any.
	running *instance.Info
	fails   int
	warns   int
	http    *http.Client
}

func (d *doctor) line(status, check, detail string) {
	switch status {
	case checkFail:
		d.fails++
	case checkWarn:
		d.warns++
	}
	fmt.Fprintf(d.out, "%-4s  %s: %s\n", status, check, detail)
}

// Options are what one doctor run looks at and where it writes.
type Options struct {
	// Out receives one line per check and the summary.
	Out io.Writer
	// DataDir and ConfigPath are the data directory and config file of the
	// Hearth being checked.
	DataDir, ConfigPath string
	// Version is the hearth-tray version printed on the first line.
	Version string
}

// Run runs every check (`hearth-tray doctor`): one line per check, then a
// summary. It returns ErrFailed when at least one check failed.
func Run(ctx context.Context, opts Options) error {
	d := &doctor{out: opts.Out, dataDir: opts.DataDir, configPath: opts.ConfigPath, http: newHTTPClient()}
	d.line(checkOK, "version", fmt.Sprintf("hearth-tray %s (%s/%s)", opts.Version, runtime.GOOS, runtime.GOARCH))
	d.checkDataDir()
	d.checkConfig()
	d.checkLoopback()
	d.checkInstance(ctx)
	d.checkPort("MCP port", "mcp_addr", d.cfg.MCPAddr, func(i instance.Info) string { return i.MCPURL })
	d.checkPort("panel port", "panel_addr", d.cfg.PanelAddr, func(i instance.Info) string { return i.PanelURL })
	d.checkDatabase(ctx)
	d.checkBackups()
	d.checkStorage(ctx)
	d.checkTunnel()
	d.checkWake()
	d.checkAutostart()
	switch {
	case d.fails > 0:
		fmt.Fprintf(d.out, "\n%d check(s) failed, %d warning(s).\n", d.fails, d.warns)
		return ErrFailed
	case d.warns > 0:
		fmt.Fprintf(d.out, "\nNothing failed; %d warning(s) about optional or not-yet-done setup.\n", d.warns)
	default:
		fmt.Fprintln(d.out, "\nEverything looks right.")
	}
	return nil
}

// checkDataDir: the data directory exists and the operating system says
// this user may create files in it (dirWritable; no file is created).
func (d *doctor) checkDataDir() {
	const name = "data directory"
	st, err := os.Stat(d.dataDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		d.line(checkWarn, name, fmt.Sprintf("%s does not exist yet; Hearth creates it on its first start", d.dataDir))
		return
	case err != nil:
		d.line(checkFail, name, fmt.Sprintf("%s: %v", d.dataDir, err))
		return
	case !st.IsDir():
		d.line(checkFail, name, fmt.Sprintf("%s is not a directory; move it away or set HEARTH_HOME", d.dataDir))
		return
	}
	d.homeExists = true
	if err := dirWritable(d.dataDir); err != nil {
		d.line(checkFail, name, fmt.Sprintf("%s is not writable (%v); Hearth keeps its database there", d.dataDir, err))
		return
	}
	d.line(checkOK, name, d.dataDir+" is writable")
}

// checkConfig parses the config file without creating it. A config Hearth
// would refuse at start fails, naming the key; the defaults then stand in
// for the checks below.
func (d *doctor) checkConfig() {
	const name = "config"
	d.cfg = config.Default()
	data, err := os.ReadFile(d.configPath)
	if errors.Is(err, fs.ErrNotExist) {
		d.line(checkWarn, name, fmt.Sprintf("%s does not exist yet; Hearth writes the defaults there on its first start", d.configPath))
		return
	}
	if err != nil {
		d.line(checkFail, name, fmt.Sprintf("read %s: %v", d.configPath, err))
		return
	}
	cfg, err := config.Parse(d.configPath, data)
	if err != nil {
		d.line(checkFail, name, fmt.Sprintf("%v (Hearth refuses to start with it: fix that key, or delete the file to get the defaults back; the checks below assume the defaults)", err))
		return
	}
	d.cfg = cfg
	d.line(checkOK, name, fmt.Sprintf("%s loads (policy %s)", d.configPath, cfg.Policy.Mode))
}

// checkDatabase opens hearth.db read-only: schema version, SQLite's quick
// check, and the ledger verified as `ledger verify` does.
func (d *doctor) checkDatabase(ctx context.Context) {
	const name = "database"
	file := filepath.Join(d.dataDir, "hearth.db")
	if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) {
		d.line(checkWarn, name, fmt.Sprintf("%s does not exist yet; Hearth creates it on its first start", file))
		return
	}
	db, err := store.OpenReadOnly(ctx, file)
	if err != nil {
		d.line(checkFail, name, err.Error())
		return
	}
	defer db.Close()
	d.line(checkOK, name, file+" opens")

	have, err := db.SchemaVersion(ctx)
	want, werr := store.NewestSchemaVersion()
	switch {
	case err != nil || werr != nil:
		d.line(checkFail, "database schema", fmt.Sprintf("read schema version: %v", errors.Join(err, werr)))
	case have > want:
		d.line(checkFail, "database schema", fmt.Sprintf("version %d is newer than this hearth-tray knows (%d): it was written by a newer Hearth; install that version again", have, want))
	case have < want:
		d.line(checkWarn, "database schema", fmt.Sprintf("version %d; this hearth-tray migrates it to %d at its next start", have, want))
	default:
		d.line(checkOK, "database schema", fmt.Sprintf("version %d is current", have))
	}

	if problems, err := db.Check(ctx, true, 5); err != nil {
		d.line(checkFail, "database integrity", fmt.Sprintf("PRAGMA quick_check: %v", err))
	} else if len(problems) > 0 {
		d.line(checkFail, "database integrity", fmt.Sprintf("PRAGMA quick_check reports %s; %s", strings.Join(problems, "; "), d.restoreAdvice()))
	} else {
		d.line(checkOK, "database integrity", "PRAGMA quick_check: ok")
	}

	d.checkLedger(ctx, db)
}

// checkLedger verifies the live ledger as `ledger verify` without a
// bundle does — every entry's chain link and hash, every tree hash, every
// checkpoint's signature — and that the latest checkpoint is signed by
// this installation's key, loaded (never created) from ledger.key. A
// ledger with entries but no checkpoint yet is normal for the first
// minutes of a running Hearth (it signs one every few minutes and when it
// stops), so it is reported rather than failed.
func (d *doctor) checkLedger(ctx context.Context, db *store.DB) {
	const name = "ledger"
	keyFile := filepath.Join(d.dataDir, "ledger.key")
	skey, found, err := secrets.ProtectedFileKeyStore{Path: keyFile}.Load()
	var vkey string
	switch {
	case err != nil:
		d.line(checkFail, name, fmt.Sprintf("signing key: %v", err))
		return
	case found:
		vkey, err = ledger.VerifierKey(strings.TrimSpace(string(skey)))
		if err != nil {
			d.line(checkFail, name, fmt.Sprintf("signing key %s: %v", keyFile, err))
			return
		}
	}
	rep, err := ledger.VerifyDB(ctx, db)
	if err != nil {
		d.line(checkFail, name, fmt.Sprintf("verification failed: %v (keep hearth.db as it is and export the evidence with hearth-tray ledger export)", err))
		return
	}
	switch {
	case rep.PublicKey == "" && rep.Entries == 0:
		d.line(checkOK, name, "empty")
		return
	case rep.PublicKey == "" && d.running != nil:
		d.line(checkOK, name, fmt.Sprintf("%d entries verify; none signed yet (the running Hearth signs a checkpoint every %s and when it stops)", rep.Entries, app.CheckpointEvery))
		return
	case rep.PublicKey == "":
		d.line(checkWarn, name, fmt.Sprintf("%d entries verify, but no checkpoint signs them (Hearth stopped before it signed one)", rep.Entries))
		return
	case !found:
		d.line(checkWarn, name, fmt.Sprintf("%d entries verify, but the signing key %s is missing: the checkpoints are checked only against the key recorded with them", rep.Entries, keyFile))
		return
	case rep.PublicKey != vkey:
		d.line(checkFail, name, fmt.Sprintf("verification failed: the latest checkpoint is signed by %s, not by this installation's key %s", rep.PublicKey, vkey))
		return
	}
	detail := fmt.Sprintf("%d entries verify, checkpoint %d signed by %s", rep.Entries, rep.CheckpointSize, rep.Origin)
	if rep.Unsigned > 0 {
		detail += fmt.Sprintf(" (%d newer entries not signed yet)", rep.Unsigned)
	}
	d.line(checkOK, name, detail)
}

// checkTunnel reports the tunnel's setup through a stopped supervisor:
// the key's presence (never its value), the tunnel ID, and the pinned
// tunnel-client hashed again. The tunnel is optional: what is not set up
// warns; a pinned tunnel-client that changed fails, since Hearth refuses
// to run it.
func (d *doctor) checkTunnel() {
	var keys secrets.Store
	if secretsStoreExists(d.dataDir) {
		s, err := secrets.Open(d.dataDir)
		if err != nil {
			d.line(checkWarn, "tunnel key", fmt.Sprintf("cannot open the secrets store: %v", err))
		}
		keys = s
	}
	sup := tunnel.New(tunnel.Options{Config: d.cfg.Tunnel, DataDir: d.dataDir, Secrets: keys, Roots: d.cfg.Roots})
	if keys != nil {
		switch ok, err := sup.KeyPresent(); {
		case err != nil:
			d.line(checkWarn, "tunnel key", err.Error())
		case ok:
			d.line(checkOK, "tunnel key", "stored (its value is never shown)")
		default:
			d.line(checkWarn, "tunnel key", "not set; enter the tunnel runtime key on the control panel's Setup page")
		}
	} else {
		d.line(checkWarn, "tunnel key", "not set; enter the tunnel runtime key on the control panel's Setup page")
	}
	if id := d.cfg.Tunnel.TunnelID; id != "" {
		d.line(checkOK, "tunnel ID", id)
	} else {
		d.line(checkWarn, "tunnel ID", "not set; enter it on the Setup page (config key \"tunnel.tunnel_id\")")
	}
	pin, ok := sup.Pinned()
	if !ok {
		d.line(checkWarn, "tunnel-client", tunnel.ErrNotPinned.Error())
		return
	}
	err := sup.VerifyClient()
	var changed *tunnel.ClientChangedError
	switch {
	case err == nil:
		d.line(checkOK, "tunnel-client", fmt.Sprintf("%s is pinned and still has its SHA-256 %s", pin.Path, pin.SHA256))
	case errors.As(err, &changed):
		d.line(checkFail, "tunnel-client", err.Error())
	default:
		d.line(checkWarn, "tunnel-client", err.Error())
	}
}

// checkAutostart reports the Task Scheduler logon task (Windows only).
func (d *doctor) checkAutostart() {
	const name = "autostart"
	on, err := autostart.Enabled()
	switch {
	case errors.Is(err, autostart.ErrUnsupported):
		return
	case err != nil:
		d.line(checkWarn, name, fmt.Sprintf("cannot read the logon task %s: %v", autostart.TaskName, err))
	case on:
		d.line(checkOK, name, fmt.Sprintf("the logon task %s is registered", autostart.TaskName))
	default:
		d.line(checkWarn, name, fmt.Sprintf("the logon task %s is not registered; Hearth will not start at logon (tick \"Start at logon\" in the tray, or run hearth-tray install)", autostart.TaskName))
	}
}
