// Command faketunnel is a fake tunnel-client for the tunnel package's
// tests. It mimics the CLI surface Hearth uses (init, doctor, run with
// --health.url-file) and never prints CONTROL_PLANE_API_KEY's value,
// only whether it is set, unless FAKE_TUNNEL_LEAK_KEY asks it to
// misbehave so that redaction can be tested.
//
// Behaviour is chosen through the environment:
//
//	FAKE_TUNNEL_CRASH_AFTER=<duration>  run: exit 3 after that long
//	FAKE_TUNNEL_HANG_ON_STOP=1          run: ignore SIGTERM/CTRL_BREAK
//	FAKE_TUNNEL_UNHEALTHY=1             run: /readyz answers 503
//	FAKE_TUNNEL_LEAK_KEY=1              print the key (a misbehaving client)
//	FAKE_TUNNEL_STARTS=<file>           run: append "start <pid> tunnel_id=<id>
//	                                    mcp_server_url=<url>" per start (the
//	                                    profile's values, "-" without one)
//	FAKE_TUNNEL_CHILD_PID=<file>        run: start a grandchild, write its pid
//	FAKE_TUNNEL_SPAM=<n>                run: print n lines of 100 bytes
//	FAKE_TUNNEL_EXIT_ON_EOF=1           run: exit when stdin reaches EOF
//	FAKE_TUNNEL_HANG=1                  init/doctor: never finish
//	FAKE_TUNNEL_PROFILE_DIR=<dir>       init: where profiles are written
//	                                    (default: the working directory;
//	                                    run reads its profile there)
//	FAKE_TUNNEL_NO_FORCE=1              init: no --force flag, as an old
//	                                    tunnel-client
//	FAKE_TUNNEL_REFUSE_KEY=1            run: the FAKE control plane refuses
//	                                    the key: every poll logs a 401 as
//	                                    the real client does, and the poll
//	                                    gauge on /metrics never moves
//	FAKE_TUNNEL_REFUSE_KEYS=<file>      run: as FAKE_TUNNEL_REFUSE_KEY when
//	                                    the key is one of the file's lines
//	                                    (read at start)
//	FAKE_TUNNEL_POLL_FAIL=1             run: polls fail otherwise (OpenAI
//	                                    unreachable: a 503, no 401)
//	FAKE_TUNNEL_FORWARD_CALL=1          run: after the first successful
//	                                    poll, forward one MCP call
//	                                    (machine host_info) to the
//	                                    profile's MCP server URL with
//	                                    _meta["openai/session"], as
//	                                    ChatGPT's calls arrive through the
//	                                    tunnel
//	FAKE_TUNNEL_FORWARD_AFTER=<dur>     run: wait that long before forwarding
//
// Like the real tunnel-client, run serves /readyz, /healthz and a
// Prometheus /metrics on its health address, where
// commands_poll_last_successful_timestamp_seconds is the Unix time of the
// last successful control-plane poll (0 before the first). The control
// plane itself is FAKE here: polls are simulated every 100 ms.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const keyVar = "CONTROL_PLANE_API_KEY"

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: faketunnel init|doctor|run|sleep")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "init":
		err = initCmd(os.Args[2:])
	case "doctor":
		err = doctorCmd(os.Args[2:])
	case "run":
		err = runCmd(os.Args[2:])
	case "sleep":
		time.Sleep(time.Hour)
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func keyStatus() string {
	if os.Getenv(keyVar) != "" {
		return "key_set=true"
	}
	return "key_set=false"
}

func leak() {
	if os.Getenv("FAKE_TUNNEL_LEAK_KEY") == "1" {
		fmt.Fprintf(os.Stderr, "error: control plane refused key %s\n", os.Getenv(keyVar))
	}
}

func hang() {
	if os.Getenv("FAKE_TUNNEL_HANG") == "1" {
		time.Sleep(time.Hour)
	}
}

func initCmd(args []string) error {
	fs := flag.NewFlagSet("init", flag.ContinueOnError)
	sample := fs.String("sample", "", "")
	profile := fs.String("profile", "", "")
	tunnelID := fs.String("tunnel-id", "", "")
	mcpURL := fs.String("mcp-server-url", "", "")
	var force *bool
	if os.Getenv("FAKE_TUNNEL_NO_FORCE") != "1" {
		force = fs.Bool("force", false, "")
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	hang()
	leak()
	if *tunnelID == "" || *profile == "" || *mcpURL == "" || *sample == "" {
		return fmt.Errorf("init needs --sample, --profile, --tunnel-id and --mcp-server-url")
	}
	dir := os.Getenv("FAKE_TUNNEL_PROFILE_DIR")
	if dir == "" {
		dir = "."
	}
	path := filepath.Join(dir, *profile+".yaml")
	if _, err := os.Stat(path); err == nil && (force == nil || !*force) {
		return fmt.Errorf("profile %s already exists (use --force)", *profile)
	}
	body := fmt.Sprintf("sample: %s\ntunnel_id: %s\nmcp_server_url: %s\n", *sample, *tunnelID, *mcpURL)
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		return err
	}
	fmt.Printf("Created profile %s (%s)\n", *profile, keyStatus())
	return nil
}

func doctorCmd(args []string) error {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	profile := fs.String("profile", "", "")
	explain := fs.Bool("explain", false, "")
	if err := fs.Parse(args); err != nil {
		return err
	}
	hang()
	leak()
	fmt.Printf("doctor: profile %s explain=%v %s\n", *profile, *explain, keyStatus())
	if os.Getenv(keyVar) == "" {
		return fmt.Errorf("%s is not set", keyVar)
	}
	return nil
}

func runCmd(args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	profile := fs.String("profile", "", "")
	listen := fs.String("health.listen-addr", "127.0.0.1:8080", "")
	urlFile := fs.String("health.url-file", "", "")
	if err := fs.Parse(args); err != nil {
		return err
	}
	fmt.Printf("fake tunnel: run profile=%s pid=%d %s argv=%q\n", *profile, os.Getpid(), keyStatus(), os.Args)
	if f := os.Getenv("FAKE_TUNNEL_STARTS"); f != "" {
		id, url := "-", "-"
		if v, err := profileValue(*profile, "tunnel_id"); err == nil {
			id = v
		}
		if v, err := profileValue(*profile, "mcp_server_url"); err == nil {
			url = v
		}
		if err := appendLine(f, fmt.Sprintf("start %d tunnel_id=%s mcp_server_url=%s", os.Getpid(), id, url)); err != nil {
			return err
		}
	}
	if f := os.Getenv("FAKE_TUNNEL_CHILD_PID"); f != "" {
		child := exec.Command(os.Args[0], "sleep")
		if err := child.Start(); err != nil {
			return err
		}
		if err := os.WriteFile(f, []byte(strconv.Itoa(child.Process.Pid)), 0o600); err != nil {
			return err
		}
	}
	if n, _ := strconv.Atoi(os.Getenv("FAKE_TUNNEL_SPAM")); n > 0 {
		line := strings.Repeat("x", 90)
		for i := range n {
			fmt.Printf("spam %06d %s\n", i, line)
		}
	}
	leak()

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	unhealthy := os.Getenv("FAKE_TUNNEL_UNHEALTHY") == "1"
	// lastPoll is the Unix time (ns) of the last successful poll.
	var lastPoll atomic.Int64
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/readyz" && unhealthy:
			http.Error(w, "not ready: control plane unreachable", http.StatusServiceUnavailable)
		case r.URL.Path == "/readyz" || r.URL.Path == "/healthz":
			fmt.Fprintln(w, "ok")
		case r.URL.Path == "/metrics":
			w.Header().Set("Content-Type", "text/plain; version=0.0.4")
			fmt.Fprintln(w, "# HELP commands_poll_last_successful_timestamp_seconds Unix time of the last successful control-plane poll.")
			fmt.Fprintln(w, "# TYPE commands_poll_last_successful_timestamp_seconds gauge")
			// Labelled and in scientific notation, as tunnel-client
			// v0.0.14 writes it (0 before the first success).
			fmt.Fprintf(w, "commands_poll_last_successful_timestamp_seconds{otel_scope_name=\"controlplane\"} %.9e\n", float64(lastPoll.Load()/1e9))
		default:
			http.NotFound(w, r)
		}
	}))
	go poll(&lastPoll, *profile)
	if *urlFile != "" {
		tmp := *urlFile + ".tmp"
		if err := os.WriteFile(tmp, []byte("http://"+ln.Addr().String()+"\n"), 0o600); err != nil {
			return err
		}
		if err := os.Rename(tmp, *urlFile); err != nil {
			return err
		}
	}

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	eof := make(chan struct{})
	if os.Getenv("FAKE_TUNNEL_EXIT_ON_EOF") == "1" {
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			close(eof)
		}()
	}
	var crash <-chan time.Time
	if d, err := time.ParseDuration(os.Getenv("FAKE_TUNNEL_CRASH_AFTER")); err == nil {
		crash = time.After(d)
	}
	for {
		select {
		case <-stop:
			if os.Getenv("FAKE_TUNNEL_HANG_ON_STOP") == "1" {
				fmt.Println("fake tunnel: ignoring the stop signal")
				continue
			}
			fmt.Println("fake tunnel: graceful stop")
			if *urlFile != "" {
				os.Remove(*urlFile)
			}
			return nil
		case <-eof:
			fmt.Println("fake tunnel: stdin closed")
			return nil
		case <-crash:
			fmt.Fprintln(os.Stderr, `time=now level=ERROR msg="fake tunnel: control plane rejected the connection"`)
			os.Exit(3)
		}
	}
}

// poll simulates the control-plane polls of the real tunnel-client: each
// success moves the gauge; a refused key logs the 401 the real one logs,
// every time; after the first success, one MCP call is forwarded when
// FAKE_TUNNEL_FORWARD_CALL=1.
func poll(lastPoll *atomic.Int64, profile string) {
	refuse := os.Getenv("FAKE_TUNNEL_REFUSE_KEY") == "1" || refusedKey()
	failing := os.Getenv("FAKE_TUNNEL_POLL_FAIL") == "1"
	forward := os.Getenv("FAKE_TUNNEL_FORWARD_CALL") == "1"
	for {
		switch {
		case refuse || os.Getenv(keyVar) == "":
			// The real client's line (slog text) for a refused key.
			fmt.Fprintf(os.Stderr, "time=%s level=WARN msg=\"poll failed; backing off\" error=\"unexpected status 401 Unauthorized\" retry_in_ms=200 tunnel_service_request_id=missing_request_id status_code=401 status=\"401 Unauthorized\"\n", time.Now().UTC().Format(time.RFC3339))
		case failing:
			fmt.Fprintf(os.Stderr, "time=%s level=WARN msg=\"poll failed; backing off\" error=\"unexpected status 503 Service Unavailable\" retry_in_ms=200 tunnel_service_request_id=missing_request_id status_code=503 status=\"503 Service Unavailable\"\n", time.Now().UTC().Format(time.RFC3339))
		default:
			if lastPoll.Swap(time.Now().UnixNano()) == 0 && forward {
				go forwardCall(profile)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// forwardCall sends one MCP call to the profile's MCP server the way
// ChatGPT's calls come through the tunnel: with _meta["openai/session"].
func forwardCall(profile string) {
	if d, err := time.ParseDuration(os.Getenv("FAKE_TUNNEL_FORWARD_AFTER")); err == nil {
		time.Sleep(d)
	}
	url, err := profileMCPURL(profile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "time=now level=ERROR msg=\"forward call failed\" error=", strconv.Quote(err.Error()))
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "fake-chatgpt", Version: "1"}, nil)
	sess, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		fmt.Fprintf(os.Stderr, "time=now level=ERROR msg=\"forward call failed\" error=%q\n", err.Error())
		return
	}
	defer sess.Close()
	res, err := sess.CallTool(ctx, &mcp.CallToolParams{
		Name:      "machine",
		Arguments: map[string]any{"operation": "host_info"},
		Meta:      mcp.Meta{"openai/session": fmt.Sprintf("fake-chatgpt-session-%d", os.Getpid())},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "time=now level=ERROR msg=\"forward call failed\" error=%q\n", err.Error())
		return
	}
	fmt.Printf("fake tunnel: forwarded one call (is_error=%v)\n", res.IsError)
}

// refusedKey reports whether the key is listed in FAKE_TUNNEL_REFUSE_KEYS.
func refusedKey() bool {
	f := os.Getenv("FAKE_TUNNEL_REFUSE_KEYS")
	if f == "" {
		return false
	}
	b, err := os.ReadFile(f)
	if err != nil {
		return false
	}
	key := os.Getenv(keyVar)
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && l == key {
			return true
		}
	}
	return false
}

// profileMCPURL reads mcp_server_url from the profile init wrote.
func profileMCPURL(profile string) (string, error) { return profileValue(profile, "mcp_server_url") }

// profileValue reads one field from the profile init wrote.
func profileValue(profile, field string) (string, error) {
	dir := os.Getenv("FAKE_TUNNEL_PROFILE_DIR")
	if dir == "" {
		dir = "."
	}
	f, err := os.Open(filepath.Join(dir, profile+".yaml"))
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+": "); ok {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("profile %s has no %s", profile, field)
}

func appendLine(path, line string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = fmt.Fprintln(f, line)
	return err
}
