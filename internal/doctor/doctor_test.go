//go:build !windows

package doctor

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/instance"
	"github.com/hearth-dev/hearth/internal/ledger/ledgertest"
	"github.com/hearth-dev/hearth/internal/secrets"
	"github.com/hearth-dev/hearth/internal/store"
	"github.com/hearth-dev/hearth/internal/tunnel"
)

// doctorCLI runs doctor on home, as `hearth-tray doctor` does, and returns
// its output and the exit code hearth-tray would give (1 on ErrFailed).
func doctorCLI(t *testing.T, home string) (string, int) {
	t.Helper()
	var out bytes.Buffer
	err := Run(context.Background(), Options{Out: &out, DataDir: home, ConfigPath: config.Path(home), Version: "test"})
	switch {
	case err == nil:
		return out.String(), 0
	case errors.Is(err, ErrFailed):
		return out.String(), 1
	}
	t.Fatalf("doctor: %v\n%s", err, out.String())
	return "", -1
}

// freeAddrs returns n loopback addresses nothing listens on just now, so
// that the port checks do not depend on what else runs on this machine.
func freeAddrs(t *testing.T, n int) []string {
	t.Helper()
	var addrs []string
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addrs = append(addrs, ln.Addr().String())
		ln.Close()
	}
	return addrs
}

// freshHome is a data directory whose config uses free ports.
func freshHome(t *testing.T) string {
	home := t.TempDir()
	addrs := freeAddrs(t, 2)
	hearthtest.WriteConfig(t, home, func(c *config.Config) { c.MCPAddr, c.PanelAddr = addrs[0], addrs[1] })
	return home
}

func wantLine(t *testing.T, out, line string) {
	t.Helper()
	if !strings.Contains(out, "\n"+line) && !strings.HasPrefix(out, line) {
		t.Fatalf("doctor output lacks %q:\n%s", line, out)
	}
}

// TestDoctorFreshHome: on a home serve created, doctor passes while serve
// runs (read-only: the running serve keeps working) and after it stopped;
// the tunnel key is reported present and never printed; the unpinned
// tunnel-client only warns.
func TestDoctorFreshHome(t *testing.T) {
	home := freshHome(t)
	const key = "sk-doctor-test-secret-0123456789"
	ks, err := secrets.Open(home)
	if err != nil {
		t.Fatal(err)
	}
	if err := ks.Set(tunnel.KeyName, []byte(key)); err != nil {
		t.Fatal(err)
	}
	p := hearthtest.StartProcess(t, home)
	c := hearthtest.Connect(t, p.URL, "doctor")
	if r := c.Call("machine", map[string]any{"operation": "host_info"}); r.State() != "completed" {
		t.Fatalf("%s", r.Raw)
	}

	out, code := doctorCLI(t, home)
	if code != 0 || strings.Contains(out, "FAIL") {
		t.Fatalf("doctor on a running fresh home: exit %d\n%s", code, out)
	}
	for _, l := range []string{
		"ok    config: ", "ok    data directory: ", "ok    database: ",
		"ok    database schema: ", "ok    database integrity: PRAGMA quick_check: ok",
		"ok    ledger: ", "ok    instance: Hearth is running",
		"ok    MCP endpoint: " + p.URL + " answers", "ok    control panel: ",
		"ok    MCP port: ", "ok    panel port: ",
		"ok    tunnel key: stored", "warn  tunnel ID: ",
		"warn  tunnel-client: " + tunnel.ErrNotPinned.Error(),
	} {
		wantLine(t, out, l)
	}
	if strings.Contains(out, key) || strings.Contains(out, key[len(key)-4:]) {
		t.Fatalf("doctor printed the tunnel key:\n%s", out)
	}
	// The running serve was not disturbed.
	if r := c.Call("machine", map[string]any{"operation": "host_info"}); r.State() != "completed" {
		t.Fatalf("serve after doctor: %s", r.Raw)
	}

	if err := p.Interrupt(t); err != nil {
		t.Fatalf("serve exit: %v", err)
	}
	out, code = doctorCLI(t, home)
	if code != 0 || strings.Contains(out, "FAIL") {
		t.Fatalf("doctor on a stopped fresh home: exit %d\n%s", code, out)
	}
	wantLine(t, out, "warn  instance: Hearth is not running")
	wantLine(t, out, "ok    ledger: ")
	if !strings.Contains(out, "signed by hearth/") {
		t.Fatalf("a stopped Hearth signed a checkpoint; doctor must name it:\n%s", out)
	}
}

// TestDoctorBrokenConfig: a config Hearth would refuse fails, naming the
// key, and doctor exits 1.
func TestDoctorBrokenConfig(t *testing.T) {
	for _, tc := range []struct{ body, key string }{
		{`{"policy": {"mode": "yolo"}}`, `"policy.mode"`},
		{`{"mcp_adr": "127.0.0.1:3000"}`, `"mcp_adr"`},
	} {
		home := t.TempDir()
		if err := os.WriteFile(filepath.Join(home, "config.json"), []byte(tc.body), 0o600); err != nil {
			t.Fatal(err)
		}
		out, code := doctorCLI(t, home)
		if code != 1 || !strings.Contains(out, "FAIL  config: ") || !strings.Contains(out, tc.key) {
			t.Fatalf("config %s: exit %d, want 1 and a FAIL naming %s:\n%s", tc.body, code, tc.key, out)
		}
	}
}

// TestDoctorTamperedLedger: a ledger entry rewritten in the database file
// fails the ledger check.
func TestDoctorTamperedLedger(t *testing.T) {
	home := freshHome(t)
	p := hearthtest.StartProcess(t, home)
	c := hearthtest.Connect(t, p.URL, "doctor")
	if r := c.Call("machine", map[string]any{"operation": "estop", "reason": "doctor test"}); r.State() != "completed" {
		t.Fatalf("%s", r.Raw)
	}
	if err := p.Interrupt(t); err != nil {
		t.Fatalf("serve exit: %v", err)
	}
	if out, code := doctorCLI(t, home); code != 0 {
		t.Fatalf("before tampering: exit %d\n%s", code, out)
	}

	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(home, "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	// As someone with write access to the file could: drop the
	// append-only trigger and rewrite the estop entry's reason.
	ledgertest.Tamper(t, db, "doctor test", "doctor best")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	out, code := doctorCLI(t, home)
	if code != 1 || !strings.Contains(out, "FAIL  ledger: verification failed") {
		t.Fatalf("tampered ledger: exit %d, want 1 and a ledger FAIL:\n%s", code, out)
	}
}

// TestDoctorTunnelClientPin: a pinned tunnel-client that still has its
// SHA-256 passes; once the file changes, doctor fails.
func TestDoctorTunnelClientPin(t *testing.T) {
	home := t.TempDir()
	client := filepath.Join(t.TempDir(), "tunnel-client")
	body := []byte("#!/bin/sh\nexit 0\n")
	if err := os.WriteFile(client, body, 0o700); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	addrs := freeAddrs(t, 2)
	hearthtest.WriteConfig(t, home, func(c *config.Config) {
		c.MCPAddr, c.PanelAddr = addrs[0], addrs[1]
		c.Tunnel.ClientPath, c.Tunnel.ClientSHA256 = client, hex.EncodeToString(sum[:])
		c.Tunnel.TunnelID = "tunnel_doctortest"
	})
	out, code := doctorCLI(t, home)
	if code != 0 {
		t.Fatalf("pinned client: exit %d\n%s", code, out)
	}
	wantLine(t, out, "ok    tunnel-client: "+client+" is pinned")
	wantLine(t, out, "ok    tunnel ID: tunnel_doctortest")

	if err := os.WriteFile(client, []byte("#!/bin/sh\necho swapped\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	out, code = doctorCLI(t, home)
	if code != 1 || !strings.Contains(out, "FAIL  tunnel-client: ") {
		t.Fatalf("changed client: exit %d, want 1 and a tunnel-client FAIL:\n%s", code, out)
	}
}

// TestDoctorPortHeldByAnotherProgram: with Hearth not running, a
// configured port another program holds is a warning naming the config
// key: Hearth starts on a free port instead (app.Listen).
func TestDoctorPortHeldByAnotherProgram(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	home := t.TempDir()
	free := freeAddrs(t, 1)
	hearthtest.WriteConfig(t, home, func(c *config.Config) { c.MCPAddr, c.PanelAddr = ln.Addr().String(), free[0] })
	out, code := doctorCLI(t, home)
	if strings.Contains(out, "FAIL  MCP port") || !strings.Contains(out, "warn  MCP port: "+ln.Addr().String()+" is in use") || !strings.Contains(out, "Hearth starts on a free port instead") || !strings.Contains(out, `"mcp_addr"`) {
		t.Fatalf("held port: exit %d\n%s", code, out)
	}
}

// entry is what homeListing records of one file or directory.
type entry struct {
	dir   bool
	size  int64
	mtime time.Time
	sum   [32]byte
}

// homeListing lists everything under home (and home itself as "."):
// kind, size, modification time and, for files, the SHA-256 of the content.
func homeListing(t *testing.T, home string) map[string]entry {
	t.Helper()
	out := map[string]entry{}
	err := filepath.WalkDir(home, func(path string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(home, path)
		if err != nil {
			return err
		}
		info, err := de.Info()
		if err != nil {
			return err
		}
		e := entry{dir: de.IsDir(), size: info.Size(), mtime: info.ModTime()}
		if de.Type().IsRegular() {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			e.sum = sha256.Sum256(b)
		}
		out[rel] = e
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sqliteSideFiles are the files SQLite may create beside hearth.db when
// doctor opens it read-only; the README's doctor section names them.
var sqliteSideFiles = map[string]bool{"hearth.db-wal": true, "hearth.db-shm": true}

// TestDoctorLeavesHomeAlone: doctor creates, changes and removes nothing
// in a home that has only its config, not even the home directory's
// modification time (no lock files, no secrets directory, no probe file);
// on the home of a stopped Hearth, hearth.db, config.json and every other
// file stay as they were, and the only new files are SQLite's side files.
func TestDoctorLeavesHomeAlone(t *testing.T) {
	home := freshHome(t)
	before := homeListing(t, home)
	out, code := doctorCLI(t, home)
	if code != 0 {
		t.Fatalf("doctor on a config-only home: exit %d\n%s", code, out)
	}
	wantLine(t, out, "ok    data directory: "+home+" is writable")
	wantLine(t, out, "warn  instance: Hearth is not running")
	wantLine(t, out, "ok    MCP port: ")
	wantLine(t, out, "warn  tunnel key: not set")
	if after := homeListing(t, home); !equalListing(before, after) {
		t.Fatalf("doctor changed a config-only home:\nbefore %v\nafter  %v", before, after)
	}

	runAndStop(t, home)
	before = homeListing(t, home)
	for _, name := range []string{"hearth.db", "config.json"} {
		if _, ok := before[name]; !ok {
			t.Fatalf("serve left no %s: %v", name, before)
		}
	}
	out, code = doctorCLI(t, home)
	if code != 0 {
		t.Fatalf("doctor on a stopped home: exit %d\n%s", code, out)
	}
	wantLine(t, out, "ok    database integrity: PRAGMA quick_check: ok")
	after := homeListing(t, home)
	for name, b := range before {
		a, ok := after[name]
		switch {
		case sqliteSideFiles[name]:
		case !ok:
			t.Errorf("doctor removed %s", name)
		case b.dir && a.dir:
			// The home's mtime changes when SQLite adds its side files.
		case a != b:
			t.Errorf("doctor changed %s: before %+v, after %+v", name, b, a)
		}
	}
	for name := range after {
		if _, ok := before[name]; !ok && !sqliteSideFiles[name] {
			t.Errorf("doctor created %s", name)
		}
	}
}

// runAndStop starts serve on home, waits until it answers a call, and
// stops it cleanly.
func runAndStop(t *testing.T, home string) {
	t.Helper()
	p := hearthtest.StartProcess(t, home)
	c := hearthtest.Connect(t, p.URL, "doctor")
	if r := c.Call("machine", map[string]any{"operation": "host_info"}); r.State() != "completed" {
		t.Fatalf("%s", r.Raw)
	}
	if err := p.Interrupt(t); err != nil {
		t.Fatalf("serve exit: %v\n%s", err, p.Stderr)
	}
}

func equalListing(a, b map[string]entry) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestDoctorLeavesTheEnsureLockAlone: doctor never takes the ensure lock.
// While this test holds it (as an ensure starting Hearth would), doctor
// still answers at once and correctly; and (Linux) doctor does not even
// open the ensure lock's file.
func TestDoctorLeavesTheEnsureLockAlone(t *testing.T) {
	home := freshHome(t)
	runAndStop(t, home)

	el, err := instance.Acquire(instance.LockEnsure, home)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	out, code := doctorCLI(t, home)
	if code != 0 {
		t.Fatalf("doctor with the ensure lock held: exit %d\n%s", code, out)
	}
	wantLine(t, out, "warn  instance: Hearth is not running")
	wantLine(t, out, "ok    MCP port: ")
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("doctor took %s with the ensure lock held", d)
	}
	if err := el.Release(); err != nil {
		t.Fatal(err)
	}
	// On Linux, doctor must not even open the ensure lock's file.
	noOpenDuringDoctor(t, home, filepath.Join(home, instance.LockEnsure+".lock"))
}

// TestDoctorPortsOfAStartingHearth: while a Hearth holds the instance lock
// but has not published its addresses yet, it may be binding its ports
// right now, so doctor does not bind them (it would make that start fail);
// the ports are reported as not checked rather than as in use.
func TestDoctorPortsOfAStartingHearth(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	home := t.TempDir()
	free := freeAddrs(t, 1)
	hearthtest.WriteConfig(t, home, func(c *config.Config) { c.MCPAddr, c.PanelAddr = ln.Addr().String(), free[0] })
	l, err := instance.Acquire(instance.LockHearth, home)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	out, code := doctorCLI(t, home)
	if code != 0 {
		t.Fatalf("doctor beside a starting Hearth: exit %d\n%s", code, out)
	}
	wantLine(t, out, "warn  instance: Hearth is running but has not published its addresses yet")
	wantLine(t, out, "warn  MCP port: "+ln.Addr().String()+" not checked: a Hearth is starting")
	wantLine(t, out, "warn  panel port: "+free[0]+" not checked: a Hearth is starting")
}
