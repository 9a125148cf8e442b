package soak

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
)

// server is one `hearth-tray serve` process.
type server struct {
	cmd    *exec.Cmd
	url    string
	stderr *syncBuffer
	done   chan error
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.b.Len() < 1<<20 {
		s.b.Write(p)
	}
	return len(p), nil
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// freeAddr returns a loopback address nothing listens on just now.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// writeConfig writes home's config: trusted policy (exec without
// permits), roots the soak's files directory, fixed free ports so a
// restarted serve answers at the same URL.
func writeConfig(home, root string) error {
	mcp, err := freeAddr()
	if err != nil {
		return err
	}
	panel, err := freeAddr()
	if err != nil {
		return err
	}
	c := config.Default()
	c.Roots = []string{root}
	c.MCPAddr, c.PanelAddr = mcp, panel
	c.Policy.Mode = config.ModeTrusted
	return config.Write(filepath.Join(home, "config.json"), c)
}

func env(home string) []string {
	return append(os.Environ(), "HEARTH_HOME="+home, "HEARTH_CONFIG=")
}

// startServe starts serve on home and waits for its listening line.
func startServe(ctx context.Context, bin, home string) (*server, error) {
	cmd := exec.Command(bin, "serve")
	cmd.Env = env(home)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, stderr: &syncBuffer{}, done: make(chan error, 1)}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start serve: %w", err)
	}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "Hearth listening at "); ok {
				urls <- u
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	go func() { s.done <- cmd.Wait() }()
	select {
	case s.url = <-urls:
		return s, nil
	case err := <-s.done:
		return nil, fmt.Errorf("serve exited before listening (%v): %s", err, s.stderr.String())
	case <-time.After(60 * time.Second):
		s.kill()
		return nil, fmt.Errorf("serve did not print its address in 60 s: %s", s.stderr.String())
	case <-ctx.Done():
		s.kill()
		return nil, ctx.Err()
	}
}

func (s *server) pid() int { return s.cmd.Process.Pid }

// kill is kill -9.
func (s *server) kill() {
	s.cmd.Process.Kill()
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
	}
}

// stop asks serve to stop cleanly and waits for it.
func (s *server) stop() error {
	if err := s.cmd.Process.Signal(os.Interrupt); err != nil {
		return err
	}
	select {
	case err := <-s.done:
		return err
	case <-time.After(30 * time.Second):
		s.kill()
		return errors.New("serve did not stop within 30 s of an interrupt")
	}
}

// rssBytes reads a process's resident set size (Linux).
func rssBytes(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no VmRSS")
}

// fdCount counts a process's open file descriptors (Linux).
func fdCount(pid int) (int, error) {
	des, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	return len(des), err
}

// ledgerVerify runs `hearth-tray ledger verify` on home.
func ledgerVerify(ctx context.Context, bin, home string) (string, error) {
	cmd := exec.CommandContext(ctx, bin, "ledger", "verify")
	cmd.Env = env(home)
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }
