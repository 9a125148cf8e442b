package main

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// tinyExe builds testdata/tinyexe for windows/arch: a real Go PE file.
func tinyExe(t *testing.T, arch string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "hearth-tray-"+arch+".exe")
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, "./testdata/tinyexe")
	cmd.Env = append(os.Environ(), "GOOS=windows", "GOARCH="+arch, "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build tinyexe: %v\n%s", err, b)
	}
	return out
}

// fakePE is the smallest file peMachine reads as a Windows executable for
// machine: an MZ header pointing at a PE signature and file header. It
// stands in for tunnel-client.exe, which is OpenAI's and not here.
func fakePE(machine uint16) []byte {
	b := make([]byte, 0x80)
	copy(b, "MZ")
	binary.LittleEndian.PutUint32(b[0x3c:], 0x40)
	copy(b[0x40:], "PE\x00\x00")
	binary.LittleEndian.PutUint16(b[0x44:], machine)
	return b
}

// tunnelZip writes a fake tunnel-client release ZIP with members.
func tunnelZip(t *testing.T, dir, name string, members map[string][]byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range slices.Sorted(maps.Keys(members)) {
		w, err := zw.Create(n)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(members[n])
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func sumLine(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:]) + "  " + filepath.Base(file) + "\n"
}

func members(t *testing.T, zipPath string) map[string][]byte {
	t.Helper()
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	out := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		out[f.Name] = b
	}
	return out
}

func TestPackageWithTunnelClient(t *testing.T) {
	exe := tinyExe(t, "amd64")
	dir := t.TempDir()
	tcAmd := fakePE(0x8664)
	zAmd := tunnelZip(t, dir, "tunnel-client_windows_amd64.zip", map[string][]byte{
		"tunnel-client_windows_amd64/tunnel-client.exe": tcAmd,
		"tunnel-client_windows_amd64/LICENSE":           []byte("Apache License\nVersion 2.0\n"),
		"tunnel-client_windows_amd64/README.md":         []byte("readme"),
	})
	zArm := tunnelZip(t, dir, "tunnel-client_windows_arm64.zip", map[string][]byte{
		"tunnel-client.exe": fakePE(0xaa64), "LICENSE": []byte("Apache License\n"),
	})
	sums := filepath.Join(dir, "SHA256SUMS.txt")
	os.WriteFile(sums, []byte(sumLine(t, zAmd)+sumLine(t, zArm)+"0000000000000000000000000000000000000000000000000000000000000000  other.tar.gz\n"), 0o644)
	out := t.TempDir()
	var stdout bytes.Buffer
	err := run([]string{"-exe", exe, "-arch", "amd64", "-version", "v1.2.3", "-out", out,
		"-tunnel-client-zip", zArm, "-tunnel-client-zip", zAmd, "-checksums", sums}, &stdout)
	if err != nil {
		t.Fatal(err)
	}
	zipPath := filepath.Join(out, "Hearth-v1.2.3-windows-amd64.zip")
	if !strings.Contains(stdout.String(), zipPath) || !strings.Contains(stdout.String(), "with tunnel-client from tunnel-client_windows_amd64.zip") {
		t.Fatalf("output: %s", stdout.String())
	}
	m := members(t, zipPath)
	var names []string
	for n := range m {
		names = append(names, n)
	}
	slices.Sort(names)
	want := []string{"Start here.txt", "THIRD-PARTY-NOTICES.txt", "hearth-tray.exe", "tunnel-client-LICENSE.txt", "tunnel-client.exe"}
	if fmt.Sprint(names) != fmt.Sprint(want) {
		t.Fatalf("members = %v, want %v", names, want)
	}
	if !bytes.Equal(m["tunnel-client.exe"], tcAmd) {
		t.Fatal("tunnel-client.exe is not the amd64 one from its ZIP")
	}
	exeBytes, _ := os.ReadFile(exe)
	if !bytes.Equal(m["hearth-tray.exe"], exeBytes) {
		t.Fatal("hearth-tray.exe is not the built one")
	}
	if got := string(m["tunnel-client-LICENSE.txt"]); got != "Apache License\r\nVersion 2.0\r\n" {
		t.Fatalf("tunnel-client licence = %q", got)
	}
	start := string(m["Start here.txt"])
	for _, w := range []string{"Double-click hearth-tray.exe", "Extract All", "tunnel-client.exe", "\r\n"} {
		if !strings.Contains(start, w) {
			t.Errorf("Start here lacks %q", w)
		}
	}
	if strings.Contains(strings.ReplaceAll(start, "\r\n", ""), "\n") {
		t.Error("Start here has a bare LF line end")
	}
	notes := string(m["THIRD-PARTY-NOTICES.txt"])
	if !strings.Contains(notes, "==== The Go programming language") || !strings.Contains(notes, "tunnel-client-*.txt") {
		t.Errorf("notices:\n%.400s", notes)
	}
}

func TestPackageWithoutTunnelClient(t *testing.T) {
	exe := tinyExe(t, "arm64")
	out := t.TempDir()
	if err := run([]string{"-exe", exe, "-arch", "arm64", "-version", "dev", "-out", out}, io.Discard); err != nil {
		t.Fatal(err)
	}
	m := members(t, filepath.Join(out, "Hearth-dev-windows-arm64.zip"))
	if len(m) != 3 || m["hearth-tray.exe"] == nil || m["Start here.txt"] == nil || m["THIRD-PARTY-NOTICES.txt"] == nil {
		t.Fatalf("members without tunnel-client: %d", len(m))
	}
	if strings.Contains(string(m["Start here.txt"]), "tunnel-client.exe") {
		t.Error("Start here names a tunnel-client.exe the package lacks")
	}
	// The exe must be for the package's architecture.
	if err := run([]string{"-exe", exe, "-arch", "amd64", "-version", "dev", "-out", out}, io.Discard); err == nil || !strings.Contains(err.Error(), "not amd64") {
		t.Fatalf("an arm64 exe packaged as amd64: %v", err)
	}
}

func TestTunnelClientRefusals(t *testing.T) {
	exe := tinyExe(t, "amd64")
	dir := t.TempDir()
	good := map[string][]byte{"tunnel-client.exe": fakePE(0x8664), "LICENSE": []byte("terms")}
	z := tunnelZip(t, dir, "tc.zip", good)
	sums := func(body string) string {
		p := filepath.Join(t.TempDir(), "SHA256SUMS.txt")
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	wrong := strings.Repeat("ab", 32) + "  tc.zip\n"
	noLicence := tunnelZip(t, dir, "nolicence.zip", map[string][]byte{"tunnel-client.exe": fakePE(0x8664)})
	noExe := tunnelZip(t, dir, "noexe.zip", map[string][]byte{"LICENSE": []byte("terms")})
	armOnly := tunnelZip(t, dir, "arm.zip", map[string][]byte{"tunnel-client.exe": fakePE(0xaa64), "LICENSE": []byte("terms")})
	notPE := tunnelZip(t, dir, "notpe.zip", map[string][]byte{"tunnel-client.exe": []byte("#!/bin/sh\n"), "LICENSE": []byte("terms")})
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"wrong checksum", []string{"-tunnel-client-zip", z, "-checksums", sums(wrong)}, "checksum mismatch"},
		{"no line", []string{"-tunnel-client-zip", z, "-checksums", sums(sumLine(t, noExe))}, "has no line for tc.zip"},
		{"bad line", []string{"-tunnel-client-zip", z, "-checksums", sums("nonsense\n")}, "line 1"},
		{"no licence", []string{"-tunnel-client-zip", noLicence, "-checksums", sums(sumLine(t, noLicence))}, "no licence file"},
		{"no exe", []string{"-tunnel-client-zip", noExe, "-checksums", sums(sumLine(t, noExe))}, "no tunnel-client.exe"},
		{"other arch", []string{"-tunnel-client-zip", armOnly, "-checksums", sums(sumLine(t, armOnly))}, "for amd64"},
		{"not PE", []string{"-tunnel-client-zip", notPE, "-checksums", sums(sumLine(t, notPE))}, "not a Windows executable"},
		{"zip without checksums", []string{"-tunnel-client-zip", z}, "needs -checksums"},
		{"checksums without zip", []string{"-checksums", sums(sumLine(t, z))}, "without -tunnel-client-zip"},
		// Every ZIP given must verify, also one for another architecture.
		{"other zip mismatched", []string{"-tunnel-client-zip", z, "-tunnel-client-zip", armOnly, "-checksums", sums(sumLine(t, z) + strings.Repeat("cd", 32) + "  arm.zip\n")}, "checksum mismatch: " + armOnly},
	} {
		out := t.TempDir()
		err := run(append([]string{"-exe", exe, "-arch", "amd64", "-version", "v1", "-out", out}, tc.args...), io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
		if ents, _ := os.ReadDir(out); len(ents) != 0 {
			t.Errorf("%s: a refused build left %v", tc.name, ents)
		}
	}
	var vout bytes.Buffer
	if err := run([]string{"-verify-only", "-tunnel-client-zip", z, "-tunnel-client-zip", armOnly, "-checksums", sums(sumLine(t, z) + sumLine(t, armOnly))}, &vout); err != nil || strings.Count(vout.String(), "matches") != 2 {
		t.Fatalf("-verify-only of two good ZIPs: %v %s", err, vout.String())
	}
	if err := run([]string{"-verify-only", "-tunnel-client-zip", z, "-checksums", sums(wrong)}, io.Discard); err == nil || !strings.Contains(err.Error(), "checksum mismatch") {
		t.Fatalf("-verify-only of a wrong checksum: %v", err)
	}
	// The same ZIP with its true checksum builds (the refusals above are
	// about the checksum, not the ZIP).
	if err := run([]string{"-exe", exe, "-arch", "amd64", "-version", "v1", "-out", t.TempDir(), "-tunnel-client-zip", z, "-checksums", sums(sumLine(t, z))}, io.Discard); err != nil {
		t.Fatal(err)
	}
}

// TestPackageLinux: -os linux writes Hearth-V-linux-amd64.zip with an
// executable hearth-tray (a Linux program), README.txt and the notices;
// a Windows exe or another architecture is refused.
func TestPackageLinux(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("the test binary is the Linux amd64 program packaged")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := run([]string{"-os", "linux", "-exe", self, "-arch", "amd64", "-version", "1.4.0", "-out", out}, io.Discard); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(out, "Hearth-1.4.0-linux-amd64.zip")
	m := members(t, path)
	if len(m) != 3 || m["hearth-tray"] == nil || m["README.txt"] == nil || !strings.Contains(string(m["THIRD-PARTY-NOTICES.txt"]), "==== The Go programming language") {
		t.Fatalf("members: %d", len(m))
	}
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		if f.Name == "hearth-tray" && f.Mode().Perm() != 0o755 {
			t.Fatalf("hearth-tray mode %v", f.Mode())
		}
	}
	if err := run([]string{"-os", "linux", "-exe", tinyExe(t, "amd64"), "-arch", "amd64", "-version", "1.4.0", "-out", out}, io.Discard); err == nil || !strings.Contains(err.Error(), "not a Linux program") {
		t.Fatalf("a Windows exe packaged for Linux: %v", err)
	}
	if err := run([]string{"-os", "linux", "-exe", self, "-arch", "arm64", "-version", "1.4.0", "-out", out}, io.Discard); err == nil {
		t.Fatal("a Linux arm64 package was written")
	}
}
