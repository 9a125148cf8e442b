package update_test

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/instance"
	"github.com/hearth-dev/hearth/internal/update"
)

// buildHearth builds cmd/hearth-tray as version, with the release key
// vkey built in, into out.
func buildHearth(t *testing.T, out, version, vkey string) []byte {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command here: cannot build the versions to update between")
	}
	cmd := exec.Command("go", "build", "-ldflags", "-X main.version="+version+" -X main.updateKey="+vkey, "-o", out, "github.com/hearth-dev/hearth/cmd/hearth-tray")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", version, err, b)
	}
	return mustRead(t, out)
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// serveRelease starts a real HTTP update server on loopback serving a
// manifest for version signed with skey, whose package holds files.
func serveRelease(t *testing.T, skey, version string, files map[string][]byte) string {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, b := range files {
		w, _ := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
		w.Write(b)
	}
	zw.Close()
	pkg := buf.Bytes()
	var manifest []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/stable.json":
			w.Write(manifest)
		case "/hearth.zip":
			w.Write(pkg)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	a := update.Artifact{URL: srv.URL + "/hearth.zip", Size: int64(len(pkg)), SHA256: sum(pkg)}
	if tc, ok := files[update.TunnelClientName()]; ok {
		a.TunnelClient = &update.TunnelClient{Version: "0.9.0", SHA256: sum(tc)}
	}
	m := update.Manifest{Version: version, MinVersion: "1.0.0", Changes: "Backups are faster.", Platforms: map[string]update.Artifact{update.Platform(): a}}
	var err error
	if manifest, err = update.SignManifest(m, skey); err != nil {
		t.Fatal(err)
	}
	return srv.URL + "/stable.json"
}

// install is a Hearth 1.0.0 installed in a program folder, with a pinned
// tunnel-client beside it, configured to update from manifestURL.
type install struct {
	dir, exe, tc, home string
	oldExe, oldTC      []byte
}

func newInstall(t *testing.T, vkey, manifestURL string) *install {
	t.Helper()
	in := &install{dir: filepath.Join(t.TempDir(), "Programs", "Hearth"), home: t.TempDir()}
	if err := os.MkdirAll(in.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	in.exe = filepath.Join(in.dir, update.ProgramName())
	in.tc = filepath.Join(in.dir, update.TunnelClientName())
	in.oldExe = buildHearth(t, in.exe, "1.0.0", vkey)
	in.oldTC = []byte("#!/bin/sh\necho tunnel-client 0.8.0\n")
	if err := os.WriteFile(in.tc, in.oldTC, 0o755); err != nil {
		t.Fatal(err)
	}
	hearthtest.WriteConfig(t, in.home, func(c *config.Config) {
		c.Update.URL = manifestURL
		c.Tunnel.ClientPath, c.Tunnel.ClientSHA256 = in.tc, sum(in.oldTC)
	})
	return in
}

// panel is a signed-in browser of one Hearth's control panel.
type panel struct {
	t      *testing.T
	client *http.Client
	base   string
}

func login(t *testing.T, loginURL string) *panel {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	p := &panel{t: t, client: &http.Client{Jar: jar, Timeout: 10 * time.Second}}
	u, err := url.Parse(loginURL)
	if err != nil {
		t.Fatal(err)
	}
	p.base = u.Scheme + "://" + u.Host
	if body := p.get(loginURL); !strings.Contains(body, "Status") {
		t.Fatalf("login did not land on Status: %s", body)
	}
	return p
}

func (p *panel) get(u string) string {
	p.t.Helper()
	resp, err := p.client.Get(u)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return html.UnescapeString(string(b))
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// waitFor polls the Status page until it shows want.
func (p *panel) waitFor(want string) string {
	p.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		body := p.get(p.base + "/")
		if strings.Contains(body, want) {
			return body
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("the Status page never showed %q:\n%s", want, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// clickUpdate presses the Update button (with its CSRF token, as Ann).
func (p *panel) clickUpdate(page string) {
	p.t.Helper()
	m := csrfRE.FindStringSubmatch(page)
	if m == nil {
		p.t.Fatal("no CSRF token on the page")
	}
	resp, err := p.client.PostForm(p.base+"/status/update", url.Values{"csrf": {m[1]}, "operator": {"Ann"}})
	if err != nil {
		p.t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || strings.Contains(string(b), "did not start") {
		p.t.Fatalf("POST /status/update: %s\n%s", resp.Status, b)
	}
}

// waitRunning waits until instance.json names a process other than old
// with version, and returns it; the process is killed when the test ends.
func waitRunning(t *testing.T, home string, old int, version string) instance.Info {
	t.Helper()
	deadline := time.Now().Add(120 * time.Second)
	for time.Now().Before(deadline) {
		info, err := instance.ReadInfo(home)
		if err == nil && info.PID != old && info.Version == version {
			t.Cleanup(func() {
				if p, err := os.FindProcess(info.PID); err == nil {
					p.Kill()
				}
			})
			return info
		}
		time.Sleep(200 * time.Millisecond)
	}
	b, _ := os.ReadFile(update.StartLog(home))
	o, _ := os.ReadFile(filepath.Join(update.Dir(home), "outcome.json"))
	i, _ := os.ReadFile(filepath.Join(home, instance.InfoFile))
	t.Fatalf("no Hearth %s started; its output:\n%s\noutcome: %s\ninstance: %s", version, b, o, i)
	return instance.Info{}
}

// loginFromStartLog signs in to the Hearth the hand-over started: its
// login URL is in its output, which goes to a start log in the update folder.
func loginFromStartLog(t *testing.T, home string) *panel {
	t.Helper()
	re := regexp.MustCompile(`Control panel at (\S+)`)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if log := update.StartLog(home); log != "" {
			if m := re.FindSubmatch(mustRead(t, log)); m != nil {
				return login(t, string(m[1]))
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("no login URL in the start log")
	return nil
}

func outcome(t *testing.T, home string) update.Outcome {
	t.Helper()
	o, ok, err := update.ReadOutcome(home)
	if err != nil || !ok {
		t.Fatalf("outcome: %v %v", ok, err)
	}
	return o
}

func checkConfigPin(t *testing.T, home, want string) {
	t.Helper()
	c, err := config.Load(filepath.Join(home, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Tunnel.ClientSHA256 != want {
		t.Fatalf("tunnel-client pin %s, want %s", c.Tunnel.ClientSHA256, want)
	}
}

// TestUpdateServeEndToEnd: a real Hearth 1.0.0 serve, installed in a
// program folder, finds 1.1.0 on a real update server on loopback, shows
// it on the Status page, and on the operator's click downloads, verifies,
// backs up its database, swaps the running program for the new one (and
// the tunnel-client beside it, re-pinned from the manifest), starts 1.1.0
// and exits; 1.1.0 is healthy and its Status page says what happened.
func TestUpdateServeEndToEnd(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the Windows swap is TestSwapRunningProgram and TestStalePreviousProgramHeldOpen under Wine")
	}
	skey, vkey, err := update.GenerateKey("hearth-release-test")
	if err != nil {
		t.Fatal(err)
	}
	newExe := buildHearth(t, filepath.Join(t.TempDir(), "new"), "1.1.0", vkey)
	newTC := []byte("#!/bin/sh\necho tunnel-client 0.9.0\n")
	manifestURL := serveRelease(t, skey, "1.1.0", map[string][]byte{update.ProgramName(): newExe, update.TunnelClientName(): newTC})
	in := newInstall(t, vkey, manifestURL)

	old := hearthtest.StartProcessOf(t, in.exe, in.home)
	p := login(t, old.PanelURL)
	page := p.waitFor("Update to 1.1.0 — what changed")
	if !strings.Contains(page, "Backups are faster.") {
		t.Fatal("the Status page does not say what changed")
	}
	p.clickUpdate(page)

	info := waitRunning(t, in.home, old.Cmd.Process.Pid, "1.1.0")
	if err := old.Exited(t, 30*time.Second); err != nil {
		t.Fatalf("the old Hearth did not exit cleanly: %v\n%s", err, old.Stderr.String())
	}
	if !bytes.Equal(mustRead(t, in.exe), newExe) || !bytes.Equal(mustRead(t, in.tc), newTC) {
		t.Fatal("the program folder does not hold the new programs")
	}
	checkConfigPin(t, in.home, sum(newTC))
	if o := outcome(t, in.home); o.Result != update.ResultUpdated {
		t.Fatalf("outcome: %+v", o)
	}
	backups, _ := filepath.Glob(filepath.Join(in.home, "backups", "*-update.db"))
	if len(backups) != 1 {
		t.Fatalf("backups made before the update: %v", backups)
	}
	// The browser that clicked is still signed in, on the new version's
	// panel (a cookie is per host, not per port).
	p.base = strings.TrimSuffix(info.PanelURL, "/")
	p.waitFor("Hearth updated itself from version 1.0.0 to 1.1.0.")
	if _, err := os.Stat(filepath.Join(update.Dir(in.home), "sessions.json")); err == nil {
		t.Fatal("the sessions handed over are still on disk")
	}
	np := loginFromStartLog(t, in.home)
	if np.base+"/" != info.PanelURL {
		t.Fatalf("the start log's panel %s is not instance.json's %s", np.base, info.PanelURL)
	}
	np.waitFor("Hearth updated itself from version 1.0.0 to 1.1.0.")
}

// TestUpdateRollsBackANewVersionThatExits: a new version that exits at
// once is stopped being waited for, and by themselves the previous
// program, tunnel-client, pin and database come back and the previous
// version starts again; its Status page says what happened.
func TestUpdateRollsBackANewVersionThatExits(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the Windows swap is TestSwapRunningProgram and TestStalePreviousProgramHeldOpen under Wine")
	}
	skey, vkey, err := update.GenerateKey("hearth-release-test")
	if err != nil {
		t.Fatal(err)
	}
	broken := []byte("#!/bin/sh\necho 'hearth-tray 1.1.0: cannot start' >&2\nexit 3\n")
	newTC := []byte("#!/bin/sh\necho tunnel-client 0.9.0\n")
	manifestURL := serveRelease(t, skey, "1.1.0", map[string][]byte{update.ProgramName(): broken, update.TunnelClientName(): newTC})
	in := newInstall(t, vkey, manifestURL)

	old := hearthtest.StartProcessOf(t, in.exe, in.home)
	p := login(t, old.PanelURL)
	p.clickUpdate(p.waitFor("Update to 1.1.0 — what changed"))

	waitRunning(t, in.home, old.Cmd.Process.Pid, "1.0.0")
	if err := old.Exited(t, 30*time.Second); err != nil {
		t.Fatalf("the old Hearth did not exit cleanly: %v\n%s", err, old.Stderr.String())
	}
	if !bytes.Equal(mustRead(t, in.exe), in.oldExe) || !bytes.Equal(mustRead(t, in.tc), in.oldTC) {
		t.Fatal("the previous programs did not come back")
	}
	checkConfigPin(t, in.home, sum(in.oldTC))
	o := outcome(t, in.home)
	if o.Result != update.ResultRolledBack || !strings.Contains(o.Detail, "stopped at once") || !strings.Contains(o.Detail, "cannot start") {
		t.Fatalf("outcome: %+v", o)
	}
	// The database was restored from the backup made before the swap:
	// Restore keeps the replaced one aside.
	if aside, _ := filepath.Glob(filepath.Join(in.home, "backups", "replaced-*")); len(aside) != 1 {
		t.Fatalf("database not restored: %v", aside)
	}
	np := loginFromStartLog(t, in.home)
	page := np.waitFor("Hearth tried to update to version 1.1.0, but the new version did not start properly, so Hearth went back to version 1.0.0")
	if !strings.Contains(page, "exit status 3") {
		t.Fatal("the technical detail is not behind Details")
	}
}

// TestUpdateAutoBrokenReleaseInstallsOnce: with update.auto on and a
// published release that exits at once, a real Hearth 1.0.0 serve installs
// it by itself, rolls back, and the 1.0.0 that comes back (checking at
// start, automatic updates on) does not install it again: one backup
// before the update, one database put back, and its Status page says the
// release will not be installed again, with the new version's output.
func TestUpdateAutoBrokenReleaseInstallsOnce(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the Windows swap is TestSwapRunningProgram and TestStalePreviousProgramHeldOpen under Wine")
	}
	skey, vkey, err := update.GenerateKey("hearth-release-test")
	if err != nil {
		t.Fatal(err)
	}
	broken := []byte("#!/bin/sh\necho 'hearth-tray 1.1.0: cannot start' >&2\nexit 3\n")
	manifestURL := serveRelease(t, skey, "1.1.0", map[string][]byte{update.ProgramName(): broken})
	in := newInstall(t, vkey, manifestURL)
	hearthtest.WriteConfig(t, in.home, func(c *config.Config) {
		c.Update.URL, c.Update.Auto = manifestURL, true
		c.Tunnel.ClientPath, c.Tunnel.ClientSHA256 = in.tc, sum(in.oldTC)
	})

	old := hearthtest.StartProcessOf(t, in.exe, in.home)
	waitRunning(t, in.home, old.Cmd.Process.Pid, "1.0.0")
	if err := old.Exited(t, 30*time.Second); err != nil {
		t.Fatalf("the old Hearth did not exit cleanly: %v\n%s", err, old.Stderr.String())
	}
	np := loginFromStartLog(t, in.home)
	page := np.waitFor("Hearth 1.1.0 did not start on this PC and was rolled back; it will not be installed again.")
	if !strings.Contains(page, "cannot start") {
		t.Fatal("the reason is not behind Details")
	}
	backups, _ := filepath.Glob(filepath.Join(in.home, "backups", "*-update.db"))
	aside, _ := filepath.Glob(filepath.Join(in.home, "backups", "replaced-*"))
	if len(backups) != 1 || len(aside) != 1 {
		t.Fatalf("installs: %d backups before an update, %d databases put back; want 1 and 1", len(backups), len(aside))
	}
	if !bytes.Equal(mustRead(t, in.exe), in.oldExe) {
		t.Fatal("the previous program is not in place")
	}
}
