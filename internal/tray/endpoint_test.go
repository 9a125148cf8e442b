package tray

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// callerNotStartedByHearth stands in for Endpoint's check of the caller in
// tests of the paths that serve one: the caller there is this test
// process, which the real check refuses (Hearth never asks itself). The
// real check is what control_caller_test.go runs.
func callerNotStartedByHearth(netip.AddrPort, netip.AddrPort) (bool, error) { return false, nil }

type fakeActions struct{ opens, quits atomic.Int32 }

func startControl(t *testing.T, dir string) (*Endpoint, *fakeActions) {
	t.Helper()
	f := &fakeActions{}
	c := &Endpoint{
		Open:            func() error { f.opens.Add(1); return nil },
		Quit:            func() { f.quits.Add(1) },
		StartedByHearth: callerNotStartedByHearth,
	}
	if err := c.Listen(dir); err != nil {
		t.Fatal(err)
	}
	go c.Serve()
	t.Cleanup(func() { c.Close() })
	return c, f
}

func TestControlAskOpenAndQuit(t *testing.T) {
	dir := t.TempDir()
	c, f := startControl(t, dir)
	ctx := context.Background()
	if err := Ask(ctx, dir, ReqOpen); err != nil {
		t.Fatal(err)
	}
	if err := Ask(ctx, dir, ReqQuit); err != nil {
		t.Fatal(err)
	}
	if f.opens.Load() != 1 || f.quits.Load() != 1 {
		t.Fatalf("opens %d quits %d", f.opens.Load(), f.quits.Load())
	}
	if runtime.GOOS != "windows" {
		fi, err := os.Stat(filepath.Join(dir, ControlFile))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("control file must be 0600: %v %v", fi.Mode(), err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, ControlFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Close must remove the control file: %v", err)
	}
	if err := Ask(ctx, dir, ReqOpen); !errors.Is(err, ErrNoTray) {
		t.Fatalf("after Close: %v, want ErrNoTray", err)
	}
}

// TestControlStaleFile: a file left by a crashed tray points at a closed
// port: no tray, not an error of another kind.
func TestControlStaleFile(t *testing.T) {
	dir := t.TempDir()
	c, _ := startControl(t, dir)
	stale, err := os.ReadFile(filepath.Join(dir, ControlFile))
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if err := os.WriteFile(filepath.Join(dir, ControlFile), stale, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Ask(context.Background(), dir, ReqQuit); !errors.Is(err, ErrNoTray) {
		t.Fatalf("stale control file: %v, want ErrNoTray", err)
	}
	start := time.Now()
	if err := AskWait(context.Background(), dir, ReqQuit, 500*time.Millisecond); !errors.Is(err, ErrNoTray) {
		t.Fatalf("AskWait: %v", err)
	}
	if time.Since(start) < 400*time.Millisecond {
		t.Fatal("AskWait must keep asking until its wait has passed")
	}
}

// TestControlAskWaitForStartingTray: a second start asks before the first
// has published its endpoint.
func TestControlAskWaitForStartingTray(t *testing.T) {
	dir := t.TempDir()
	f := &fakeActions{}
	go func() {
		time.Sleep(300 * time.Millisecond)
		c := &Endpoint{Open: func() error { f.opens.Add(1); return nil }, Quit: func() {}}
		if err := c.Listen(dir); err != nil {
			t.Error(err)
			return
		}
		t.Cleanup(func() { c.Close() })
		c.Serve()
	}()
	if err := AskWait(context.Background(), dir, ReqOpen, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if f.opens.Load() != 1 {
		t.Fatal("open not delivered")
	}
}

// TestControlRefusesHostileRequests: the endpoint acts only on an
// authorized POST from a loopback Host without an Origin.
func TestControlRefusesHostileRequests(t *testing.T) {
	dir := t.TempDir()
	c, f := startControl(t, dir)
	info, err := readControl(dir)
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + c.Addr()
	wrong := info.Secret[:len(info.Secret)-1] + "0"
	if wrong == info.Secret {
		wrong = info.Secret[:len(info.Secret)-1] + "1"
	}
	for _, tc := range []struct {
		name   string
		method string
		path   string
		host   string
		origin string
		token  string
		want   int
	}{
		{"valid", http.MethodPost, "/open", "", "", info.Secret, http.StatusNoContent},
		{"no token", http.MethodPost, "/open", "", "", "", http.StatusUnauthorized},
		{"wrong token", http.MethodPost, "/quit", "", "", wrong, http.StatusUnauthorized},
		{"foreign host", http.MethodPost, "/quit", "evil.example:80", "", info.Secret, http.StatusForbidden},
		{"rebinding host", http.MethodPost, "/quit", "127.0.0.1.nip.io", "", info.Secret, http.StatusForbidden},
		{"browser origin", http.MethodPost, "/quit", "", "http://127.0.0.1:3001", info.Secret, http.StatusForbidden},
		{"GET", http.MethodGet, "/quit", "", "", info.Secret, http.StatusMethodNotAllowed},
		{"unknown path", http.MethodPost, "/login", "", "", info.Secret, http.StatusNotFound},
		{"localhost host", http.MethodPost, "/open", "localhost", "", info.Secret, http.StatusNoContent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, base+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.host != "" {
				req.Host = tc.host
			}
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.want)
			}
		})
	}
	if f.quits.Load() != 0 || f.opens.Load() != 2 {
		t.Fatalf("only the two valid requests may act: opens %d quits %d", f.opens.Load(), f.quits.Load())
	}
}

func TestCheckBrowsable(t *testing.T) {
	for raw, ok := range map[string]bool{
		"http://127.0.0.1:3001/login?token=abc": true,
		"http://[::1]:3001/":                    true,
		"https://127.0.0.1:3001/":               false,
		"http://example.com/":                   false,
		"file:///C:/Windows/System32/calc.exe":  false,
		`C:\Windows\System32\calc.exe`:          false,
		"http://user@127.0.0.1:3001/":           false,
	} {
		if err := checkBrowsable(raw); (err == nil) != ok {
			t.Errorf("%s: %v", raw, err)
		}
	}
}

// TestControlStaleFileForeignListener: a stale control file whose port a
// program that is not the tray now holds (it hangs up at once, as another
// test's server did) is "no tray", not a failure to ask.
func TestControlStaleFileForeignListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			if tc, ok := conn.(*net.TCPConn); ok {
				_ = tc.SetLinger(0) // close with a reset
			}
			conn.Close()
		}
	}()
	dir := t.TempDir()
	info := controlInfo{PID: os.Getpid(), Addr: ln.Addr().String(), Secret: "stale"}
	b, err := json.Marshal(info)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ControlFile), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Ask(context.Background(), dir, ReqQuit); !errors.Is(err, ErrNoTray) {
		t.Fatalf("a foreign listener on a stale control file's port: %v, want ErrNoTray", err)
	}
}

// TestControlAskLogin: a Hearth that mints login URLs (Login set) hands a
// fresh one to AskLogin; a wrong secret gets none; one without Login
// refuses (404); an answer that is not a loopback http URL is refused by
// the asker.
func TestControlAskLogin(t *testing.T) {
	dir := t.TempDir()
	var minted atomic.Int32
	answer := "http://127.0.0.1:3001/login?token=abc"
	c := &Endpoint{Open: func() error { return nil }, Quit: func() {}, Login: func() (string, error) {
		minted.Add(1)
		return answer, nil
	}, StartedByHearth: callerNotStartedByHearth}
	if err := c.Listen(dir); err != nil {
		t.Fatal(err)
	}
	go c.Serve()
	defer c.Close()
	ctx := context.Background()
	u, err := AskLogin(ctx, dir)
	if err != nil || u != answer || minted.Load() != 1 {
		t.Fatalf("AskLogin: %q %v (minted %d)", u, err, minted.Load())
	}

	info, _ := readControl(dir)
	req, _ := http.NewRequest(http.MethodPost, "http://"+c.Addr()+"/login", nil)
	req.Header.Set("Authorization", "Bearer "+strings.Repeat("0", len(info.Secret)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || minted.Load() != 1 {
		t.Fatalf("a wrong secret: %s, minted %d", resp.Status, minted.Load())
	}

	answer = "http://evil.example/login?token=abc"
	if u, err := AskLogin(ctx, dir); err == nil {
		t.Fatalf("a non-loopback login URL was accepted: %q", u)
	}

	other := t.TempDir()
	startControl(t, other)
	if u, err := AskLogin(ctx, other); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("a Hearth without Login: %q %v", u, err)
	}
}
