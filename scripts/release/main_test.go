package main

import (
	"archive/zip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/update"
)

// fakeZip writes a release ZIP whose hearth-tray.exe is this test binary
// (a real Go program with build information) beside a tunnel-client.
func fakeZip(t *testing.T, path string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for name, b := range map[string][]byte{"hearth-tray.exe": exe, "tunnel-client.exe": []byte("tc")} {
		w, _ := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
		w.Write(b)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// TestFinishAndSign: finish writes the SBOM (with the modules linked in),
// the manifest signed with the key file, the winget manifest and
// SHA256SUMS over them all; the signed manifest opens with the verifier
// key keygen printed, and sign refuses a manifest that lacks a field.
func TestFinishAndSign(t *testing.T) {
	dist := t.TempDir()
	keyFile := filepath.Join(t.TempDir(), "release.key")
	var out strings.Builder
	if err := run([]string{"keygen", "-name", "hearth-release-test", "-out", keyFile}, &out); err != nil {
		t.Fatal(err)
	}
	vkey := strings.TrimSpace(out.String())
	if fi, err := os.Stat(keyFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", fi, err)
	}
	fakeZip(t, filepath.Join(dist, "Hearth-1.4.0-windows-amd64.zip"))
	if err := run([]string{"finish", "-dist", dist, "-version", "1.4.0", "-base-url", "https://example.org/r/", "-key", keyFile, "-changes", "Faster."}, &out); err != nil {
		t.Fatal(err)
	}
	msg, err := os.ReadFile(filepath.Join(dist, "hearth-manifest.signed"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := update.OpenManifest(msg, vkey)
	if err != nil {
		t.Fatal(err)
	}
	a := m.Platforms["windows-amd64"]
	if m.Version != "1.4.0" || m.MinVersion != "1.0.0" || a.URL != "https://example.org/r/Hearth-1.4.0-windows-amd64.zip" || a.TunnelClient == nil {
		t.Fatalf("manifest: %+v", m)
	}
	var sbom struct {
		SPDXVersion string `json:"spdxVersion"`
		Packages    []struct{ Name string }
	}
	b, _ := os.ReadFile(filepath.Join(dist, "Hearth-1.4.0-windows-amd64.spdx.json"))
	if err := json.Unmarshal(b, &sbom); err != nil || sbom.SPDXVersion != "SPDX-2.3" {
		t.Fatalf("SBOM: %v %s", err, b)
	}
	found := false
	for _, p := range sbom.Packages {
		found = found || p.Name == "golang.org/x/mod"
	}
	if !found {
		t.Fatalf("the SBOM lacks golang.org/x/mod, which this binary links: %s", b)
	}
	inst, _ := os.ReadFile(filepath.Join(dist, "winget", "Hearth.Hearth.installer.yaml"))
	for _, want := range []string{"PackageIdentifier: Hearth.Hearth", "InstallerType: zip", "NestedInstallerType: portable", "RelativeFilePath: hearth-tray.exe", "Scope: user", "InstallerSha256: " + strings.ToUpper(a.SHA256)} {
		if !strings.Contains(string(inst), want) {
			t.Errorf("winget installer manifest lacks %q:\n%s", want, inst)
		}
	}
	sums, _ := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	for _, f := range []string{"Hearth-1.4.0-windows-amd64.zip", "Hearth-1.4.0-windows-amd64.spdx.json", "hearth-manifest.signed", "winget/Hearth.Hearth.installer.yaml"} {
		if !strings.Contains(string(sums), "  "+f+"\n") {
			t.Errorf("SHA256SUMS lacks %s", f)
		}
	}
	if !strings.Contains(string(sums), a.SHA256+"  Hearth-1.4.0-windows-amd64.zip") {
		t.Error("SHA256SUMS' ZIP line is not the manifest's hash")
	}

	bad := filepath.Join(t.TempDir(), "m.json")
	os.WriteFile(bad, []byte(`{"version":"1.4.0","changes":"x","platforms":{}}`), 0o644)
	err = run([]string{"sign", "-key", keyFile, "-in", bad, "-out", bad + ".signed"}, &out)
	if err == nil || !strings.Contains(err.Error(), "min_version") {
		t.Fatalf("a manifest without min_version signed: %v", err)
	}
	if _, err := os.Stat(bad + ".signed"); err == nil {
		t.Fatal("a signed file was written")
	}
}

// TestSignSetsPublishedAndRefusesWhatHearthRefuses: sign stamps the
// manifest with the time it signs it (UTC), so a re-signed manifest is not
// taken for a replay, and refuses a signed text every Hearth would refuse
// (over 64 KiB).
func TestSignSetsPublishedAndRefusesWhatHearthRefuses(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "release.key")
	var out strings.Builder
	if err := run([]string{"keygen", "-out", keyFile}, &out); err != nil {
		t.Fatal(err)
	}
	vkey := strings.TrimSpace(out.String())
	sum := strings.Repeat("ab", 32)
	in := filepath.Join(dir, "m.json")
	text := `{"version":"1.4.0","min_version":"1.0.0","changes":"x","published":"2020-01-01T00:00:00Z","platforms":{"linux-amd64":{"url":"https://example.org/h.zip","size":1,"sha256":"` + sum + `"}}}`
	os.WriteFile(in, []byte(text), 0o644)
	before := time.Now().UTC().Add(-time.Second)
	if err := run([]string{"sign", "-key", keyFile, "-in", in, "-out", in + ".signed"}, &out); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(in + ".signed")
	m, err := update.OpenManifest(b, vkey)
	if err != nil || m.Published.Before(before) {
		t.Fatalf("published %s (%v), want the signing time", m.Published, err)
	}
	big := strings.Replace(text, `"changes":"x"`, `"changes":"`+strings.Repeat("x", update.MaxManifestBytes)+`"`, 1)
	os.WriteFile(in, []byte(big), 0o644)
	if err := run([]string{"sign", "-key", keyFile, "-in", in, "-out", in + ".big"}, &out); err == nil || !strings.Contains(err.Error(), "65536") {
		t.Fatalf("an oversized manifest signed: %v", err)
	}
	if _, err := os.Stat(in + ".big"); err == nil {
		t.Fatal("a signed file was written")
	}
}

// TestFinishNamesTheLinuxPackage: a Hearth-V-linux-amd64.zip beside the
// Windows ones is in the manifest as linux-amd64 (for hearth-tray serve),
// with an SBOM, and not in the winget manifest.
func TestFinishNamesTheLinuxPackage(t *testing.T) {
	dist := t.TempDir()
	fakeZip(t, filepath.Join(dist, "Hearth-1.4.0-windows-amd64.zip"))
	self, _ := os.Executable()
	exe, _ := os.ReadFile(self)
	f, _ := os.Create(filepath.Join(dist, "Hearth-1.4.0-linux-amd64.zip"))
	zw := zip.NewWriter(f)
	w, _ := zw.CreateHeader(&zip.FileHeader{Name: "hearth-tray", Method: zip.Store})
	w.Write(exe)
	zw.Close()
	f.Close()
	var out strings.Builder
	if err := run([]string{"finish", "-dist", dist, "-version", "1.4.0", "-base-url", "https://example.org/r"}, &out); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dist, "hearth-manifest.json"))
	var m update.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if a := m.Platforms["linux-amd64"]; a.URL != "https://example.org/r/Hearth-1.4.0-linux-amd64.zip" || m.Published.IsZero() {
		t.Fatalf("manifest: %s", b)
	}
	if _, err := os.Stat(filepath.Join(dist, "Hearth-1.4.0-linux-amd64.spdx.json")); err != nil {
		t.Fatal(err)
	}
	wg, _ := os.ReadFile(filepath.Join(dist, "winget", "Hearth.Hearth.installer.yaml"))
	if strings.Contains(string(wg), "linux") {
		t.Fatalf("winget names the Linux package:\n%s", wg)
	}
}
