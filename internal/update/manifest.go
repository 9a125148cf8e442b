// Package update keeps Hearth and the tunnel-client beside it up to date:
// it reads the signed release manifest, downloads the package for this
// platform within bounds, verifies it, and hands over to the new program
// with a rollback if the new one does not become healthy.
//
// The manifest is a small JSON document signed in the
// golang.org/x/mod/sumdb/note format (Ed25519) with the release key, whose
// public half is built into Hearth; the private half never enters the
// repository (scripts/sign-release signs with a key file given to it).
// Nothing unsigned is ever installed: the package's size and SHA-256, and
// the tunnel-client's SHA-256, come from the signed text.
package update

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"runtime"
	"strings"
	"time"

	"golang.org/x/mod/semver"
	"golang.org/x/mod/sumdb/note"

	"github.com/hearth-dev/hearth/internal/config"
)

// MaxManifestBytes bounds the signed manifest Hearth reads.
const MaxManifestBytes = 64 << 10

// Platforms are the platforms a manifest may name.
var platforms = []string{"windows-amd64", "windows-arm64", "linux-amd64"}

// Platform is this program's platform as a manifest names it.
func Platform() string { return runtime.GOOS + "-" + runtime.GOARCH }

// Manifest is one release, as signed.
type Manifest struct {
	// Version is the release's version (1.4.0 or v1.4.0).
	Version string `json:"version"`
	// MinVersion is the oldest version that may update straight to this
	// one; an older Hearth must first install a release in between.
	MinVersion string `json:"min_version"`
	// Changes is what changed, in plain words, for the Status page.
	Changes string `json:"changes"`
	// Published is when the release was signed (UTC). A Hearth refuses a
	// manifest published before the last one it accepted (an older
	// signed manifest replayed to keep it on an old version), and says
	// so when the newest it could get is over StaleAfter old.
	Published time.Time `json:"published"`
	// Platforms holds the package of each platform, by Platform name.
	Platforms map[string]Artifact `json:"platforms"`
}

// Artifact is one platform's package: a ZIP holding hearth-tray (with
// .exe on Windows) and, when TunnelClient is set, tunnel-client.
type Artifact struct {
	URL    string `json:"url"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	// TunnelClient is the tunnel-client in the package; nil when the
	// package holds none.
	TunnelClient *TunnelClient `json:"tunnel_client,omitempty"`
}

// TunnelClient is the tunnel-client a package carries.
type TunnelClient struct {
	Version string `json:"version"`
	SHA256  string `json:"sha256"`
}

// FieldError is a manifest that lacks a field or has a bad one.
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return fmt.Sprintf("manifest field %q: %s", e.Field, e.Msg) }

// ErrSignature is a manifest whose signature does not verify with the
// release key (a bad signature, or another key's).
var ErrSignature = errors.New("the manifest is not signed by Hearth's release key")

// ParseManifest decodes and checks a manifest's JSON text; every missing
// or bad field is an error naming it. Unknown fields are ignored, so a
// later release may add some without stopping older Hearths from
// updating.
func ParseManifest(text []byte) (Manifest, error) {
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(text))
	if err := dec.Decode(&m); err != nil {
		return Manifest{}, fmt.Errorf("manifest is not JSON: %w", err)
	}
	if dec.More() {
		return Manifest{}, errors.New("manifest is not JSON: trailing data after the object")
	}
	return m, m.Check()
}

// Check validates every field.
func (m Manifest) Check() error {
	if !ValidVersion(m.Version) {
		return &FieldError{"version", fmt.Sprintf("%q is not a version such as 1.4.0", m.Version)}
	}
	if !ValidVersion(m.MinVersion) {
		return &FieldError{"min_version", fmt.Sprintf("%q is not a version such as 1.2.0", m.MinVersion)}
	}
	if Compare(m.MinVersion, m.Version) > 0 {
		return &FieldError{"min_version", "is newer than version"}
	}
	if strings.TrimSpace(m.Changes) == "" {
		return &FieldError{"changes", "missing"}
	}
	if m.Published.IsZero() {
		return &FieldError{"published", "missing (when the release was signed, in UTC, such as 2026-05-01T12:00:00Z)"}
	}
	if _, off := m.Published.Zone(); off != 0 {
		return &FieldError{"published", fmt.Sprintf("%s is not in UTC (end it with Z)", m.Published.Format(time.RFC3339))}
	}
	if len(m.Platforms) == 0 {
		return &FieldError{"platforms", "missing"}
	}
	for name, a := range m.Platforms {
		known := false
		for _, p := range platforms {
			known = known || p == name
		}
		field := "platforms." + name
		if !known {
			return &FieldError{field, "is not one of " + strings.Join(platforms, ", ")}
		}
		u, err := url.Parse(a.URL)
		if a.URL == "" || err != nil || u.Host == "" || (u.Scheme != "https" && !(u.Scheme == "http" && IsLoopback(u.Hostname()))) {
			return &FieldError{field + ".url", fmt.Sprintf("%q is not an https address (plain http only to this computer: 127.0.0.1, ::1 or localhost)", a.URL)}
		}
		if a.Size <= 0 || a.Size > MaxPackageBytes {
			return &FieldError{field + ".size", fmt.Sprintf("%d is not a size between 1 and %d bytes", a.Size, MaxPackageBytes)}
		}
		if !config.IsSHA256(a.SHA256) {
			return &FieldError{field + ".sha256", fmt.Sprintf("%q is not a SHA-256 (64 lowercase hexadecimal digits)", a.SHA256)}
		}
		if tc := a.TunnelClient; tc != nil {
			if strings.TrimSpace(tc.Version) == "" {
				return &FieldError{field + ".tunnel_client.version", "missing"}
			}
			if !config.IsSHA256(tc.SHA256) {
				return &FieldError{field + ".tunnel_client.sha256", fmt.Sprintf("%q is not a SHA-256 (64 lowercase hexadecimal digits)", tc.SHA256)}
			}
		}
	}
	return nil
}

// OpenManifest verifies the signed manifest msg with the release verifier
// key vkey and parses its text.
func OpenManifest(msg []byte, vkey string) (Manifest, error) {
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return Manifest{}, fmt.Errorf("the release key built into Hearth is not a note verifier key: %w", err)
	}
	n, err := note.Open(msg, note.VerifierList(v))
	if err != nil {
		return Manifest{}, fmt.Errorf("%w: %v", ErrSignature, err)
	}
	return ParseManifest([]byte(n.Text))
}

// SignManifest signs m with the note signer key skey ("PRIVATE+KEY+…"),
// after checking it: what scripts/sign-release and the tests publish. A
// zero Published is set to now; what every Hearth would refuse (a field,
// or a signed text over MaxManifestBytes) is refused here first.
func SignManifest(m Manifest, skey string) ([]byte, error) {
	if m.Published.IsZero() {
		m.Published = time.Now().UTC().Truncate(time.Second)
	}
	if err := m.Check(); err != nil {
		return nil, err
	}
	s, err := note.NewSigner(skey)
	if err != nil {
		return nil, fmt.Errorf("sign manifest: the key is not a note signer key: %w", err)
	}
	text, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("sign manifest: %w", err)
	}
	msg, err := note.Sign(&note.Note{Text: string(text) + "\n"}, s)
	if err != nil {
		return nil, fmt.Errorf("sign manifest: %w", err)
	}
	if len(msg) > MaxManifestBytes {
		return nil, fmt.Errorf("sign manifest: the signed manifest is %d bytes, over the %d every Hearth reads (shorten changes)", len(msg), MaxManifestBytes)
	}
	return msg, nil
}

// IsLoopback reports whether host (a name or an address, without port)
// is this computer: localhost or a loopback address.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// GenerateKey makes a release key pair named name: the signer key (kept
// by whoever signs releases, never in the repository) and the verifier
// key built into Hearth.
func GenerateKey(name string) (skey, vkey string, err error) {
	return note.GenerateKey(rand.Reader, name)
}

// ValidVersion reports whether v is a release version (semantic
// versioning, with or without a leading v).
func ValidVersion(v string) bool { return semver.IsValid(canonical(v)) }

// Compare orders two versions as semver does; a version that is not a
// release version (a development build, "dev") is older than every release.
func Compare(a, b string) int {
	return semver.Compare(canonical(a), canonical(b))
}

func canonical(v string) string {
	if v != "" && v[0] != 'v' {
		return "v" + v
	}
	return v
}

// Display is a version as the panel shows it: without the leading v.
func Display(v string) string { return strings.TrimPrefix(v, "v") }
