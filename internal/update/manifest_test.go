package update

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"
)

func testKey(t *testing.T) (skey, vkey string) {
	t.Helper()
	skey, vkey, err := GenerateKey("hearth-release-test")
	if err != nil {
		t.Fatal(err)
	}
	return skey, vkey
}

func sampleManifest() Manifest {
	sum := strings.Repeat("ab", 32)
	return Manifest{
		Version: "1.4.0", MinVersion: "1.0.0", Changes: "Faster backups.", Published: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC),
		Platforms: map[string]Artifact{
			Platform():      {URL: "https://example.org/h.zip", Size: 10, SHA256: sum, TunnelClient: &TunnelClient{Version: "0.3.1", SHA256: sum}},
			"windows-arm64": {URL: "https://example.org/a.zip", Size: 10, SHA256: sum},
		},
	}
}

// TestManifestSignAndOpen: a manifest signed with the release key opens
// with its verifier key; one signed with another key, or changed after
// signing, is refused as not signed by the release key.
func TestManifestSignAndOpen(t *testing.T) {
	skey, vkey := testKey(t)
	msg, err := SignManifest(sampleManifest(), skey)
	if err != nil {
		t.Fatal(err)
	}
	m, err := OpenManifest(msg, vkey)
	if err != nil || m.Version != "1.4.0" || m.Platforms[Platform()].TunnelClient.Version != "0.3.1" {
		t.Fatalf("open: %+v, %v", m, err)
	}

	other, _ := testKey(t)
	msg2, err := SignManifest(sampleManifest(), other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenManifest(msg2, vkey); !errors.Is(err, ErrSignature) {
		t.Fatalf("another key's signature: %v", err)
	}
	tampered := []byte(strings.Replace(string(msg), "1.4.0", "1.4.1", 1))
	if _, err := OpenManifest(tampered, vkey); !errors.Is(err, ErrSignature) {
		t.Fatalf("tampered text: %v", err)
	}
	if _, err := OpenManifest([]byte("{}\n"), vkey); !errors.Is(err, ErrSignature) {
		t.Fatalf("unsigned: %v", err)
	}
}

// signText signs arbitrary text as a note, for manifests that are signed
// but wrong.
func signText(t *testing.T, text, skey string) []byte {
	t.Helper()
	s, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := note.Sign(&note.Note{Text: text}, s)
	if err != nil {
		t.Fatal(err)
	}
	return msg
}

// TestManifestFields: a signed manifest that is not JSON, or lacks or
// spoils a field, is refused with an error naming the field.
func TestManifestFields(t *testing.T) {
	skey, vkey := testKey(t)
	if _, err := OpenManifest(signText(t, "this is not json\n", skey), vkey); err == nil || !strings.Contains(err.Error(), "not JSON") {
		t.Fatalf("not JSON: %v", err)
	}
	sum := strings.Repeat("ab", 32)
	for _, tc := range []struct {
		field string
		edit  func(*Manifest)
	}{
		{"version", func(m *Manifest) { m.Version = "" }},
		{"version", func(m *Manifest) { m.Version = "latest" }},
		{"min_version", func(m *Manifest) { m.MinVersion = "" }},
		{"min_version", func(m *Manifest) { m.MinVersion = "2.0.0" }},
		{"changes", func(m *Manifest) { m.Changes = " " }},
		{"platforms", func(m *Manifest) { m.Platforms = nil }},
		{"platforms.plan9-amd64", func(m *Manifest) {
			m.Platforms["plan9-amd64"] = Artifact{URL: "https://x/y", Size: 1, SHA256: sum}
		}},
		{"platforms.windows-arm64.url", func(m *Manifest) { a := m.Platforms["windows-arm64"]; a.URL = ""; m.Platforms["windows-arm64"] = a }},
		{"platforms.windows-arm64.url", func(m *Manifest) {
			a := m.Platforms["windows-arm64"]
			a.URL = "file:///c/x.zip"
			m.Platforms["windows-arm64"] = a
		}},
		{"platforms.windows-arm64.size", func(m *Manifest) { a := m.Platforms["windows-arm64"]; a.Size = 0; m.Platforms["windows-arm64"] = a }},
		{"platforms.windows-arm64.size", func(m *Manifest) {
			a := m.Platforms["windows-arm64"]
			a.Size = MaxPackageBytes + 1
			m.Platforms["windows-arm64"] = a
		}},
		{"platforms.windows-arm64.sha256", func(m *Manifest) {
			a := m.Platforms["windows-arm64"]
			a.SHA256 = "AB"
			m.Platforms["windows-arm64"] = a
		}},
		{"platforms." + Platform() + ".tunnel_client.version", func(m *Manifest) { m.Platforms[Platform()].TunnelClient.Version = "" }},
		{"platforms." + Platform() + ".tunnel_client.sha256", func(m *Manifest) { m.Platforms[Platform()].TunnelClient.SHA256 = "" }},
	} {
		m := sampleManifest()
		tc.edit(&m)
		if _, err := SignManifest(m, skey); err == nil {
			t.Errorf("%s: SignManifest signed a bad manifest", tc.field)
		}
		// Signed anyway (as a careless release might be): refused on open.
		text, _ := jsonIndent(m)
		_, err := OpenManifest(signText(t, text, skey), vkey)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%s: %v", tc.field, err)
		}
	}
	// A field Hearth does not know (a later release's) is no refusal.
	text := `{"version":"1.4.0","min_version":"1.0.0","changes":"x","published":"2026-05-01T12:00:00Z","new_thing":1,"platforms":{"linux-amd64":{"url":"https://x/y","size":1,"sha256":"` + sum + `"}}}` + "\n"
	if _, err := OpenManifest(signText(t, text, skey), vkey); err != nil {
		t.Fatalf("unknown field: %v", err)
	}
}

// TestCompareVersions: v-prefixed and bare versions compare alike; a
// development build is older than any release.
func TestCompareVersions(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"1.4.0", "v1.4.0", 0}, {"1.3.9", "1.4.0", -1}, {"v1.10.0", "1.9.0", 1},
		{"dev", "0.0.1", -1}, {"1.0.0-rc.1", "1.0.0", -1},
	} {
		if got := Compare(tc.a, tc.b); got != tc.want {
			t.Errorf("Compare(%s, %s) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
	if ValidVersion("dev") || !ValidVersion("1.2.3") || !ValidVersion("v1.2") {
		t.Fatal("ValidVersion")
	}
}

func jsonIndent(m Manifest) (string, error) {
	b, err := json.MarshalIndent(m, "", "  ")
	return string(b) + "\n", err
}
