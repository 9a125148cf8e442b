package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/instance"
)

// connectorRows are the ways a client connects to Hearth's endpoint.
type connectorRows struct {
	URL          string   `json:"url"`
	Running      bool     `json:"running"`
	TunnelClient []string `json:"tunnel_client"`
	ClaudeCode   []string `json:"claude_code"`
	// ClaudeDesktop is a claude_desktop_config.json entry; Claude Desktop
	// starts stdio servers, so the mcp-remote bridge carries HTTP.
	ClaudeDesktop map[string]any `json:"claude_desktop"`
	VSCode        map[string]any `json:"vscode"`
	Generic       map[string]any `json:"generic"`
	Note          string         `json:"note"`
}

func rowsFor(url string, running bool) connectorRows {
	return connectorRows{
		URL:     url,
		Running: running,
		TunnelClient: []string{
			"tunnel-client init --sample sample_mcp_remote_no_auth --profile hearth-local --tunnel-id <YOUR_TUNNEL_ID> --mcp-server-url " + url,
			"tunnel-client doctor --profile hearth-local --explain",
			"tunnel-client run --profile hearth-local",
		},
		ClaudeCode: []string{"claude mcp add --transport http hearth " + url},
		ClaudeDesktop: map[string]any{"mcpServers": map[string]any{"hearth": map[string]any{
			"command": "npx", "args": []string{"-y", "mcp-remote", url}}}},
		VSCode:  map[string]any{"servers": map[string]any{"hearth": map[string]any{"type": "http", "url": url}}},
		Generic: map[string]any{"url": url},
		Note: "The tunnel runtime key is never part of these rows: tunnel-client reads it from CONTROL_PLANE_API_KEY, " +
			"which Hearth's Setup page stores in Credential Manager. Local clients should send _meta[\"hearth/conversation\"] to receive later arrivals.",
	}
}

// mcpConfigCmd prints connector rows for MCP clients, using the running
// instance's real address when there is one, else the configured address.
func mcpConfigCmd(args []string, stdout, stderr io.Writer) error {
	fset := flag.NewFlagSet("mcp-config", flag.ContinueOnError)
	fset.SetOutput(stderr)
	asJSON := fset.Bool("json", false, "print one JSON object")
	if err := fset.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	dataDir, err := config.DataDir()
	if err != nil {
		return err
	}
	url, running := "", false
	if info, err := instance.ReadInfo(dataDir); err == nil && info.MCPURL != "" {
		url, running = info.MCPURL, true
	} else {
		cfg, err := readConfig(dataDir)
		if err != nil {
			return err
		}
		url = "http://" + cfg.MCPAddr + "/mcp"
	}
	rows := rowsFor(url, running)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	state := "configured (Hearth is not running)"
	if running {
		state = "running"
	}
	fmt.Fprintf(stdout, "Hearth MCP endpoint: %s (%s)\n\n", url, state)
	fmt.Fprintln(stdout, "OpenAI Secure MCP Tunnel (tunnel-client):")
	for _, l := range rows.TunnelClient {
		fmt.Fprintln(stdout, "  "+l)
	}
	fmt.Fprintf(stdout, "\nClaude Code:\n  %s\n", rows.ClaudeCode[0])
	cd, _ := json.Marshal(rows.ClaudeDesktop)
	fmt.Fprintf(stdout, "\nClaude Desktop (claude_desktop_config.json):\n  %s\n", cd)
	vs, _ := json.Marshal(rows.VSCode)
	gen, _ := json.Marshal(rows.Generic)
	fmt.Fprintf(stdout, "\nVS Code (.vscode/mcp.json):\n  %s\n\nAny streamable-HTTP client:\n  %s\n\n%s\n", vs, gen, rows.Note)
	return nil
}

// readConfig reads the config without creating it (mcp-config never
// writes), falling back to the defaults when there is none yet.
func readConfig(dataDir string) (config.Config, error) {
	path := config.Path(dataDir)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return config.Default(), nil
	}
	if err != nil {
		return config.Config{}, err
	}
	return config.Parse(path, b)
}
