package web_test

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/tunnel"
)

const setupTunnelID = "tunnel_0123456789abcdef0123456789abcdef"

// fakeTunnelClient builds the tunnel package's fake tunnel-client (as
// its own tests do) and returns its path; the test is skipped without a
// go command.
func fakeTunnelClient(t *testing.T) string {
	t.Helper()
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the fake tunnel-client")
	}
	fake := filepath.Join(t.TempDir(), "tunnel-client")
	if runtime.GOOS == "windows" {
		fake += ".exe"
	}
	if out, err := exec.Command(gocmd, "build", "-o", fake, "../internal/tunnel/testdata/faketunnel").CombinedOutput(); err != nil {
		t.Fatalf("build fake tunnel-client: %v\n%s", err, out)
	}
	return fake
}

// newRuntimeKey returns a fresh random runtime key, so that any match in a
// scan can only come from this test.
func newRuntimeKey(t *testing.T) string {
	t.Helper()
	var b [20]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return "sk-setup-" + hex.EncodeToString(b[:])
}

// waitTunnel polls the supervisor until cond holds.
func waitTunnel(t *testing.T, f *fixture, what string, cond func(tunnel.Status) bool) tunnel.Status {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st := f.in.App.Tunnel.Status()
		if cond(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for the tunnel to be %s: %+v", what, st)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSetupFlow walks the Setup page as an operator would, over a real
// Hearth and the fake tunnel-client, which is made to misbehave by
// printing the key it is given: save the key, run init and doctor, start,
// restart and stop the tunnel, turn autostart on and off, clear the key.
// No response (body, redirect, headers), no later page, no file under the
// data directory (the tunnel log included) and no line of the panel's log
// may hold the key.
func TestSetupFlow(t *testing.T) {
	fake := fakeTunnelClient(t)
	t.Setenv("FAKE_TUNNEL_LEAK_KEY", "1")
	f := newFixture(t, func(c *config.Config) { c.Tunnel.ClientPath = fake })
	b := f.login(t)
	key := newRuntimeKey(t)
	last4 := key[len(key)-4:]

	noKey := func(where string, r resp) {
		t.Helper()
		if strings.Contains(r.body, key) {
			t.Fatalf("%s: the response body holds the key", where)
		}
		for k, vs := range r.Header {
			for _, v := range vs {
				if strings.Contains(v, key) {
					t.Fatalf("%s: response header %s holds the key", where, k)
				}
			}
		}
	}
	page := func(what string) string {
		t.Helper()
		r := f.do(t, req{method: "GET", path: "/setup", b: b})
		if r.StatusCode != http.StatusOK {
			t.Fatalf("%s: GET /setup: %d\n%s", what, r.StatusCode, r.body)
		}
		noKey(what, r)
		return r.body
	}
	post := func(path string, kv ...string) {
		t.Helper()
		r := f.post(t, b, path, kv...)
		if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/setup" {
			t.Fatalf("POST %s: %d %q\n%s", path, r.StatusCode, r.Header.Get("Location"), r.body)
		}
		noKey("POST "+path, r)
	}
	has := func(what, body string, wants ...string) {
		t.Helper()
		for _, w := range wants {
			if !strings.Contains(body, w) {
				t.Errorf("%s: the page lacks %q", what, w)
			}
		}
	}
	lacks := func(what, body string, nots ...string) {
		t.Helper()
		for _, n := range nots {
			if strings.Contains(body, n) {
				t.Errorf("%s: the page shows %q", what, n)
			}
		}
	}

	body := page("fresh")
	has("fresh", body, `data-state="not_configured"`, `data-testid="candidate-path">`+fake+`<`,
		`data-testid="candidate-sha256">`+fileSum(t, fake)+`<`, `data-testid="key-none"`)

	// tunnel.client_path alone is not a pin: the operator pins the file
	// with the SHA-256 shown.
	post("/setup/pin", "client_path", fake, "client_sha256", fileSum(t, fake))

	// A key that is too short is refused without being echoed.
	post("/setup/key", "key", "sk-short")
	body = page("short key")
	has("short key", body, `data-testid="flash-error">Tunnel key not saved: the tunnel key is too short`)
	lacks("short key", body, "sk-short")

	// Save: only the last four characters are ever shown.
	post("/setup/key", "key", "  "+key+"\n")
	if ok, err := f.in.App.Tunnel.KeyPresent(); err != nil || !ok {
		t.Fatalf("key not stored: %v %v", ok, err)
	}
	body = page("after save")
	has("after save", body, `data-testid="key-hint">…`+last4+`<`, `data-testid="clipboard-notice"`, `/static/setup.js`)
	// Confirmed once: by the key's step, not by a message too.
	if n := strings.Count(mainText(body), last4); n != 1 {
		t.Errorf("after save the page names the key's end %d times, want once:\n%s", n, mainText(body))
	}
	body = page("reload after save")
	has("reload after save", body, `data-testid="key-hint">…`+last4+`<`)
	lacks("reload after save", body, `data-testid="clipboard-notice"`, `data-testid="flash"`)

	// The tunnel ID is checked, names the field, and is not echoed (it
	// may be the key, pasted in the wrong field).
	for _, bad := range []string{key, "tunnel_xyz", "tunnel_"} {
		post("/setup/init", "tunnel_id", bad)
		body = page("bad tunnel ID")
		has("bad tunnel ID "+bad, body, `data-testid="flash-error">Tunnel ID: that is not a tunnel ID`)
		lacks("bad tunnel ID", body, `data-testid="command-result"`, "tunnel_xyz")
	}
	post("/setup/init", "tunnel_id", " ")
	has("empty tunnel ID", page("empty tunnel ID"), `data-testid="flash-error">Tunnel ID: enter the tunnel ID`)
	if id := f.in.App.Tunnel.Config().TunnelID; id != "" {
		t.Fatalf("a refused tunnel ID was saved: %q", id)
	}

	// init with the fake succeeds, shows its output (the leaked key
	// redacted) and saves the tunnel ID.
	post("/setup/init", "tunnel_id", setupTunnelID)
	body = page("after init")
	has("after init", body, `data-testid="flash">Connection prepared and the tunnel ID saved.`,
		`data-testid="command-result" data-command="init"`,
		`data-testid="result-exit">0 <span class="state-off">(succeeded)`,
		`data-testid="result-stdout">Created profile hearth-local (key_set=true)`,
		`data-testid="result-stderr">error: control plane refused key `+tunnel.Redacted,
		`--tunnel-id `+setupTunnelID+` --mcp-server-url `+f.in.URL,
		`name="tunnel_id" value="`+setupTunnelID+`"`)
	if id := f.in.App.Tunnel.Config().TunnelID; id != setupTunnelID {
		t.Fatalf("tunnel ID after init: %q", id)
	}
	lacks("reload after init", page("reload after init"), `data-testid="command-result"`)
	// A second init replaces the profile (tunnel-client needs --force
	// for that), so that a corrected tunnel ID takes effect.
	post("/setup/init", "tunnel_id", setupTunnelID)
	has("second init", page("second init"), `data-testid="flash">Connection prepared and the tunnel ID saved.`,
		`data-testid="result-exit">0 `, ` --force`)

	post("/setup/doctor")
	has("doctor", page("doctor"), `data-testid="flash">The connection check found no problems`,
		`data-testid="command-result" data-command="doctor"`, "doctor: profile hearth-local explain=true key_set=true")

	// Start → ready → restart → stop.
	post("/setup/start")
	st := waitTunnel(t, f, "ready", func(st tunnel.Status) bool { return st.State == tunnel.StateReady })
	live := f.do(t, req{method: "GET", path: "/setup/live", b: b})
	noKey("live", live)
	has("live", live.body, `data-state="ready"`, `data-testid="tunnel-pid">`, "Ready")
	lacks("live", live.body, "<html", "<form")
	post("/setup/start")
	has("second start", page("second start"), `data-testid="flash-error">The connection is already running.`)
	post("/setup/restart")
	waitTunnel(t, f, "ready again", func(s tunnel.Status) bool {
		return s.State == tunnel.StateReady && s.PID != 0 && s.PID != st.PID
	})
	post("/setup/stop")
	if st := f.in.App.Tunnel.Status(); st.State != tunnel.StateStopped || f.in.App.Tunnel.Running() {
		t.Fatalf("after stop: %+v", st)
	}
	body = page("after stop")
	has("after stop", body, `data-testid="flash">Connection stopped.`, `data-state="stopped"`,
		`data-testid="tunnel-last-error-line">error: control plane refused key `+tunnel.Redacted)
	post("/setup/stop")
	has("second stop", page("second stop"), `data-testid="flash-error">The connection is not running.`)
	post("/setup/restart")
	has("restart stopped", page("restart stopped"), `data-testid="flash-error">The connection is not running; start it instead.`)

	// Autostart is the config key tunnel.autostart.
	post("/setup/autostart", "autostart", "on")
	if !f.in.App.Tunnel.Config().Autostart || !autostartInFile(t, f) {
		t.Fatal("autostart not turned on")
	}
	has("autostart on", page("autostart on"), `name="autostart" value="on" checked`)
	post("/setup/autostart")
	if f.in.App.Tunnel.Config().Autostart || autostartInFile(t, f) {
		t.Fatal("autostart not turned off")
	}

	// The tunnel log got the leaked key, redacted; neither it nor any
	// other file of the data directory holds the key, and the only
	// encoded copy is the development secrets store's own file.
	tlog, err := os.ReadFile(f.in.App.Tunnel.LogPath())
	if err != nil || !strings.Contains(string(tlog), tunnel.Redacted) {
		t.Fatalf("the tunnel log should hold the redacted leak (%v):\n%s", err, tlog)
	}
	scanDataDir(t, f.in.Home, key)

	post("/setup/key/clear")
	if ok, _ := f.in.App.Tunnel.KeyPresent(); ok {
		t.Fatal("key not cleared")
	}
	body = page("after clear")
	has("after clear", body, `data-testid="flash">Tunnel key cleared.`, `data-testid="key-none"`, `data-state="not_configured"`)
	lacks("after clear", body, `data-testid="key-hint"`)
	post("/setup/key/clear")
	has("second clear", page("second clear"), `data-testid="flash-error">There is no tunnel key to clear.`)
	post("/setup/start")
	has("start without key", page("start without key"), `data-testid="flash-error">The connection cannot start yet: finish the steps above`, "no tunnel runtime key yet")

	scanDataDir(t, f.in.Home, key)
	if strings.Contains(f.log.String(), key) {
		t.Fatal("the panel's log holds the key")
	}
}

// scanDataDir fails if any file under dir holds key, or its base64 form
// outside the development secrets store's file.
func scanDataDir(t *testing.T, dir, key string) {
	t.Helper()
	encoded := base64.StdEncoding.EncodeToString([]byte(key))
	store := filepath.Join(dir, "secrets", tunnel.KeyName)
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n++
		rel, _ := filepath.Rel(dir, p)
		if strings.Contains(string(data), key) {
			t.Errorf("%s holds the key", rel)
		}
		if p != store && strings.Contains(string(data), encoded) {
			t.Errorf("%s holds the key in base64", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 3 {
		t.Fatalf("scanned only %d files", n)
	}
}

func autostartInFile(t *testing.T, f *fixture) bool {
	t.Helper()
	c, err := config.Load(filepath.Join(f.in.Home, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	return c.Tunnel.Autostart
}

// TestSetupRefusals sends every Setup action without a session, from a
// foreign Host or Origin, without or with a wrong CSRF token, and as GET:
// each is refused and changes nothing; the same action well formed gets
// through the guards (303 back to the page).
func TestSetupRefusals(t *testing.T) {
	f := newFixture(t, nil)
	b := f.login(t)
	key := newRuntimeKey(t)
	routes := map[string]url.Values{
		"/setup/pin":       {"client_path": {filepath.Join(t.TempDir(), "tunnel-client")}, "client_sha256": {strings.Repeat("0", 64)}},
		"/setup/pin/check": {"client_path": {filepath.Join(t.TempDir(), "tunnel-client")}},
		"/setup/key":       {"key": {key}},
		"/setup/key/clear": nil,
		"/setup/init":      {"tunnel_id": {setupTunnelID}},
		"/setup/doctor":    nil,
		"/setup/start":     nil,
		"/setup/stop":      nil,
		"/setup/restart":   nil,
		"/setup/autostart": {"autostart": {"on"}},
	}
	hostile := []struct {
		name string
		r    req
		want int
	}{
		{"no session", req{csrf: b.csrf}, 401},
		{"foreign Host", req{b: b, host: "evil.example"}, 403},
		{"foreign Origin", req{b: b, origin: "http://evil.example"}, 403},
		{"cross-site fetch", req{b: b, fetchSite: "cross-site"}, 403},
		{"missing CSRF token", req{b: b, csrf: "-"}, 403},
		{"wrong CSRF token", req{b: b, csrf: "AAAA" + b.csrf[4:]}, 403},
	}
	before := f.in.App.Tunnel.Config()
	for path, form := range routes {
		for _, tc := range hostile {
			t.Run(path+" "+tc.name, func(t *testing.T) {
				tc.r.method, tc.r.path, tc.r.form = "POST", path, form
				r := f.do(t, tc.r)
				if r.StatusCode != tc.want {
					t.Fatalf("status %d, want %d\n%s", r.StatusCode, tc.want, r.body)
				}
				if strings.Contains(r.body, key) {
					t.Fatal("the refusal holds the key")
				}
			})
		}
		t.Run(path+" GET", func(t *testing.T) {
			q := ""
			if form != nil {
				q = "?" + form.Encode()
			}
			if r := f.do(t, req{method: "GET", path: path + q, b: b}); r.StatusCode != http.StatusMethodNotAllowed {
				t.Fatalf("GET: %d", r.StatusCode)
			}
		})
	}
	if ok, _ := f.in.App.Tunnel.KeyPresent(); ok {
		t.Fatal("a refused request stored the key")
	}
	if after := f.in.App.Tunnel.Config(); after != before || f.in.App.Tunnel.Running() {
		t.Fatalf("a refused request changed the tunnel: %+v → %+v, running %v", before, after, f.in.App.Tunnel.Running())
	}
	for path, form := range routes {
		if r := f.do(t, req{method: "POST", path: path, b: b, form: form}); r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/setup" {
			t.Errorf("well-formed POST %s: %d %q", path, r.StatusCode, r.Header.Get("Location"))
		}
	}
}

func fileSum(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// TestSetupPin walks the pin as an operator would: the page shows the
// tunnel-client found on PATH (inside an fs root) with its SHA-256 and
// warnings, unpinned; init does not pin it; a pin posted with a SHA-256
// the file no longer has is refused; pinning with the hash shown records
// path and SHA-256 (page, config.json); a file planted over it is shown as
// changed and refused by start and doctor (the Status page says so too);
// a typed path is hashed and shown before it is pinned again; then it
// runs.
func TestSetupPin(t *testing.T) {
	built := fakeTunnelClient(t)
	starts := filepath.Join(t.TempDir(), "starts")
	t.Setenv("FAKE_TUNNEL_STARTS", starts)
	t.Setenv("FAKE_TUNNEL_PROFILE_DIR", t.TempDir())
	var fake string
	f := newFixture(t, func(c *config.Config) {
		c.Tunnel.TunnelID = setupTunnelID
		// The fake lies on PATH inside the fs root, as a planted one would.
		fake = filepath.Join(c.Roots[0], "bin", filepath.Base(built))
	})
	root := f.in.App.Config.Roots[0]
	data, err := os.ReadFile(built)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(fake), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fake, data, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", filepath.Dir(fake))
	b := f.login(t)
	post := func(path string, kv ...string) {
		t.Helper()
		if r := f.post(t, b, path, kv...); r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/setup" {
			t.Fatalf("POST %s: %d %q\n%s", path, r.StatusCode, r.Header.Get("Location"), r.body)
		}
	}
	has := func(what, body string, wants ...string) {
		t.Helper()
		for _, w := range wants {
			if !strings.Contains(body, w) {
				t.Errorf("%s: the page lacks %q", what, w)
			}
		}
	}
	lacks := func(what, body string, nots ...string) {
		t.Helper()
		for _, n := range nots {
			if strings.Contains(body, n) {
				t.Errorf("%s: the page shows %q", what, n)
			}
		}
	}
	pinned := func() config.Tunnel {
		t.Helper()
		c, err := config.Load(filepath.Join(f.in.Home, "config.json"))
		if err != nil {
			t.Fatal(err)
		}
		return c.Tunnel
	}
	post("/setup/key", "key", newRuntimeKey(t))

	sum := fileSum(t, fake)
	body := f.get(t, b, "/setup")
	has("fresh", body, `data-testid="client-candidate" data-source="PATH"`, "(found on PATH)",
		`data-testid="candidate-path">`+fake+`<`, `data-testid="candidate-sha256">`+sum+`<`,
		`data-testid="candidate-warning-path"`, `data-testid="candidate-warning-root"`, root,
		`name="client_sha256" value="`+sum+`"`, `data-state="not_configured"`, "not pinned")
	post("/setup/start")
	has("start unpinned", f.get(t, b, "/setup"), `data-testid="flash-error">The connection cannot start yet: finish the steps above`, "tunnel-client is not pinned yet")
	post("/setup/doctor")
	has("doctor unpinned", f.get(t, b, "/setup"), `data-testid="flash-error">Hearth could not check the connection: no connection program is trusted yet`)
	// init does not pin (nor run) what PATH finds.
	post("/setup/init", "tunnel_id", setupTunnelID)
	has("init unpinned", f.get(t, b, "/setup"), `data-testid="flash-error">Hearth could not prepare the connection: no connection program is trusted yet`)
	if c := pinned(); c.ClientSHA256 != "" {
		t.Fatalf("init pinned %+v", c)
	}

	// A path that is not absolute is refused, naming the field, not quoted;
	// so is a pin without the SHA-256.
	post("/setup/pin", "client_path", "my-tunnel-client", "client_sha256", sum)
	body = f.get(t, b, "/setup")
	has("relative", body, `data-testid="flash-error">tunnel-client path: that is not the full path of a program file`)
	lacks("relative", body, "my-tunnel-client")
	post("/setup/pin", "client_path", fake)
	has("no hash", f.get(t, b, "/setup"), `data-testid="flash-error">tunnel-client SHA-256: missing or not a SHA-256`)

	// The file changes between the page and the pin: refused, naming both
	// hashes; nothing pinned.
	if err := os.WriteFile(fake, append(data, "swapped"...), 0o700); err != nil {
		t.Fatal(err)
	}
	swapped := fileSum(t, fake)
	post("/setup/pin", "client_path", fake, "client_sha256", sum)
	has("stale hash", f.get(t, b, "/setup"), `data-testid="flash-error">Not pinned: tunnel-client `+fake+` now has SHA-256 `+swapped+`, not the `+sum)
	if c := pinned(); c.ClientSHA256 != "" {
		t.Fatalf("a stale hash pinned %+v", c)
	}
	if err := os.WriteFile(fake, data, 0o700); err != nil {
		t.Fatal(err)
	}

	post("/setup/pin", "client_path", fake, "client_sha256", sum)
	body = f.get(t, b, "/setup")
	has("pinned", body, `data-testid="flash">Trusted. Hearth runs only this file`,
		`data-testid="client-pinned"`, `data-testid="client-path">`+fake+`<`, `data-testid="client-sha256">`+sum+`<`,
		`data-testid="client-pin-note"`, `data-state="stopped"`, `data-testid="candidate-pinned"`)
	if c := pinned(); c.ClientPath != fake || c.ClientSHA256 != sum {
		t.Fatalf("config.json after the pin: %+v", c)
	}

	// Something replaces the pinned file.
	if err := os.WriteFile(fake, append(data, "planted"...), 0o700); err != nil {
		t.Fatal(err)
	}
	now := fileSum(t, fake)
	body = f.get(t, b, "/setup")
	has("changed", body, `data-testid="client-changed"`, `data-testid="client-sha256-now">`+now+`<`, `data-testid="client-sha256">`+sum+`<`)
	post("/setup/start")
	body = f.get(t, b, "/setup")
	has("start changed", body, `data-testid="flash-error">The connection did not start: the connection program changed since you trusted it`,
		`data-state="client_changed"`)
	post("/setup/doctor")
	has("doctor changed", f.get(t, b, "/setup"), `data-testid="flash-error">The check did not run: the connection program changed since you trusted it`)
	has("status page", f.get(t, b, "/"), "client_changed", fake)
	if _, err := os.Stat(starts); !errors.Is(err, os.ErrNotExist) || f.in.App.Tunnel.Running() {
		t.Fatalf("the planted client ran (%v)", err)
	}

	// The operator types the path: Hearth shows its SHA-256 and a pin
	// form, and pins nothing yet.
	post("/setup/pin/check", "client_path", fake)
	body = f.get(t, b, "/setup")
	has("checked", body, `data-testid="client-checked"`, "(the path you gave)", `data-testid="candidate-sha256">`+now+`<`,
		`name="client_sha256" value="`+now+`"`, `data-testid="candidate-warning-root"`)
	if c := pinned(); c.ClientSHA256 != sum {
		t.Fatalf("checking a path pinned it: %+v", c)
	}
	post("/setup/pin/check", "client_path", "not-a-path")
	body = f.get(t, b, "/setup")
	has("check relative", body, `data-testid="flash-error">tunnel-client path: that is not the full path`)
	lacks("check relative", body, "not-a-path", `data-testid="client-checked"`)

	// The operator checked the file and pins it again; now it runs.
	post("/setup/pin", "client_path", fake, "client_sha256", now)
	body = f.get(t, b, "/setup")
	has("re-pinned", body, `data-testid="flash">Trusted. Hearth runs only this file`, `data-testid="client-sha256">`+now+`<`, `data-state="stopped"`)
	lacks("re-pinned", body, `data-testid="client-changed"`)
	if c := pinned(); c.ClientPath != fake || c.ClientSHA256 != now {
		t.Fatalf("config.json after the re-pin: %+v", c)
	}
	post("/setup/start")
	waitTunnel(t, f, "ready", func(st tunnel.Status) bool { return st.State == tunnel.StateReady })
	post("/setup/stop")
}
