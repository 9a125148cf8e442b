package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hearth-dev/hearth/internal/autostart"
)

// copyTunnelClient copies the tunnel-client.exe that came with this
// program (beside it, as the Windows package has it) and its licence
// files (tunnel-client-*.txt) into the install directory, so that the
// installed hearth-tray.exe has it beside it too: the copy there is the one
// Hearth pins and trusts by itself. Nothing beside this program: nothing
// to copy.
func copyTunnelClient(srcDir, dstDir string, stdout io.Writer) error {
	if autostart.SameFile(srcDir, dstDir) {
		return nil
	}
	exe := filepath.Join(srcDir, "tunnel-client.exe")
	if _, err := os.Stat(exe); errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	files := []string{exe}
	ents, err := os.ReadDir(srcDir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		n := e.Name()
		if e.Type().IsRegular() && strings.HasPrefix(n, "tunnel-client-") && strings.HasSuffix(n, ".txt") {
			files = append(files, filepath.Join(srcDir, n))
		}
	}
	for _, f := range files {
		dst := filepath.Join(dstDir, filepath.Base(f))
		if err := autostart.CopyExe(f, dst); err != nil {
			return fmt.Errorf("copy the tunnel-client that came with Hearth: %w", err)
		}
	}
	fmt.Fprintf(stdout, "Copied tunnel-client.exe (and its licence) to %s\n", dstDir)
	return nil
}
