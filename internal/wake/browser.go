package wake

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// ChatGPTURL is where Hearth's ChatGPT window opens.
const ChatGPTURL = "https://chatgpt.com/"

// ErrNoBrowser is returned by FindBrowser when neither Edge nor Chrome
// (nor Chromium elsewhere) is installed in a standard place.
var ErrNoBrowser = errors.New("no Edge or Chrome found in the standard install locations; set wake.browser_path")

// FindBrowser returns the browser Hearth starts: override (the config key
// wake.browser_path) when set, else the first of the standard install
// locations that exists (browserCandidates, per platform).
func FindBrowser(override string) (string, error) {
	if override != "" {
		st, err := os.Stat(override)
		if err != nil {
			return "", fmt.Errorf("wake.browser_path %q: %w", override, err)
		}
		if st.IsDir() {
			return "", fmt.Errorf("wake.browser_path %q is a directory, not a browser executable", override)
		}
		return override, nil
	}
	for _, c := range browserCandidates() {
		if filepath.IsAbs(c) {
			if st, err := os.Stat(c); err == nil && !st.IsDir() {
				return c, nil
			}
			continue
		}
		if p, err := exec.LookPath(c); err == nil {
			return p, nil
		}
	}
	return "", ErrNoBrowser
}

// LaunchOptions say how to start the browser.
type LaunchOptions struct {
	// Path is the browser executable.
	Path string
	// ProfileDir is the dedicated user data directory (created).
	ProfileDir string
	// URL is the page the window opens on.
	URL string
	// ExtraArgs come before the URL (tests run headless).
	ExtraArgs []string
}

// launchArgs are the browser's arguments. There is deliberately no
// --remote-debugging-port: CDP runs over the pipe only, which no other
// process or user can reach.
func launchArgs(o LaunchOptions) []string {
	args := []string{
		"--remote-debugging-pipe",
		"--user-data-dir=" + o.ProfileDir,
		"--no-first-run",
		"--no-default-browser-check",
	}
	args = append(args, o.ExtraArgs...)
	if o.URL != "" {
		args = append(args, o.URL)
	}
	return args
}

// Browser is a browser Hearth started as its own child, with the CDP
// connection over its pipe.
type Browser struct {
	Conn *Conn
	Pid  int
	proc *process
	exit chan struct{}
	err  error
}

// process is a started child with the two pipe ends Hearth keeps.
type process struct {
	pid  int
	wait func() error
	kill func() error
	// toChild is written to the child's descriptor 3; fromChild reads the
	// child's descriptor 4.
	toChild   io.WriteCloser
	fromChild io.ReadCloser
}

// Launch starts the browser with CDP over --remote-debugging-pipe.
// events receives every CDP event (see newConn).
func Launch(o LaunchOptions, events func(cdpEvent)) (*Browser, error) {
	if err := os.MkdirAll(o.ProfileDir, 0o700); err != nil {
		return nil, fmt.Errorf("create browser profile directory: %w", err)
	}
	p, err := spawn(o.Path, launchArgs(o))
	if err != nil {
		return nil, fmt.Errorf("start browser %s: %w", o.Path, err)
	}
	b := &Browser{Pid: p.pid, proc: p, exit: make(chan struct{})}
	b.Conn = newConn(p.fromChild, p.toChild, events)
	go func() {
		b.err = p.wait()
		p.fromChild.Close()
		close(b.exit)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var v struct {
		Product string `json:"product"`
	}
	if err := b.Conn.Call(ctx, "", "Browser.getVersion", nil, &v); err != nil {
		b.Close()
		return nil, fmt.Errorf("start browser %s: no CDP answer on the pipe: %w", o.Path, err)
	}
	return b, nil
}

// Exited is closed when the browser process has ended.
func (b *Browser) Exited() <-chan struct{} { return b.exit }

// Close asks the browser to close, and kills it when it has not ended
// within a few seconds.
func (b *Browser) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_ = b.Conn.Call(ctx, "", "Browser.close", nil, nil)
	select {
	case <-b.exit:
	case <-time.After(5 * time.Second):
		if err := b.proc.kill(); err != nil && !strings.Contains(err.Error(), "finished") {
			return fmt.Errorf("kill browser %d: %w", b.Pid, err)
		}
		<-b.exit
	}
	b.Conn.Close()
	return nil
}
