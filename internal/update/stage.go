package update

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
)

// ProgramName and TunnelClientName are the two programs' file names in a
// package and in the program folder.
func ProgramName() string      { return exeName("hearth-tray") }
func TunnelClientName() string { return exeName("tunnel-client") }

func exeName(base string) string {
	if runtime.GOOS == "windows" {
		return base + ".exe"
	}
	return base
}

// maxEntryBytes bounds one program unpacked from a package.
const maxEntryBytes = 1 << 30

// Plan is a verified update ready to hand over to: the new programs
// unpacked in the data folder, and what the signed manifest says of them.
type Plan struct {
	From, To string
	Changes  string
	// SHA256 is the package's hash from the manifest: with To, what a
	// rollback remembers (Refused) so the same release is not installed
	// again.
	SHA256 string
	// NewExe is the unpacked hearth-tray.
	NewExe string
	// NewTunnel is the unpacked tunnel-client, TunnelSHA256 its hash from
	// the manifest; "" when the package carries none.
	NewTunnel    string
	TunnelSHA256 string
}

// Stage unpacks the verified package at zipPath into dir: hearth-tray,
// and tunnel-client when the manifest lists one (its SHA-256 must then be
// the manifest's; a tunnel-client the manifest does not list is never
// taken).
func Stage(zipPath, dir string, from string, m Manifest, a Artifact) (Plan, error) {
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		return Plan{}, problem("The downloaded package is not a ZIP file", err)
	}
	defer zr.Close()
	p := Plan{From: from, To: m.Version, Changes: m.Changes, SHA256: a.SHA256}
	var exeFile, tcFile *zip.File
	for _, f := range zr.File {
		switch f.Name {
		case ProgramName():
			exeFile = f
		case TunnelClientName():
			tcFile = f
		}
	}
	if exeFile == nil {
		return Plan{}, problem("The downloaded package holds no Hearth program", fmt.Errorf("%s: no %s in it", zipPath, ProgramName()))
	}
	if p.NewExe, _, err = unpack(exeFile, dir); err != nil {
		return Plan{}, problem("Hearth could not unpack the update", err)
	}
	if a.TunnelClient != nil {
		if tcFile == nil {
			os.Remove(p.NewExe)
			return Plan{}, problem("The downloaded package lacks the tunnel-client the signed release lists", fmt.Errorf("%s: no %s in it", zipPath, TunnelClientName()))
		}
		path, sum, err := unpack(tcFile, dir)
		if err != nil {
			os.Remove(p.NewExe)
			return Plan{}, problem("Hearth could not unpack the update", err)
		}
		if sum != a.TunnelClient.SHA256 {
			os.Remove(p.NewExe)
			os.Remove(path)
			return Plan{}, problem("The tunnel-client in the package does not match the signed release, so Hearth did not use it", fmt.Errorf("SHA-256 %s, manifest says %s", sum, a.TunnelClient.SHA256))
		}
		p.NewTunnel, p.TunnelSHA256 = path, sum
	}
	return p, nil
}

// unpack writes f into a new executable file in dir and returns its path
// and SHA-256, reading at most maxEntryBytes.
func unpack(f *zip.File, dir string) (string, string, error) {
	rc, err := f.Open()
	if err != nil {
		return "", "", fmt.Errorf("unpack %s: %w", f.Name, err)
	}
	defer rc.Close()
	out, err := os.CreateTemp(dir, "staged-*-"+f.Name)
	if err != nil {
		return "", "", fmt.Errorf("unpack %s: %w", f.Name, err)
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(out, h), io.LimitReader(rc, maxEntryBytes+1))
	if err == nil && n > maxEntryBytes {
		err = errors.New("larger than 1 GiB")
	}
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(out.Name(), 0o755)
	}
	if err != nil {
		os.Remove(out.Name())
		return "", "", fmt.Errorf("unpack %s: %w", f.Name, err)
	}
	return filepath.Clean(out.Name()), hex.EncodeToString(h.Sum(nil)), nil
}
