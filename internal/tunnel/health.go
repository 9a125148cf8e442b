package tunnel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// watchHealth polls the child until ctx ends: fast at first (pollMin,
// doubling) so readiness shows soon after start, then every pollMax. Ready
// takes both of tunnel-client's own signals: /readyz answers 2xx, and its
// /metrics (same server) shows a successful control-plane poll within
// pollFresh (commands_poll_last_successful_timestamp_seconds, what its
// own `health --require-control-plane-poll` checks). /readyz alone does
// not cover polling: with a refused key it stays 2xx while every poll
// fails. A key the control plane refused (a 401/403 in the child's
// output, see keyRefusedLine) since the last successful poll is
// StateKeyRefused, unless another key was saved since the child started
// (gen is keyGen then). Otherwise a failing probe leaves a new child
// "starting" for startGrace; after that, or once it has been ready, it is
// "unhealthy". Unhealthy is reported, not acted on: tunnel-client
// reconnects by itself, and a child that really fails exits and is
// restarted.
func (s *Supervisor) watchHealth(ctx context.Context, r *run, urlFile, key string, gen uint64, started time.Time, refused func() time.Time) {
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
		lastPoll, err := probe(ctx, client, urlFile)
		if ctx.Err() != nil {
			return
		}
		refusedAt := refused()
		fresh := !lastPoll.IsZero() && time.Since(lastPoll) <= s.t.pollFresh
		switch {
		case !refusedAt.IsZero() && !lastPoll.After(refusedAt):
			// Only about the key this child runs with (gen): once a new
			// key is saved, the child is on its way out.
			s.update(r, func(st *Status) {
				if s.keyGen == gen {
					st.State, st.Reason = StateKeyRefused, ReasonKeyRefused
				}
			})
		case err == nil && fresh:
			wasReady = true
			s.setState(r, StateReady, ReasonReady)
		case err == nil:
			// /readyz is fine, but no recent successful poll of OpenAI's
			// control plane: ChatGPT cannot reach Hearth.
			if wasReady || time.Since(started) >= s.t.startGrace {
				s.setState(r, StateUnhealthy, ReasonPollFailing)
			} else {
				s.setState(r, StateStarting, "connecting to OpenAI")
			}
		case wasReady || time.Since(started) >= s.t.startGrace:
			s.setState(r, StateUnhealthy, "tunnel-client is running but not ready: "+redact(err.Error(), key))
		default:
			s.setState(r, StateStarting, "waiting for tunnel-client to report ready: "+redact(err.Error(), key))
		}
		interval = min(2*interval, s.t.pollMax)
		timer.Reset(interval)
	}
}

// Reasons of the states the health watch sets, in words a person who
// does not know what a tunnel is can act on.
const (
	ReasonReady       = "connected to OpenAI: ChatGPT can reach Hearth"
	ReasonKeyRefused  = "OpenAI refused the tunnel key: paste it again on the Setup page"
	ReasonPollFailing = "the connection to OpenAI is failing (tunnel-client runs, but its calls to OpenAI do not succeed)"
)

// pollMetric is tunnel-client's gauge of its last successful control-plane
// poll, in Unix seconds.
const pollMetric = "commands_poll_last_successful_timestamp_seconds"

// keyRefusedLine reports whether a line of tunnel-client output says the
// control plane refused the key: a poll failure (tunnel-client logs
// "poll failed; backing off" with status_code and status) with an HTTP
// 401 or 403. A 401 that is not about polling (the MCP target's own, say)
// is not the key's.
func keyRefusedLine(line string) bool {
	l := strings.ToLower(line)
	if !strings.Contains(l, "poll") && !strings.Contains(l, "control plane") && !strings.Contains(l, "control-plane") {
		return false
	}
	return strings.Contains(l, "status_code=401") || strings.Contains(l, "status_code=403") ||
		strings.Contains(l, `"status_code":401`) || strings.Contains(l, `"status_code":403`) ||
		(strings.Contains(l, "401") && strings.Contains(l, "unauthorized")) ||
		(strings.Contains(l, "403") && strings.Contains(l, "forbidden"))
}

// KeyRefused reports whether tunnel-client output (a line, or a setup
// command's whole output) says OpenAI's control plane refused the key.
func KeyRefused(output string) bool {
	for line := range strings.Lines(output) {
		if keyRefusedLine(line) {
			return true
		}
	}
	return false
}

// parsePollMetric finds pollMetric in a Prometheus text exposition and
// returns its time (zero when absent, unparsable or 0: never polled).
func parsePollMetric(body string) time.Time {
	for line := range strings.Lines(body) {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		end := strings.IndexAny(line, "{ \t")
		if end < 0 {
			continue
		}
		// The name may carry an exporter's prefix ("tunnel_client_…").
		if name := line[:end]; name != pollMetric && !strings.HasSuffix(name, "_"+pollMetric) {
			continue
		}
		rest := line[end:]
		if rest[0] == '{' {
			i := strings.LastIndexByte(rest, '}')
			if i < 0 {
				continue
			}
			rest = rest[i+1:]
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			continue
		}
		// tunnel-client v0.0.14 writes e.g. 1.789486034e+09.
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil || v <= 0 || math.IsInf(v, 0) || math.IsNaN(v) {
			continue
		}
		sec, frac := math.Modf(v)
		return time.Unix(int64(sec), int64(frac*1e9))
	}
	return time.Time{}
}

// probe reads the health base URL tunnel-client wrote, asks its /readyz
// (err: not ready) and reads its /metrics for the last successful
// control-plane poll (zero: none, or no metrics). The URL must be plain
// http on a loopback address: the file lives in the user's data
// directory, and Hearth polls nothing else.
func probe(ctx context.Context, client *http.Client, urlFile string) (lastPoll time.Time, err error) {
	raw, err := readSmall(urlFile, 1024)
	if errors.Is(err, os.ErrNotExist) {
		return time.Time{}, errors.New("no health URL written yet")
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("read the health URL file: %w", err)
	}
	base, err := healthBase(strings.TrimSpace(string(raw)))
	if err != nil {
		return time.Time{}, err
	}
	if body, code, err := get(ctx, client, base+"/metrics", maxMetrics); err == nil && code == http.StatusOK {
		lastPoll = parsePollMetric(body)
	}
	_, code, err := get(ctx, client, base+"/readyz", 256)
	if err != nil {
		return lastPoll, errors.New("/readyz did not answer")
	}
	// The body is tunnel-client's own text and stays out of the status
	// reason (which host_info shows the model): only the code is reported.
	if code >= 200 && code < 300 {
		return lastPoll, nil
	}
	return lastPoll, fmt.Errorf("/readyz answered %d", code)
}

// maxMetrics bounds the /metrics body read.
const maxMetrics = 1 << 20

// get fetches url, reading at most limit bytes of the body.
func get(ctx context.Context, client *http.Client, url string, limit int64) (string, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", 0, fmt.Errorf("health URL: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return "", resp.StatusCode, err
	}
	return string(b), resp.StatusCode, nil
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
