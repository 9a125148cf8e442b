package doctor

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/hearth-dev/hearth/internal/instance"
)

// checkInstance looks for a running Hearth: whether the Hearth lock is
// held (instance.Held; the ensure lock is left alone, so an ensure or a
// logon start running now is never told "already running" because of
// doctor), then the addresses it published, each asked over loopback.
func (d *doctor) checkInstance(ctx context.Context) {
	const name = "instance"
	if !d.homeExists {
		d.lockKnown = true
		d.line(checkWarn, name, "Hearth is not running (it has never run with this data directory)")
		return
	}
	running, err := instance.Held(instance.LockHearth, d.dataDir)
	if err != nil {
		d.line(checkWarn, name, fmt.Sprintf("could not probe the instance lock: %v", err))
		return
	}
	d.lockHeld, d.lockKnown = running, true
	info, ierr := instance.ReadInfo(d.dataDir)
	if !running {
		d.line(checkWarn, name, "Hearth is not running (start it from the Start menu, or run hearth-tray serve)")
		return
	}
	if ierr != nil {
		d.line(checkWarn, name, "Hearth is running but has not published its addresses yet (still starting?); run doctor again in a minute")
		return
	}
	d.running = &info
	d.line(checkOK, name, fmt.Sprintf("Hearth is running (pid %d)", info.PID))
	d.checkMCP(ctx, info.MCPURL)
	d.checkPanel(ctx, info.PanelURL)
}

// loopbackURL parses u and checks that it names a loopback host: doctor
// never sends a request elsewhere, whatever instance.json says.
func loopbackURL(u string) (*url.URL, error) {
	p, err := url.Parse(u)
	if err != nil || p.Scheme != "http" {
		return nil, fmt.Errorf("%q is not an http URL", u)
	}
	ip := net.ParseIP(p.Hostname())
	if p.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("%q is not a loopback address", u)
	}
	return p, nil
}

// newHTTPClient is the client of the endpoint checks: short timeouts, and
// redirects not followed (the panel answers a visitor without a session
// with a redirect; that answer is all doctor needs).
func newHTTPClient() *http.Client {
	return &http.Client{
		Timeout:       5 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// checkMCP sends the running endpoint an MCP ping.
func (d *doctor) checkMCP(ctx context.Context, mcpURL string) {
	const name = "MCP endpoint"
	u, err := loopbackURL(mcpURL)
	if err != nil {
		d.line(checkFail, name, fmt.Sprintf("instance.json: %v", err))
		return
	}
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		d.line(checkFail, name, err.Error())
		return
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := d.http.Do(req)
	if err != nil {
		d.line(checkFail, name, fmt.Sprintf("%s does not answer: %v (quit Hearth from the tray and start it again)", mcpURL, err))
		return
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		d.line(checkWarn, name, fmt.Sprintf("%s answers a ping with HTTP %d", mcpURL, resp.StatusCode))
		return
	}
	d.line(checkOK, name, mcpURL+" answers")
}

// checkPanel asks the running control panel for its front page.
func (d *doctor) checkPanel(ctx context.Context, panelURL string) {
	const name = "control panel"
	u, err := loopbackURL(panelURL)
	if err != nil {
		d.line(checkFail, name, fmt.Sprintf("instance.json: %v", err))
		return
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		d.line(checkFail, name, err.Error())
		return
	}
	resp, err := d.http.Do(req)
	if err != nil {
		d.line(checkFail, name, fmt.Sprintf("%s does not answer: %v (quit Hearth from the tray and start it again)", panelURL, err))
		return
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode >= 500 {
		d.line(checkWarn, name, fmt.Sprintf("%s answers HTTP %d", panelURL, resp.StatusCode))
		return
	}
	d.line(checkOK, name, panelURL+" answers")
}

// checkPort: the configured address is free for Hearth's next start, or
// held by the Hearth that runs now. A port another program holds fails
// when Hearth is not running (it cannot start there) and warns when a
// Hearth runs on other addresses (started with --mcp-addr/--panel-addr).
//
// "Free" is found by binding the address and closing it at once: a port
// held by another program is the commonest reason Hearth fails to start,
// and nothing else tells it as surely. The bind happens only when the
// Hearth lock is known to be free (no Hearth can be listening there then)
// or held by a Hearth on other addresses (no other Hearth can start then);
// it is skipped while a Hearth holds the lock but has not published its
// addresses (it may be binding them right now) and when the lock could
// not be probed. What is left is a Hearth starting in the microseconds
// between doctor's bind and its close, whose Listen would then fail: a
// window accepted on purpose for the check's sake.
func (d *doctor) checkPort(name, key, addr string, urlOf func(instance.Info) string) {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		d.line(checkFail, name, fmt.Sprintf("config key %q: %q is not host:port", key, addr))
		return
	}
	if port == "0" {
		d.line(checkOK, name, fmt.Sprintf("%s: any free port is used", addr))
		return
	}
	if d.running != nil {
		if u, err := url.Parse(urlOf(*d.running)); err == nil && sameAddr(u.Host, addr) {
			d.line(checkOK, name, fmt.Sprintf("%s is held by this Hearth (pid %d)", addr, d.running.PID))
			return
		}
	}
	if !d.lockKnown || (d.lockHeld && d.running == nil) {
		why := "the instance lock could not be probed"
		if d.lockKnown {
			why = "a Hearth is starting and may be binding it now"
		}
		d.line(checkWarn, name, fmt.Sprintf("%s not checked: %s", addr, why))
		return
	}
	ln, err := net.Listen("tcp", addr)
	if err == nil {
		ln.Close()
		d.line(checkOK, name, addr+" is free")
		return
	}
	// Hearth starts anyway: the listener moves to a free port, saved in
	// config.json (app.Listen); only a --mcp-addr/--panel-addr given on
	// the command line would fail.
	d.line(checkWarn, name, fmt.Sprintf("%s is in use by another program (%v); Hearth starts on a free port instead and saves it in the config key %q (close that program to keep this port)", addr, err, key))
}

// sameAddr compares two host:port addresses, treating localhost and the
// loopback IPs by what they name.
func sameAddr(a, b string) bool {
	ha, pa, err1 := net.SplitHostPort(a)
	hb, pb, err2 := net.SplitHostPort(b)
	if err1 != nil || err2 != nil || pa != pb {
		return false
	}
	norm := func(h string) string {
		if h == "localhost" {
			return "127.0.0.1"
		}
		if ip := net.ParseIP(h); ip != nil {
			return ip.String()
		}
		return h
	}
	return norm(ha) == norm(hb)
}
