// Command pack-windows writes Hearth's Windows download,
// Hearth-<version>-windows-<arch>.zip, from a built hearth-tray.exe
// (scripts/package-windows builds it and calls this once per
// architecture):
//
//	hearth-tray.exe            Hearth
//	Start here.txt             what to do, for someone who has never used it
//	THIRD-PARTY-NOTICES.txt    licences of everything linked into hearth-tray.exe
//	tunnel-client.exe          OpenAI's tunnel-client, when given
//	tunnel-client-LICENSE.txt  its licence (each licence file of its ZIP)
//
// Everything is flat, so Windows' "Extract All" gives one folder with
// tunnel-client.exe beside hearth-tray.exe: the copy Hearth pins and
// trusts by itself (internal/tunnel, PinBesideExe).
//
// A tunnel-client release ZIP (-tunnel-client-zip, repeatable: one per
// architecture) is used only when its SHA-256 matches its line in the
// release's SHA256SUMS.txt (-checksums); a missing line or a mismatch
// fails. Nothing is downloaded. The ZIP whose tunnel-client.exe is built
// for -arch (its PE machine field) is the one packaged.
//
//	go run ./scripts/pack-windows -exe dist/hearth-tray.exe -arch amd64 \
//	    -version v1.2.3 -out dist [-tunnel-client-zip FILE... -checksums FILE]
//
// With -os linux (amd64 only; scripts/package-linux) it writes
// Hearth-<version>-linux-amd64.zip instead: hearth-tray (executable),
// README.txt and THIRD-PARTY-NOTICES.txt, the package the release
// manifest names for hearth-tray serve on Linux.
package main

import (
	"archive/zip"
	"bufio"
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/hearth-dev/hearth/internal/atomicfile"
	"github.com/hearth-dev/hearth/internal/notices"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "pack-windows:", err)
		os.Exit(1)
	}
}

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("pack-windows", flag.ContinueOnError)
	exe := fs.String("exe", "", "the built hearth-tray.exe for -arch")
	arch := fs.String("arch", "", "amd64 or arm64")
	goos := fs.String("os", "windows", "windows, or linux (amd64 only: the package hearth-tray serve updates itself from)")
	version := fs.String("version", "", "the version in the package's name")
	out := fs.String("out", "dist", "directory the ZIP is written to")
	var tunnelZips multi
	fs.Var(&tunnelZips, "tunnel-client-zip", "a tunnel-client release ZIP (repeatable)")
	sums := fs.String("checksums", "", "the release's SHA256SUMS.txt")
	verifyOnly := fs.Bool("verify-only", false, "only verify the tunnel-client ZIPs against the checksums (before a build)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *verifyOnly {
		if len(tunnelZips) == 0 || *sums == "" {
			return errors.New("-verify-only needs -tunnel-client-zip and -checksums")
		}
		return verifyAll(tunnelZips, *sums, stdout)
	}
	switch {
	case *exe == "":
		return errors.New("-exe is required")
	case *goos != "windows" && *goos != "linux":
		return fmt.Errorf("-os %q: want windows or linux", *goos)
	case *goos == "linux" && *arch != "amd64":
		return fmt.Errorf("-arch %q: the Linux package is amd64 only", *arch)
	case *goos == "linux" && len(tunnelZips) > 0:
		return errors.New("-tunnel-client-zip: the Linux package carries no tunnel-client")
	case *arch != "amd64" && *arch != "arm64":
		return fmt.Errorf("-arch %q: want amd64 or arm64", *arch)
	case *version == "" || strings.ContainsAny(*version, `/\ `):
		return fmt.Errorf("-version %q: want a version without spaces or slashes", *version)
	case len(tunnelZips) > 0 && *sums == "":
		return errors.New("-tunnel-client-zip needs -checksums (the release's SHA256SUMS.txt)")
	case len(tunnelZips) == 0 && *sums != "":
		return errors.New("-checksums without -tunnel-client-zip")
	}
	p := pack{exe: *exe, goos: *goos, arch: *arch, version: *version}
	if len(tunnelZips) > 0 {
		tc, err := pickTunnelClient(tunnelZips, *sums, *arch)
		if err != nil {
			return err
		}
		p.tunnel = tc
	}
	zipPath := filepath.Join(*out, "Hearth-"+*version+"-"+*goos+"-"+*arch+".zip")
	if err := p.write(zipPath); err != nil {
		return err
	}
	fi, err := os.Stat(zipPath)
	if err != nil {
		return err
	}
	with := "without tunnel-client"
	if p.tunnel != nil {
		with = "with tunnel-client from " + filepath.Base(p.tunnel.zip)
	}
	fmt.Fprintf(stdout, "pack-windows: %s (%d bytes, %.1f MB), %s\n", zipPath, fi.Size(), float64(fi.Size())/(1<<20), with)
	return nil
}

// checkELF refuses an exe that is not a Linux x86-64 program.
func checkELF(name string, b []byte) error {
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("%s: not a Linux program: %w", name, err)
	}
	if f.Machine != elf.EM_X86_64 {
		return fmt.Errorf("%s is built for %s, not amd64", name, f.Machine)
	}
	return nil
}

// linuxReadme is the Linux package's README.txt.
func linuxReadme(version string) string {
	return "Hearth " + version + " for Linux (amd64)\n\n" +
		"hearth-tray serve runs Hearth without a tray icon: it prints the MCP address and a\n" +
		"one-time sign-in link for the control panel. Hearth updates itself from this\n" +
		"package (the Status page's Update button, or update.auto in config.json).\n\n" +
		"THIRD-PARTY-NOTICES.txt holds the licences of the modules built into hearth-tray.\n"
}

// PE machine types (IMAGE_FILE_MACHINE_*).
var machines = map[string]uint16{"amd64": 0x8664, "arm64": 0xaa64}

// peMachine reads a Windows executable's machine type from its headers.
func peMachine(b []byte) (uint16, error) {
	if len(b) < 0x40 || b[0] != 'M' || b[1] != 'Z' {
		return 0, errors.New("not a Windows executable (no MZ header)")
	}
	off := int(binary.LittleEndian.Uint32(b[0x3c:]))
	if off < 0x40 || off+6 > len(b) || string(b[off:off+4]) != "PE\x00\x00" {
		return 0, errors.New("not a Windows executable (no PE header)")
	}
	return binary.LittleEndian.Uint16(b[off+4:]), nil
}

func checkMachine(name string, b []byte, arch string) error {
	m, err := peMachine(b)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if m != machines[arch] {
		return fmt.Errorf("%s is built for machine 0x%04x, not %s", name, m, arch)
	}
	return nil
}

// tunnelClient is what the package takes from a tunnel-client ZIP.
type tunnelClient struct {
	zip      string
	exe      []byte
	licences map[string][]byte // base name → text
}

// licenceName matches a licence file in the tunnel-client ZIP.
var licenceName = regexp.MustCompile(`(?i)^(licen[cs]e|copying|notice)([-._][a-z0-9._-]*)?$`)

// pickTunnelClient verifies every ZIP against the checksums, then returns
// the tunnel-client of the one built for arch. Every ZIP given must
// verify, even one for another architecture.
func pickTunnelClient(zips []string, sumsFile, arch string) (*tunnelClient, error) {
	sums, err := readChecksums(sumsFile)
	if err != nil {
		return nil, err
	}
	var found *tunnelClient
	for _, z := range zips {
		if err := verifyChecksum(z, sums, sumsFile); err != nil {
			return nil, err
		}
		tc, machine, err := readTunnelZip(z)
		if err != nil {
			return nil, err
		}
		if machine != machines[arch] {
			continue
		}
		if found != nil {
			return nil, fmt.Errorf("both %s and %s hold a tunnel-client for %s", found.zip, z, arch)
		}
		found = tc
	}
	if found == nil {
		return nil, fmt.Errorf("none of the tunnel-client ZIPs holds a tunnel-client.exe for %s", arch)
	}
	return found, nil
}

// verifyAll checks every ZIP's checksum and contents, whatever its
// architecture.
func verifyAll(zips []string, sumsFile string, stdout io.Writer) error {
	sums, err := readChecksums(sumsFile)
	if err != nil {
		return err
	}
	for _, z := range zips {
		if err := verifyChecksum(z, sums, sumsFile); err != nil {
			return err
		}
		if _, _, err := readTunnelZip(z); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "pack-windows: %s matches %s\n", filepath.Base(z), filepath.Base(sumsFile))
	}
	return nil
}

// readChecksums parses a SHA256SUMS.txt: "<64 hex>  <name>" lines (a '*'
// before the name marks binary mode, as sha256sum -b writes it).
func readChecksums(file string) (map[string]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("checksums: %w", err)
	}
	defer f.Close()
	sums := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		sum, name, ok := strings.Cut(line, " ")
		name = strings.TrimPrefix(strings.TrimSpace(name), "*")
		if _, err := hex.DecodeString(sum); !ok || err != nil || len(sum) != 64 || name == "" {
			return nil, fmt.Errorf("checksums %s line %d: want \"<sha256>  <file name>\"", file, n)
		}
		sums[path.Base(filepath.ToSlash(name))] = strings.ToLower(sum)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("checksums %s: %w", file, err)
	}
	return sums, nil
}

func verifyChecksum(file string, sums map[string]string, sumsFile string) error {
	want, ok := sums[filepath.Base(file)]
	if !ok {
		return fmt.Errorf("%s has no line for %s", sumsFile, filepath.Base(file))
	}
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("read %s: %w", file, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("checksum mismatch: %s has SHA-256 %s, but %s says %s", file, got, sumsFile, want)
	}
	return nil
}

// maxMember bounds what is read from the tunnel-client ZIP (a zip bomb
// stops here).
const maxMember = 256 << 20

// readTunnelZip takes tunnel-client.exe and the licence files out of a
// release ZIP: exactly one tunnel-client.exe (at any depth), at least one
// licence.
func readTunnelZip(file string) (*tunnelClient, uint16, error) {
	zr, err := zip.OpenReader(file)
	if err != nil {
		return nil, 0, fmt.Errorf("open %s: %w", file, err)
	}
	defer zr.Close()
	tc := &tunnelClient{zip: file, licences: map[string][]byte{}}
	for _, f := range zr.File {
		if f.FileInfo().IsDir() {
			continue
		}
		base := path.Base(f.Name)
		isExe := strings.EqualFold(base, "tunnel-client.exe")
		if !isExe && !licenceName.MatchString(base) {
			continue
		}
		b, err := readMember(f)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", file, err)
		}
		if isExe {
			if tc.exe != nil {
				return nil, 0, fmt.Errorf("%s holds more than one tunnel-client.exe", file)
			}
			tc.exe = b
			continue
		}
		if _, dup := tc.licences[base]; dup {
			return nil, 0, fmt.Errorf("%s holds more than one %s", file, base)
		}
		tc.licences[base] = b
	}
	if tc.exe == nil {
		return nil, 0, fmt.Errorf("%s holds no tunnel-client.exe", file)
	}
	if len(tc.licences) == 0 {
		return nil, 0, fmt.Errorf("%s holds no licence file (LICENSE…) for tunnel-client", file)
	}
	m, err := peMachine(tc.exe)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: tunnel-client.exe: %w", file, err)
	}
	return tc, m, nil
}

func readMember(f *zip.File) ([]byte, error) {
	if f.UncompressedSize64 > maxMember {
		return nil, fmt.Errorf("%s is larger than %d bytes", f.Name, maxMember)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxMember+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", f.Name, err)
	}
	if len(b) > maxMember {
		return nil, fmt.Errorf("%s is larger than %d bytes", f.Name, maxMember)
	}
	return b, nil
}

type pack struct {
	exe, goos, arch, version string
	tunnel                   *tunnelClient
}

// crlf turns a text's line ends into Windows ones (Notepad on older
// Windows shows LF-only text as one line).
func crlf(s string) []byte {
	return []byte(strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "\r\n"))
}

func (p pack) write(zipPath string) error {
	exe, err := os.ReadFile(p.exe)
	if err != nil {
		return err
	}
	type member struct {
		name string
		body []byte
	}
	var ms []member
	if p.goos == "linux" {
		if err := checkELF(p.exe, exe); err != nil {
			return err
		}
		notes, err := p.notices("hearth-tray")
		if err != nil {
			return err
		}
		ms = []member{{"hearth-tray", exe}, {"README.txt", []byte(linuxReadme(p.version))}, {"THIRD-PARTY-NOTICES.txt", []byte(notes)}}
	} else {
		if err := checkMachine(p.exe, exe, p.arch); err != nil {
			return err
		}
		notes, err := p.notices("hearth-tray.exe")
		if err != nil {
			return err
		}
		ms = []member{
			{"hearth-tray.exe", exe},
			{"Start here.txt", crlf(startHere(p.version, p.tunnel != nil))},
			{"THIRD-PARTY-NOTICES.txt", crlf(notes)},
		}
	}
	if p.tunnel != nil {
		ms = append(ms, member{"tunnel-client.exe", p.tunnel.exe})
		for _, name := range slices.Sorted(maps.Keys(p.tunnel.licences)) {
			out := "tunnel-client-" + strings.TrimSuffix(name, path.Ext(name)) + ".txt"
			ms = append(ms, member{out, crlf(string(p.tunnel.licences[name]))})
		}
	}
	if err := os.MkdirAll(filepath.Dir(zipPath), 0o755); err != nil {
		return err
	}
	// One time for every member, so that the same inputs give the same
	// bytes (SOURCE_DATE_EPOCH when set, else the exe's build time).
	when := modTime(p.exe)
	return atomicfile.WriteWith(zipPath, 0o644, func(f io.Writer) error {
		zw := zip.NewWriter(f)
		for _, m := range ms {
			h := &zip.FileHeader{Name: m.name, Method: zip.Deflate, Modified: when}
			if m.name == "hearth-tray" {
				h.SetMode(0o755)
			} else if p.goos == "linux" {
				h.SetMode(0o644)
			}
			w, err := zw.CreateHeader(h)
			if err != nil {
				return err
			}
			if _, err := w.Write(m.body); err != nil {
				return err
			}
		}
		return zw.Close()
	})
}

func modTime(exe string) time.Time {
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		var sec int64
		if _, err := fmt.Sscan(s, &sec); err == nil {
			return time.Unix(sec, 0).UTC()
		}
	}
	if fi, err := os.Stat(exe); err == nil {
		return fi.ModTime().UTC().Truncate(2 * time.Second)
	}
	return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
}

// notices generates THIRD-PARTY-NOTICES.txt from the exe's own build
// information (internal/notices).
func (p pack) notices(exeName string) (string, error) {
	goVersion, mods, err := notices.Linked(p.exe)
	if err != nil {
		return "", err
	}
	root, err := goEnv("GOMOD")
	if err != nil {
		return "", err
	}
	if err := notices.ResolveDirs(filepath.Dir(root), mods); err != nil {
		return "", err
	}
	goroot, err := goEnv("GOROOT")
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := notices.Write(&b, exeName, goVersion, goroot, mods); err != nil {
		return "", err
	}
	if p.tunnel != nil {
		b.WriteString("\n\ntunnel-client.exe, OpenAI's tunnel-client, is shipped as released; its licence is in\nthe tunnel-client-*.txt file(s) beside it.\n")
	}
	return b.String(), nil
}

func goEnv(key string) (string, error) {
	out, err := exec.Command("go", "env", key).Output()
	if err != nil {
		return "", fmt.Errorf("go env %s: %w", key, err)
	}
	v := strings.TrimSpace(string(out))
	if v == "" || v == os.DevNull {
		return "", fmt.Errorf("go env %s is empty: run from inside the Hearth module", key)
	}
	return v, nil
}

// startHere is the package's "Start here.txt": what to do, in the words
// of someone who has never used Hearth.
func startHere(version string, withTunnel bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, `Hearth %s — start here
==========================

Hearth lets ChatGPT use this PC, and asks you first before anything is changed.

1. If you are looking at this inside the ZIP file: close it, right-click the ZIP file,
   choose "Extract All…" and open the folder that appears. Hearth cannot run from
   inside a ZIP file.

2. Double-click hearth-tray.exe.

   If Windows says "Windows protected your PC", click "More info" and then
   "Run anyway" — but only if you downloaded this ZIP from Hearth's own download page.

3. Your web browser opens Hearth's Setup page. Follow it from top to bottom: it tells
   you what to copy from the OpenAI Platform and from ChatGPT, one step at a time, and
   tells you when ChatGPT can reach Hearth.

After that, Hearth sits in the notification area at the bottom right of the screen,
near the clock (click the small arrow ^ if you do not see its icon). When ChatGPT asks to do something that needs your permission,
a notification appears: click it to decide. Right-click the icon to open the control
panel, or to stop everything at once with "Emergency stop".

What is in this folder
----------------------

hearth-tray.exe           Hearth.
`, version)
	if withTunnel {
		b.WriteString(`tunnel-client.exe         OpenAI's program that connects ChatGPT to Hearth. Hearth starts
                          it for you; keep it in this folder, beside hearth-tray.exe.
tunnel-client-*.txt       Its licence.
`)
	}
	b.WriteString(`THIRD-PARTY-NOTICES.txt   The licences of the software Hearth is built from.
Start here.txt            This text.
`)
	return b.String()
}
