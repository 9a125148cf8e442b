package tunnel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// watchHealth polls the child's /readyz until ctx ends: fast at first
// (pollMin, doubling) so readiness shows soon after start, then every
// pollMax. A failing probe leaves a new child "starting" for startGrace;
// after that, or once it has been ready, it is "unhealthy". Unhealthy is
// reported, not acted on: tunnel-client reconnects by itself, and a child
// that really fails exits and is restarted.
func (s *Supervisor) watchHealth(ctx context.Context, r *run, urlFile, key string, started time.Time) {
	client := &http.Client{
		Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true},
		Timeout:   s.t.probeTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	defer client.CloseIdleConnections()
	interval := s.t.pollMin
	timer := time.NewTimer(interval)
	defer timer.Stop()
	wasReady := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		err := probe(ctx, client, urlFile)
		if ctx.Err() != nil {
			return
		}
		switch {
		case err == nil:
			wasReady = true
			s.setState(r, StateReady, "tunnel-client reports ready")
		case wasReady || time.Since(started) >= s.t.startGrace:
			s.setState(r, StateUnhealthy, "tunnel-client is running but not ready: "+redact(err.Error(), key))
		default:
			s.setState(r, StateStarting, "waiting for tunnel-client to report ready: "+redact(err.Error(), key))
		}
		interval = min(2*interval, s.t.pollMax)
		timer.Reset(interval)
	}
}

// probe reads the health base URL tunnel-client wrote and asks its
// /readyz. The URL must be plain http on a loopback address: the file
// lives in the user's data directory, and Hearth polls nothing else.
func probe(ctx context.Context, client *http.Client, urlFile string) error {
	raw, err := readSmall(urlFile, 1024)
	if errors.Is(err, os.ErrNotExist) {
		return errors.New("no health URL written yet")
	}
	if err != nil {
		return fmt.Errorf("read the health URL file: %w", err)
	}
	base, err := healthBase(strings.TrimSpace(string(raw)))
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/readyz", nil)
	if err != nil {
		return fmt.Errorf("health URL: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return errors.New("/readyz did not answer")
	}
	defer resp.Body.Close()
	// Drain a little so the connection can be reused; the body is
	// tunnel-client's own text and stays out of the status reason (which
	// host_info shows the model): only the code is reported.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 256))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	return fmt.Errorf("/readyz answered %d", resp.StatusCode)
}

// healthBase checks a health URL and returns it without a trailing slash
// or a /healthz or /readyz path.
func healthBase(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || u.Host == "" || u.User != nil || u.RawQuery != "" {
		return "", errors.New("the health URL file does not hold an http URL")
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return "", errors.New("the health URL is not on a loopback address")
	}
	p := strings.TrimRight(u.Path, "/")
	p = strings.TrimSuffix(strings.TrimSuffix(p, "/readyz"), "/healthz")
	return u.Scheme + "://" + u.Host + p, nil
}

// readSmall reads at most limit bytes of a file.
func readSmall(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, limit))
}
