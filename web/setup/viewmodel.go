package setup

import (
	"errors"
	"io/fs"
	"runtime"
	"strings"
	"time"

	"github.com/hearth-dev/hearth/internal/tunnel"
	"github.com/hearth-dev/hearth/web/session"
	"github.com/hearth-dev/hearth/web/status"
)

// Client is the pinned tunnel-client, the files the operator could pin,
// or how to put tunnel-client where Hearth finds it.
type Client struct {
	// Pinned is the pin (empty Path: nothing is pinned). Hearth runs this
	// file and no other.
	Pinned tunnel.Pin
	// Changed: the pinned file no longer has its SHA-256 (the page hashed
	// it again) or is gone (Gone). Now is its SHA-256 today when it could
	// be read.
	Changed, Gone bool
	Now           string
	// Unreadable: the pinned file could not be read just now (another
	// program holds it open); not a change, the tunnel tries again.
	Unreadable bool
	// Back: the tunnel is client_changed, but the pinned file is there
	// again with its pinned SHA-256 (the page hashed it). The page only
	// says so: "Check again" (a POST) lifts client_changed.
	Back bool
	// Candidates are the tunnel-client files found (tunnel.Candidates),
	// each with its SHA-256 and a pin form.
	Candidates []tunnel.Candidate
	// Checked is the file whose path the operator typed, hashed, shown
	// once after "Show its SHA-256".
	Checked *tunnel.Candidate
	// Configured is tunnel.client_path ("" when unset).
	Configured string
	// Name and HearthName are the program names on this OS.
	Name, HearthName string
}

// IsPin reports whether cand is the pinned file as pinned.
func (c Client) IsPin(cand tunnel.Candidate) bool {
	return c.Pinned.Path != "" && cand.Path == c.Pinned.Path && cand.SHA256 == c.Pinned.SHA256
}

// Logon is whether Hearth starts when the user logs on.
type Logon struct {
	// Available is false where Hearth cannot manage that (no install).
	Available bool
	On        bool
	// Unknown: the state could not be read.
	Unknown bool
}

// Result is the outcome of a tunnel-client setup command, output
// redacted by the supervisor.
type Result struct {
	// Command is "init" or "doctor".
	Command string
	tunnel.CommandResult
}

// View is what the page shows.
type View struct {
	Status tunnel.Status
	// Ports are the listeners moved off a taken port: Setup says which
	// port and why, since the connection now points there.
	Ports []status.PortMove
	// Running: a supervision is active (a child runs or restarts soon).
	Running bool
	// KeyPresent and KeyHint ("…abcd") describe the stored key; KeyUnread
	// says the secrets store could not be read.
	KeyPresent bool
	KeyHint    string
	KeyUnread  bool
	// DevStore: the key is kept in the unencrypted development fallback
	// (every OS but Windows).
	DevStore  bool
	TunnelID  string
	Profile   string
	Autostart bool
	MCPURL    string
	Client    Client
	LogPath   string
	Logon     Logon
	// Result is the last setup command's, shown once after it ran.
	Result *Result
	// KeySaved is set once after the key was saved: the page offers to
	// clear the clipboard.
	KeySaved bool
	// Pinned: a connection program is trusted (its file is checked by
	// Client, on the full page).
	Pinned bool
	// PinGone: the pinned file is not there (a look at its path on every
	// load; Client, on the full page, hashes it).
	PinGone bool
	// BesideExe: nothing is pinned, but a tunnel-client lies beside
	// hearth-tray, which Connect trusts by itself.
	BesideExe bool
	// FirstCall is when ChatGPT's first call reached Hearth (zero: not
	// yet).
	FirstCall time.Time
	// ProgramDir is hearth-tray's folder, where the connection program
	// belongs.
	ProgramDir string
	// MovedFrom is the tunnel-client Hearth ran before this start, beside
	// an older copy of hearth-tray; it runs the one beside it now
	// (tunnel.PreferBesideExe). "": none.
	MovedFrom string
	// HeldBeside is the tunnel-client beside this hearth-tray that Hearth
	// did not switch to at start, since it lies in a folder the model can
	// write to (tunnel.Supervisor.HeldBeside); the program step offers it
	// to trust. "": none.
	HeldBeside string
	// Stamp is the tunnel-client files' fingerprint when the full page
	// was drawn (tunnel.FilesStamp): while the program step waits, the
	// page polls it and reloads when a file appears, goes or changes.
	Stamp string
	// Progress is Connect's outcome, shown once after it ran.
	Progress *progress
	// Flash is the page's one-shot message, shown in its card.
	Flash *session.Flash
}

// load reads what the page shows; client adds the tunnel-client section,
// which hashes the pinned file (the full page only, not every live
// refresh).
func (h *Handler) load(client bool) View {
	// The program is looked at first (client hashes it), then the
	// status: a pinned file back as it was shows as such (Client.Back)
	// while the status still says client_changed.
	var cl Client
	if client {
		cl = h.client()
	}
	cfg := h.Tunnel.Config()
	v := View{
		Status: h.Tunnel.Status(), Running: h.Tunnel.Running(),
		DevStore: runtime.GOOS != "windows",
		TunnelID: cfg.TunnelID, Profile: cfg.Profile, Autostart: cfg.Autostart,
		MCPURL: h.MCPURL(), LogPath: h.Tunnel.LogPath(),
		FirstCall: h.Tunnel.FirstChatGPTCall(), ProgramDir: h.Tunnel.ProgramFolder(),
	}
	if h.Ports != nil {
		v.Ports = h.Ports()
	}
	_, v.Pinned = h.Tunnel.Pinned()
	v.PinGone = pinGone(h.Tunnel)
	v.MovedFrom = h.Tunnel.PinMovedFrom()
	v.HeldBeside, _ = h.Tunnel.HeldBeside()
	v.BesideExe = !v.Pinned && h.Tunnel.HasBesideExe()
	if client {
		v.Client, v.Stamp = cl, h.Tunnel.FilesStamp()
	}
	present, err := h.Tunnel.KeyPresent()
	if err != nil {
		h.Kit.Log.Error("panel: read tunnel key presence", "err", err)
		v.KeyUnread = true
	}
	if present {
		v.KeyPresent, v.KeyHint = true, h.Tunnel.KeyHint()
	}
	// Only the full page shows it (under Details): a live refresh never
	// asks Task Scheduler, which starts schtasks.exe each time.
	if client && h.StartAtLogon != nil {
		on, err := h.StartAtLogon()
		if err != nil {
			h.Kit.Log.Error("panel: read start at logon", "err", err)
		}
		v.Logon = Logon{Available: true, On: on, Unknown: err != nil}
	}
	return v
}

// client describes the pinned tunnel-client, hashing it again, and the
// files the operator could pin, each hashed.
func (h *Handler) client() Client {
	c := Client{Configured: h.Tunnel.Config().ClientPath, Name: tunnel.ClientName(), HearthName: "hearth-tray"}
	if runtime.GOOS == "windows" {
		c.HearthName = "hearth-tray.exe"
	}
	if pin, ok := h.Tunnel.Pinned(); ok {
		c.Pinned = pin
		var changed *tunnel.ClientChangedError
		err := h.Tunnel.VerifyClient()
		switch {
		case errors.As(err, &changed):
			c.Changed, c.Now = true, changed.Got
			c.Gone = errors.Is(changed.Err, fs.ErrNotExist)
		case errors.Is(err, tunnel.ErrClientUnreadable):
			c.Unreadable = true
			h.Kit.Log.Warn("panel: hash the pinned tunnel-client", "err", err)
		case err != nil:
			h.Kit.Log.Error("panel: hash the pinned tunnel-client", "err", err)
		case h.Tunnel.Status().State == tunnel.StateClientChanged:
			// The file was gone (or unreadable) and is back with its
			// pinned SHA-256. A GET changes nothing: the page says so and
			// "Check again" lifts client_changed.
			c.Back = true
		}
	}
	c.Candidates = h.Tunnel.Candidates()
	for _, cand := range c.Candidates {
		if cand.Err != nil {
			h.Kit.Log.Warn("panel: hash a tunnel-client found", "path", cand.Path, "err", cand.Err)
		}
	}
	return c
}

// StateLabel is a tunnel state in words.
func StateLabel(s tunnel.State) string {
	switch s {
	case tunnel.StateNotConfigured:
		return "Not set up"
	case tunnel.StateStopped:
		return "Stopped"
	case tunnel.StateStarting:
		return "Starting"
	case tunnel.StateReady:
		return "Ready"
	case tunnel.StateUnhealthy:
		return "Running, not connected"
	case tunnel.StateBackoff:
		return "Exited; restarting soon"
	case tunnel.StateCrashLoop:
		return "Stopped after repeated crashes"
	case tunnel.StateClientChanged:
		return "Not run: tunnel-client changed since it was pinned"
	case tunnel.StateKeyRefused:
		return "OpenAI refused the tunnel key"
	}
	return string(s)
}

// commandLine is the command a result came from; its arguments never
// hold the key.
func commandLine(r Result) string {
	return strings.Join(append([]string{"tunnel-client"}, r.Args...), " ")
}

func took(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(100 * time.Millisecond).String()
}

func orNone(s string) string {
	if s == "" {
		return "(nothing)"
	}
	return s
}

// SourceLabel says where a tunnel-client was found, in words.
func SourceLabel(source string) string {
	switch source {
	case tunnel.SourceBesideExe:
		return "found beside hearth-tray"
	case tunnel.SourceConfigured:
		return "named by tunnel.client_path in config.json"
	case tunnel.SourcePath:
		return "found on PATH"
	case tunnel.SourceTyped:
		return "the path you gave"
	}
	return source
}
