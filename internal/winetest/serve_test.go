// Package winetest drives the real Windows build of hearth-tray under Wine
// from the Linux side, with the go-sdk MCP client over loopback. It runs
// only when HEARTH_WINE_EXE names the exe and HEARTH_WINE_EXEC the wrapper
// that runs it (scripts/test-wine-serve sets both).
package winetest

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// winPath maps a Linux path to the Wine Z: drive.
func winPath(p string) string { return `Z:` + strings.ReplaceAll(p, "/", `\`) }

func TestServeUnderWine(t *testing.T) {
	exe, wrapper := os.Getenv("HEARTH_WINE_EXE"), os.Getenv("HEARTH_WINE_EXEC")
	if exe == "" || wrapper == "" {
		t.Skip("HEARTH_WINE_EXE / HEARTH_WINE_EXEC not set (scripts/test-wine-serve runs this)")
	}
	home, root := t.TempDir(), t.TempDir()
	cfg := config.Default()
	cfg.Roots = []string{winPath(root)}
	cfg.Policy.Mode = config.ModeTrusted
	// The client is this Linux process, which is in no Windows TCP table:
	// under Wine its owner cannot be determined, so the same-user check
	// would refuse it (as it must on a host that cannot tell). The check
	// itself runs under Wine in internal/peeruser's tests; here it is off,
	// as loopback_same_user documents for such hosts.
	cfg.LoopbackSameUser = false
	if err := config.Write(filepath.Join(home, "config.json"), cfg); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(wrapper, exe, "serve", "--mcp-addr", "127.0.0.1:0", "--panel-addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "HEARTH_HOME="+winPath(home), "HEARTH_CONFIG=")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "Hearth listening at "); ok {
				urls <- u
			}
		}
	}()
	var url string
	select {
	case url = <-urls:
	case <-time.After(90 * time.Second):
		t.Fatalf("the Windows serve did not start under Wine: %s", stderr.String())
	}
	c := hearthtest.Connect(t, url, "wine")
	if v := c.Session.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("protocol %s", v)
	}
	tools, err := c.Session.ListTools(t.Context(), nil)
	if err != nil || len(tools.Tools) < 3 {
		t.Fatalf("tools/list: %v %v", err, tools)
	}
	r := c.Call("machine", map[string]any{"operation": "host_info"})
	if r.Get("result.os") != "windows" {
		t.Fatalf("host_info: %s", r.Raw)
	}
	r = c.Final("machine", map[string]any{"operation": "exec", "command": "cmd.exe", "args": []string{"/c", "echo", "hello from windows"}, "timeout_ms": 60000})
	if text, _ := r.Get("result.stdout.text").(string); !strings.Contains(text, "hello from windows") {
		t.Fatalf("cmd.exe /c echo: %s", r.Raw)
	}
	file := winPath(filepath.Join(root, "note.txt"))
	// A call that outlives the inline budget (100 ms; a first write
	// under Wine on a busy machine can) answers pending and arrives in
	// the mailbox: both answers are the product working.
	r = c.Final("fs", map[string]any{"operation": "write", "path": file, "data": "written through Wine\r\n", "expected_sha256": nil})
	if r.State() != "completed" {
		t.Fatalf("fs.write: %s", r.Raw)
	}
	r = c.Final("fs", map[string]any{"operation": "read", "path": file})
	if r.Get("result.data") != "written through Wine\r\n" {
		t.Fatalf("fs.read: %s", r.Raw)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "note.txt")); string(b) != "written through Wine\r\n" {
		t.Fatalf("file on disk: %q", b)
	}
}
