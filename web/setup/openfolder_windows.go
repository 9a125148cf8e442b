package setup

import (
	"fmt"
	"os/exec"
)

// openFolder opens dir in File Explorer.
func openFolder(dir string) error {
	cmd := exec.Command("explorer.exe", dir)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("open %s in File Explorer: %w", dir, err)
	}
	return cmd.Process.Release()
}
