package tray

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hearth-dev/hearth/internal/atomicfile"
	"github.com/hearth-dev/hearth/internal/httpbound"
	"github.com/hearth-dev/hearth/internal/peeruser"
)

// The control endpoint lets a second start of hearth-tray reach the running
// tray: a double-click while Hearth runs asks it to open the control panel,
// and `uninstall` asks it to quit.
//
// Design: the tray listens on a loopback port of its own (127.0.0.1:0, not
// the panel's listener, so the panel's session and CSRF rules stay as they
// are) and writes ControlFile — the address, its pid and a fresh 256-bit
// secret — into the data directory, created 0600 (on Windows the data
// directory under %LOCALAPPDATA% is private to the user by its inherited
// ACL). A caller must present the secret as a bearer token; it is compared
// in constant time. The endpoint accepts three requests, POST /open,
// POST /quit and POST /login, from a loopback Host and without an Origin
// header (no browser page can drive it); open and quit answer 204 with no
// body.
//
// "open" hands out no login URL: the running Hearth mints one and opens it
// in the browser itself. "login" (POST /login, answered 200 with
// {"url": …}) does hand one out, for a second `hearth-tray serve` to print
// (a headless Hearth has no screen to open it on). The secret alone does
// not protect it: a program the model runs through Hearth (machine.exec,
// or a session on a real pseudo-terminal) is of the same account and can
// read ControlFile. So "login" and "quit" refuse (403) a caller that is a
// process Hearth started, directly or indirectly: the process holding the
// peer end of the connection (peeruser.PeerPIDs) is walked up its parent
// chain (peeruser.DescendsFrom), and on Linux Hearth is a child subreaper
// (peeruser.AdoptOrphans) so that a program that double-forks or calls
// setsid stays below it. "login" fails closed when the caller's process
// cannot be found; "quit" then serves it (uninstall must be able to stop
// Hearth). Hearth's own process counts as its descendant: Hearth never
// asks itself. What this does not stop is a program of the account that
// Hearth did not start, or one started by a service outside Hearth's
// process tree on request (systemd-run --user, the Task Scheduler, or on
// Windows a process whose parent exited): such a program could already
// rewrite config.json or stop Hearth. The file is removed at shutdown; a
// stale one left by a crash points at a closed port and a secret nobody
// accepts any more.
//
// Like the MCP and panel listeners, the endpoint serves only connections
// of the account the tray runs as (package peeruser): another account
// that learned the secret still gets 403, unless AnyAccount is set.

// ControlFile is the name of the control endpoint's file in the data
// directory.
const ControlFile = "tray-control.json"

// Requests the control endpoint accepts.
const (
	ReqOpen  = "open"
	ReqQuit  = "quit"
	ReqLogin = "login"
)

// ErrNoTray is returned by Ask when no running tray answers for the data
// directory.
var ErrNoTray = errors.New("no running Hearth tray answers for this data directory")

type controlInfo struct {
	PID    int    `json:"pid"`
	Addr   string `json:"addr"`
	Secret string `json:"secret"`
}

// Endpoint is the local endpoint through which a later hearth-tray run asks
// the running tray to open the panel, quit or give a login URL (its address
// and secret in ControlFile). Not to be confused with internal/control,
// which carries out on Hearth's engines what governance decides.
type Endpoint struct {
	// Open opens the control panel in the browser (Tray.OpenPanel).
	Open func() error
	// Quit begins Hearth's shutdown without waiting for it.
	Quit func()
	// Login mints a one-time control panel login URL (App.NewLoginURL)
	// for AskLogin; nil refuses ReqLogin (404).
	Login func() (string, error)
	Log   *slog.Logger
	// AnyAccount serves every account on this computer, not only the one
	// the tray runs as (config key loopback_same_user false).
	AnyAccount bool
	// StartedByHearth reports whether the caller of a connection (its two
	// ends as accepted) is this process or a process it started, directly
	// or indirectly; nil is the real check (peeruser.PeerPIDs and
	// DescendsFrom against this process). Tests of the paths that serve a
	// caller outside Hearth's tree set it.
	StartedByHearth func(local, remote netip.AddrPort) (bool, error)

	dataDir string
	secret  string
	ln      net.Listener
	srv     *http.Server
	once    sync.Once
}

// Listen binds 127.0.0.1:0 and publishes the endpoint in dataDir's
// ControlFile. Serve it with Serve; Close removes the file.
func (c *Endpoint) Listen(dataDir string) error {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return fmt.Errorf("tray control secret: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("tray control listener: %w", err)
	}
	if !c.AnyAccount {
		g, err := peeruser.Guard(ln, "tray control", c.log())
		if err != nil {
			ln.Close()
			return err
		}
		ln = g
	}
	c.dataDir, c.secret, c.ln = dataDir, hex.EncodeToString(b[:]), ln
	c.srv = httpbound.New(httpbound.Control(), nil).Server(c)
	data, err := json.Marshal(controlInfo{PID: os.Getpid(), Addr: ln.Addr().String(), Secret: c.secret})
	if err == nil {
		_, err = atomicfile.Write(filepath.Join(dataDir, ControlFile), data, 0o600)
	}
	if err != nil && !errors.Is(err, atomicfile.ErrNotDurable) {
		ln.Close()
		return fmt.Errorf("publish the tray control endpoint: %w", err)
	}
	return nil
}

// Addr is the endpoint's address.
func (c *Endpoint) Addr() string { return c.ln.Addr().String() }

// Serve answers requests until Close.
func (c *Endpoint) Serve() error {
	if err := c.srv.Serve(c.ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Close stops the endpoint and removes ControlFile if it is still this
// process's. It is safe to call more than once.
func (c *Endpoint) Close() error {
	var err error
	c.once.Do(func() {
		err = c.srv.Close()
		path := filepath.Join(c.dataDir, ControlFile)
		if info, rerr := readControl(c.dataDir); rerr == nil && info.Secret == c.secret {
			if rerr := os.Remove(path); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
				err = errors.Join(err, fmt.Errorf("remove %s: %w", ControlFile, rerr))
			}
		}
	})
	return err
}

// ServeHTTP is the endpoint: see the design note above.
func (c *Endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case !httpbound.LoopbackHost(r.Host):
		http.Error(w, "forbidden host", http.StatusForbidden)
		return
	case r.Header.Get("Origin") != "":
		http.Error(w, "forbidden origin", http.StatusForbidden)
		return
	case !c.authorized(r):
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	case r.Method != http.MethodPost:
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	switch r.URL.Path {
	case "/" + ReqOpen:
		if err := c.Open(); err != nil {
			c.log().Error("tray control: open the control panel", "err", err)
			http.Error(w, "could not open the control panel", http.StatusInternalServerError)
			return
		}
	case "/" + ReqQuit:
		if c.refuseHearths(w, r, ReqQuit, false) {
			return
		}
		c.Quit()
	case "/" + ReqLogin:
		if c.Login == nil {
			http.NotFound(w, r)
			return
		}
		if c.refuseHearths(w, r, ReqLogin, true) {
			return
		}
		u, err := c.Login()
		if err != nil {
			c.log().Error("tray control: mint a control panel login URL", "err", err)
			http.Error(w, "could not make a login URL", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		json.NewEncoder(w).Encode(loginAnswer{URL: u})
		return
	default:
		http.NotFound(w, r)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// refuseHearths answers 403 and reports true when the caller of r is
// Hearth's own process or one it started (see the design note above);
// failClosed refuses too when that cannot be determined.
func (c *Endpoint) refuseHearths(w http.ResponseWriter, r *http.Request, req string, failClosed bool) bool {
	started, err := c.startedByHearth(r)
	switch {
	case err != nil && failClosed:
		c.log().Warn("tray control: refused, the calling program could not be identified", "request", req, "remote", r.RemoteAddr, "err", err)
		http.Error(w, "refused: the calling program could not be identified", http.StatusForbidden)
		return true
	case err != nil:
		c.log().Warn("tray control: the calling program could not be identified; served", "request", req, "remote", r.RemoteAddr, "err", err)
		return false
	case started:
		c.log().Warn("tray control: refused a program started by Hearth", "request", req, "remote", r.RemoteAddr)
		http.Error(w, "refused: a program started by Hearth cannot "+req, http.StatusForbidden)
		return true
	}
	return false
}

func (c *Endpoint) startedByHearth(r *http.Request) (bool, error) {
	la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return false, errors.New("the request has no local address")
	}
	local, err := netip.ParseAddrPort(la.String())
	if err != nil {
		return false, fmt.Errorf("the request's local address: %w", err)
	}
	remote, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return false, fmt.Errorf("the request's remote address: %w", err)
	}
	if c.StartedByHearth != nil {
		return c.StartedByHearth(local, remote)
	}
	return StartedByHearth(local, remote)
}

// StartedByHearth is Endpoint's check of a caller: whether any process
// holding the peer end of the connection (local and remote as accepted)
// is this process or descends from it.
func StartedByHearth(local, remote netip.AddrPort) (bool, error) {
	pids, err := peeruser.PeerPIDs(local, remote)
	if err != nil {
		return false, fmt.Errorf("find the calling process: %w", err)
	}
	self := os.Getpid()
	for _, pid := range pids {
		ok, err := peeruser.DescendsFrom(pid, self)
		if err != nil {
			return false, fmt.Errorf("find the ancestry of calling process %d: %w", pid, err)
		}
		if ok {
			return true, nil
		}
	}
	return false, nil
}

func (c *Endpoint) authorized(r *http.Request) bool {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(tok), []byte(c.secret)) == 1
}

func (c *Endpoint) log() *slog.Logger {
	if c.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Log
}

// loginAnswer is ReqLogin's answer.
type loginAnswer struct {
	URL string `json:"url"`
}

// Ask sends req (ReqOpen or ReqQuit) to the running tray of dataDir. It
// returns ErrNoTray (wrapped) when there is no ControlFile or nothing
// answers at its address.
func Ask(ctx context.Context, dataDir, req string) error {
	_, err := ask(ctx, dataDir, req, http.StatusNoContent)
	return err
}

// AskLogin asks the running Hearth of dataDir (the tray, or a serve) for
// a one-time control panel login URL, checked to be an http URL on a
// loopback host; ErrNoTray (wrapped) as Ask.
func AskLogin(ctx context.Context, dataDir string) (string, error) {
	body, err := ask(ctx, dataDir, ReqLogin, http.StatusOK)
	if err != nil {
		return "", err
	}
	var a loginAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		return "", fmt.Errorf("ask the running Hearth for a login URL: %w", err)
	}
	u, err := url.Parse(a.URL)
	if err != nil || u.Scheme != "http" || !httpbound.LoopbackHost(u.Host) {
		return "", fmt.Errorf("ask the running Hearth for a login URL: %q is not a loopback http URL", a.URL)
	}
	return a.URL, nil
}

// ask sends req and wants the status want; it returns the answer's body
// (at most 64 KiB).
func ask(ctx context.Context, dataDir, req string, want int) ([]byte, error) {
	info, err := readControl(dataDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w (no %s)", ErrNoTray, ControlFile)
	}
	if err != nil {
		return nil, err
	}
	if !httpbound.LoopbackHost(info.Addr) {
		return nil, fmt.Errorf("%s: address %q is not loopback", ControlFile, info.Addr)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+info.Addr+"/"+req, nil)
	if err != nil {
		return nil, err
	}
	hreq.Header.Set("Authorization", "Bearer "+info.Secret)
	client := &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}, Timeout: 10 * time.Second}
	resp, err := client.Do(hreq)
	if err != nil {
		// Nothing listens there (dial), or what does hung up before any
		// answer (a stale file whose port another program now has: the
		// reset shows on the read, or on the write when it hung up before
		// the request was all sent): either way no tray answers.
		var op *net.OpError
		if errors.As(err, &op) && (op.Op == "dial" || op.Op == "read" || op.Op == "write") || errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w (pid %d does not answer)", ErrNoTray, info.PID)
		}
		return nil, fmt.Errorf("ask the running Hearth to %s: %w", req, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return nil, fmt.Errorf("ask the running Hearth to %s: %w", req, err)
	}
	if resp.StatusCode != want {
		return nil, fmt.Errorf("ask the running Hearth to %s: %s", req, resp.Status)
	}
	return body, nil
}

// AskWait is Ask, retried while the tray may still be starting: until it
// answers, ctx ends or wait has passed. It gives up at once on an answer
// that is not "no tray".
func AskWait(ctx context.Context, dataDir, req string, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		err := Ask(ctx, dataDir, req)
		if !errors.Is(err, ErrNoTray) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func readControl(dataDir string) (controlInfo, error) {
	var info controlInfo
	b, err := os.ReadFile(filepath.Join(dataDir, ControlFile))
	if err != nil {
		return info, fmt.Errorf("read tray control file: %w", err)
	}
	if err := json.Unmarshal(b, &info); err != nil {
		return info, fmt.Errorf("read tray control file: %w", err)
	}
	return info, nil
}
