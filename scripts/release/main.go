// Command release makes what a Hearth release publishes beside its
// Windows ZIPs, and signs the release manifest:
//
//	release keygen -name NAME -out FILE
//	    a new release key pair: the signer key into FILE (0600; keep it
//	    off the repository), the verifier key printed (built into Hearth
//	    by build-windows from HEARTH_RELEASE_PUBKEY)
//	release sign -key FILE -in MANIFEST.json -out MANIFEST.signed
//	    check a manifest and sign it (scripts/sign-release)
//	release finish -dist DIR -version V -base-url URL [-key FILE]
//	    [-changes TEXT] [-min-version V]
//	    for each Hearth-V-windows-ARCH.zip (and Hearth-V-linux-amd64.zip,
//	    scripts/package-linux) in DIR: an SPDX SBOM of the
//	    Go modules in its hearth-tray.exe (from the build information),
//	    the release manifest (hearth-manifest.json, and signed with -key
//	    as hearth-manifest.signed), the winget manifest (winget/, package
//	    Hearth.Hearth, a per-user zip with the nested exe), and last
//	    SHA256SUMS over every file
//
// The private key is only ever read from the file given; nothing here
// writes it anywhere else.
package main

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"github.com/hearth-dev/hearth/internal/update"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: release keygen|sign|finish [flags]")
	}
	switch args[0] {
	case "keygen":
		return keygen(args[1:], stdout)
	case "sign":
		return sign(args[1:], stdout)
	case "finish":
		return finish(args[1:], stdout)
	}
	return fmt.Errorf("unknown command %q (keygen, sign, finish)", args[0])
}

func keygen(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("keygen", flag.ContinueOnError)
	name := fs.String("name", "hearth-release", "the key's name")
	out := fs.String("out", "", "file for the signer (private) key")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return errors.New("keygen: -out is required")
	}
	skey, vkey, err := update.GenerateKey(*name)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(*out, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("keygen: %w", err)
	}
	if _, err := f.WriteString(skey + "\n"); err != nil {
		f.Close()
		return fmt.Errorf("keygen: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("keygen: %w", err)
	}
	fmt.Fprintln(stdout, vkey)
	return nil
}

func readKey(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read the release key: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

func sign(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("sign", flag.ContinueOnError)
	key := fs.String("key", "", "the release signer key file")
	in := fs.String("in", "", "the manifest (JSON)")
	out := fs.String("out", "", "the signed manifest")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *key == "" || *in == "" || *out == "" {
		return errors.New("sign: -key, -in and -out are required")
	}
	skey, err := readKey(*key)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(*in)
	if err != nil {
		return fmt.Errorf("sign: %w", err)
	}
	m, err := decodeForSigning(b)
	if err != nil {
		return fmt.Errorf("sign %s: %w", *in, err)
	}
	// Signed now: a Hearth refuses a manifest published before the last
	// one it accepted, so a re-signed manifest must be newer.
	m.Published = time.Now().UTC().Truncate(time.Second)
	msg, err := update.SignManifest(m, skey)
	if err != nil {
		return err
	}
	if err := os.WriteFile(*out, msg, 0o644); err != nil {
		return fmt.Errorf("sign: %w", err)
	}
	fmt.Fprintf(stdout, "release: signed %s (version %s) into %s\n", *in, m.Version, *out)
	return nil
}

// decodeForSigning reads a manifest to sign: every field is checked when
// it is signed (published is set then, so it may be missing here).
func decodeForSigning(b []byte) (update.Manifest, error) {
	var m update.Manifest
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&m); err != nil {
		return update.Manifest{}, fmt.Errorf("manifest is not JSON: %w", err)
	}
	if dec.More() {
		return update.Manifest{}, errors.New("manifest is not JSON: trailing data after the object")
	}
	return m, nil
}

// pkgZip is one ZIP of the release: Windows (amd64, arm64) or Linux
// (amd64, for hearth-tray serve).
type pkgZip struct {
	// goos and arch are its platform (the manifest names it goos-arch).
	goos, arch   string
	name         string
	size         int64
	sha256       string
	exe          []byte
	tunnelSHA256 string
}

func finish(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("finish", flag.ContinueOnError)
	dist := fs.String("dist", "dist", "the directory holding the release's ZIPs")
	version := fs.String("version", "", "the release version")
	base := fs.String("base-url", "", "where the ZIPs will be downloaded from (the manifest's and winget's URLs)")
	key := fs.String("key", "", "the release signer key file (the signed manifest is written only with it)")
	changes := fs.String("changes", "", "what changed, in plain words")
	minVersion := fs.String("min-version", "", "the oldest version that may update straight to this one (default: this version's major.0.0)")
	tunnelVersion := fs.String("tunnel-client-version", "unknown", "the tunnel-client version packaged")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *version == "" || *base == "" {
		return errors.New("finish: -version and -base-url are required")
	}
	release := update.ValidVersion(*version)
	if *changes == "" && release {
		*changes = "Hearth " + update.Display(*version) + "."
	}
	if *minVersion == "" && release {
		*minVersion = strings.SplitN(update.Display(*version), ".", 2)[0] + ".0.0"
	}
	zips, err := readZips(*dist, *version)
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	if !release {
		// A development build (a git describe version): its SBOMs and
		// checksums, but no manifest or winget entry to publish.
		for _, z := range zips {
			if err := writeSBOM(*dist, z, *version, now); err != nil {
				return err
			}
		}
		fmt.Fprintf(stdout, "release: %q is not a release version (such as 1.4.0): no manifest or winget manifest\n", *version)
		return writeSums(*dist)
	}
	m := update.Manifest{Version: *version, MinVersion: *minVersion, Changes: *changes, Published: now.Truncate(time.Second), Platforms: map[string]update.Artifact{}}
	for _, z := range zips {
		if err := writeSBOM(*dist, z, *version, now); err != nil {
			return err
		}
		a := update.Artifact{URL: strings.TrimSuffix(*base, "/") + "/" + z.name, Size: z.size, SHA256: z.sha256}
		if z.tunnelSHA256 != "" {
			a.TunnelClient = &update.TunnelClient{Version: *tunnelVersion, SHA256: z.tunnelSHA256}
		}
		m.Platforms[z.goos+"-"+z.arch] = a
	}
	if err := m.Check(); err != nil {
		return fmt.Errorf("finish: %w", err)
	}
	text, _ := json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(filepath.Join(*dist, "hearth-manifest.json"), append(text, '\n'), 0o644); err != nil {
		return err
	}
	if *key != "" {
		skey, err := readKey(*key)
		if err != nil {
			return err
		}
		msg, err := update.SignManifest(m, skey)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(*dist, "hearth-manifest.signed"), msg, 0o644); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(stdout, "release: no -key: hearth-manifest.json is not signed (sign it with scripts/sign-release)")
	}
	if err := writeWinget(*dist, *version, *base, zips); err != nil {
		return err
	}
	if err := writeSums(*dist); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "release: %d packages, SBOMs, manifest, winget manifest and SHA256SUMS in %s\n", len(zips), *dist)
	return nil
}

func readZips(dist, version string) ([]pkgZip, error) {
	var out []pkgZip
	for _, plat := range [][2]string{{"windows", "amd64"}, {"windows", "arm64"}, {"linux", "amd64"}} {
		goos, arch := plat[0], plat[1]
		exeName, tcName := "hearth-tray.exe", "tunnel-client.exe"
		if goos != "windows" {
			exeName, tcName = "hearth-tray", "tunnel-client"
		}
		name := "Hearth-" + version + "-" + goos + "-" + arch + ".zip"
		b, err := os.ReadFile(filepath.Join(dist, name))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(b)
		z := pkgZip{goos: goos, arch: arch, name: name, size: int64(len(b)), sha256: hex.EncodeToString(sum[:])}
		zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		for _, f := range zr.File {
			if f.Name != exeName && f.Name != tcName {
				continue
			}
			rc, err := f.Open()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			data, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", name, f.Name, err)
			}
			if f.Name == exeName {
				z.exe = data
			} else {
				s := sha256.Sum256(data)
				z.tunnelSHA256 = hex.EncodeToString(s[:])
			}
		}
		if z.exe == nil {
			return nil, fmt.Errorf("%s holds no %s", name, exeName)
		}
		out = append(out, z)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no Hearth-%s-windows-*.zip or -linux-amd64.zip in %s", version, dist)
	}
	return out, nil
}

// spdx* are the parts of an SPDX 2.3 JSON document an SBOM of Go
// modules needs.
type spdxDoc struct {
	SPDXVersion       string         `json:"spdxVersion"`
	DataLicense       string         `json:"dataLicense"`
	SPDXID            string         `json:"SPDXID"`
	Name              string         `json:"name"`
	DocumentNamespace string         `json:"documentNamespace"`
	CreationInfo      spdxCreation   `json:"creationInfo"`
	Packages          []spdxPackage  `json:"packages"`
	Relationships     []spdxRelation `json:"relationships"`
}

type spdxCreation struct {
	Created  string   `json:"created"`
	Creators []string `json:"creators"`
}

type spdxPackage struct {
	Name             string    `json:"name"`
	SPDXID           string    `json:"SPDXID"`
	VersionInfo      string    `json:"versionInfo"`
	DownloadLocation string    `json:"downloadLocation"`
	FilesAnalyzed    bool      `json:"filesAnalyzed"`
	ExternalRefs     []spdxRef `json:"externalRefs,omitempty"`
}

type spdxRef struct {
	Category string `json:"referenceCategory"`
	Type     string `json:"referenceType"`
	Locator  string `json:"referenceLocator"`
}

type spdxRelation struct {
	Element string `json:"spdxElementId"`
	Type    string `json:"relationshipType"`
	Related string `json:"relatedSpdxElement"`
}

// writeSBOM writes Hearth-V-windows-ARCH.spdx.json: the Go toolchain,
// the main module and every module linked into the exe, read from its
// build information.
func writeSBOM(dist string, z pkgZip, version string, now time.Time) error {
	bi, err := buildinfo.Read(bytes.NewReader(z.exe))
	if err != nil {
		return fmt.Errorf("%s: hearth-tray.exe has no Go build information: %w", z.name, err)
	}
	doc := spdxDoc{
		SPDXVersion: "SPDX-2.3", DataLicense: "CC0-1.0", SPDXID: "SPDXRef-DOCUMENT",
		Name:              "hearth-tray " + version + " " + z.goos + "-" + z.arch,
		DocumentNamespace: "https://spdx.org/spdxdocs/hearth-tray-" + version + "-" + z.goos + "-" + z.arch + "-" + z.sha256[:16],
		CreationInfo:      spdxCreation{Created: now.Format(time.RFC3339), Creators: []string{"Tool: hearth-scripts-release"}},
	}
	add := func(id string, m *debug.Module) {
		for m.Replace != nil {
			m = m.Replace
		}
		p := spdxPackage{Name: m.Path, SPDXID: id, VersionInfo: m.Version, DownloadLocation: "NOASSERTION"}
		if m.Version != "" && m.Version != "(devel)" {
			p.ExternalRefs = []spdxRef{{Category: "PACKAGE-MANAGER", Type: "purl", Locator: "pkg:golang/" + m.Path + "@" + m.Version}}
		}
		doc.Packages = append(doc.Packages, p)
	}
	main := bi.Main
	if main.Version == "" || main.Version == "(devel)" {
		main.Version = version
	}
	add("SPDXRef-Package-main", &main)
	doc.Relationships = append(doc.Relationships, spdxRelation{"SPDXRef-DOCUMENT", "DESCRIBES", "SPDXRef-Package-main"})
	doc.Packages = append(doc.Packages, spdxPackage{Name: "stdlib", SPDXID: "SPDXRef-Package-stdlib", VersionInfo: bi.GoVersion, DownloadLocation: "https://go.dev/dl/",
		ExternalRefs: []spdxRef{{Category: "PACKAGE-MANAGER", Type: "purl", Locator: "pkg:golang/stdlib@" + bi.GoVersion}}})
	doc.Relationships = append(doc.Relationships, spdxRelation{"SPDXRef-Package-main", "DEPENDS_ON", "SPDXRef-Package-stdlib"})
	for i, dep := range bi.Deps {
		id := fmt.Sprintf("SPDXRef-Package-%d", i+1)
		add(id, dep)
		doc.Relationships = append(doc.Relationships, spdxRelation{"SPDXRef-Package-main", "DEPENDS_ON", id})
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	name := strings.TrimSuffix(z.name, ".zip") + ".spdx.json"
	return os.WriteFile(filepath.Join(dist, name), append(b, '\n'), 0o644)
}

// writeWinget writes the winget manifest of Hearth.Hearth (version,
// installer and default-locale files, ready for a winget-pkgs pull
// request): a per-user zip whose nested portable exe is hearth-tray.exe.
func writeWinget(dist, version, base string, zips []pkgZip) error {
	dir := filepath.Join(dist, "winget")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	v := update.Display(version)
	const head = "# Hearth's winget manifest, written by scripts/package-windows.\n"
	files := map[string]string{
		"Hearth.Hearth.yaml": head + "PackageIdentifier: Hearth.Hearth\nPackageVersion: " + v + "\nDefaultLocale: en-US\nManifestType: version\nManifestVersion: 1.6.0\n",
		"Hearth.Hearth.locale.en-US.yaml": head + "PackageIdentifier: Hearth.Hearth\nPackageVersion: " + v + "\nPackageLocale: en-US\nPublisher: Hearth\nPackageName: Hearth\nLicense: See THIRD-PARTY-NOTICES.txt\n" +
			"ShortDescription: Lets ChatGPT and local MCP clients work on your own PC, safely.\nManifestType: defaultLocale\nManifestVersion: 1.6.0\n",
	}
	var in strings.Builder
	in.WriteString(head + "PackageIdentifier: Hearth.Hearth\nPackageVersion: " + v + "\nInstallerType: zip\nNestedInstallerType: portable\n" +
		"NestedInstallerFiles:\n- RelativeFilePath: hearth-tray.exe\n  PortableCommandAlias: hearth-tray\nScope: user\nInstallers:\n")
	for _, z := range zips {
		if z.goos != "windows" {
			continue // winget installs Windows packages only
		}
		arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[z.arch]
		in.WriteString("- Architecture: " + arch + "\n  InstallerUrl: " + strings.TrimSuffix(base, "/") + "/" + z.name + "\n  InstallerSha256: " + strings.ToUpper(z.sha256) + "\n")
	}
	in.WriteString("ManifestType: installer\nManifestVersion: 1.6.0\n")
	files["Hearth.Hearth.installer.yaml"] = in.String()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// writeSums writes SHA256SUMS (sha256sum's format) over every file in
// dist and winget/, but itself.
func writeSums(dist string) error {
	var lines []string
	err := filepath.WalkDir(dist, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "SHA256SUMS" {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dist, path)
		s := sha256.Sum256(b)
		lines = append(lines, hex.EncodeToString(s[:])+"  "+filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(lines)
	return os.WriteFile(filepath.Join(dist, "SHA256SUMS"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}
