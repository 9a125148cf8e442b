package config

import (
	"fmt"
	"strings"
)

// DefaultTunnelProfile is the tunnel-client profile Hearth creates and runs.
const DefaultTunnelProfile = "hearth-local"

// Tunnel configures the supervised tunnel-client (OpenAI's Secure MCP
// Tunnel, docs/DESIGN.md, "Tunnel, tray and recovery"). The runtime key is deliberately not here: it lives in
// the secrets store and nowhere else.
type Tunnel struct {
	// ClientPath is the tunnel-client executable. With ClientSHA256 it is
	// the pin Hearth runs and nothing else. Without it, it is only one of
	// the files the Setup page lists for the operator to pin (with the
	// tunnel-client beside hearth-tray and the one on PATH, each with its
	// SHA-256); Hearth never runs it, and pins by itself only the
	// tunnel-client beside hearth-tray, and only when ClientPath is "" or
	// names that same file.
	ClientPath string `json:"client_path"`
	// ClientSHA256 is the lowercase hex SHA-256 of ClientPath, recorded
	// when the operator pins tunnel-client on the Setup page. Hearth starts
	// ClientPath only while its content still has this hash; "" means
	// nothing is pinned and the tunnel is not set up.
	ClientSHA256 string `json:"client_sha256"`
	// TunnelID is the tunnel's ID from the OpenAI Platform (tunnel_…);
	// "" means the tunnel is not set up yet.
	TunnelID string `json:"tunnel_id"`
	// Profile is the tunnel-client profile to init and run.
	Profile string `json:"profile"`
	// Autostart starts the tunnel with Hearth.
	Autostart bool `json:"autostart"`
}

// Validate checks the tunnel settings; problems name their "tunnel.…" key.
// The tunnel ID and the profile become tunnel-client arguments, so neither
// may start with '-' (it would read as a flag) or hold anything but plain
// name characters.
func (t Tunnel) Validate() error {
	if t.ClientPath != "" && !isAbs(t.ClientPath) {
		return &Error{Key: "tunnel.client_path", Msg: fmt.Sprintf("%q is not an absolute path", t.ClientPath)}
	}
	if t.ClientSHA256 != "" {
		if !IsSHA256(t.ClientSHA256) {
			return &Error{Key: "tunnel.client_sha256", Msg: fmt.Sprintf("%q is not a SHA-256 (64 lowercase hexadecimal digits)", t.ClientSHA256)}
		}
		if t.ClientPath == "" {
			return &Error{Key: "tunnel.client_sha256", Msg: "is set but tunnel.client_path is empty (a pin needs both; pin tunnel-client on the Setup page)"}
		}
	}
	if t.TunnelID != "" {
		if rest, ok := strings.CutPrefix(t.TunnelID, "tunnel_"); !ok || !plainName(rest, 120) {
			return &Error{Key: "tunnel.tunnel_id", Msg: fmt.Sprintf("%q is not a tunnel ID (tunnel_ followed by letters and digits, as the OpenAI Platform shows it)", t.TunnelID)}
		}
	}
	if !plainName(t.Profile, 128) || t.Profile[0] == '-' || t.Profile[0] == '.' {
		return &Error{Key: "tunnel.profile", Msg: fmt.Sprintf("%q is not a profile name (1 to 128 letters, digits, '.', '_' or '-', not starting with '-' or '.')", t.Profile)}
	}
	return nil
}

// IsSHA256 reports whether s is a SHA-256 in lowercase hex (64 digits),
// the form tunnel.client_sha256 takes.
func IsSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// plainName reports whether s is 1 to max ASCII letters, digits, '.', '_'
// or '-'.
func plainName(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for _, c := range []byte(s) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			return false
		}
	}
	return true
}
