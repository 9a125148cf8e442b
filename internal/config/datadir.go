package config

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// DataDir returns Hearth's data directory: HEARTH_HOME, else
// %LOCALAPPDATA%\Hearth on Windows (the known folder Local AppData when
// the variable is unset), else $XDG_DATA_HOME/hearth or
// ~/.local/share/hearth.
func DataDir() (string, error) {
	if h := os.Getenv("HEARTH_HOME"); h != "" {
		return filepath.Abs(h)
	}
	if runtime.GOOS == "windows" {
		d := os.Getenv("LOCALAPPDATA")
		if d == "" {
			// A program started with a bare environment still finds the
			// folder where Windows says it is.
			d = localAppData()
		}
		if d != "" {
			return filepath.Join(d, "Hearth"), nil
		}
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "hearth"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find data directory: %w", err)
	}
	return filepath.Join(home, ".local", "share", "hearth"), nil
}

// Path returns the config file path: HEARTH_CONFIG, else config.json in
// the data directory.
func Path(dataDir string) string {
	if p := os.Getenv("HEARTH_CONFIG"); p != "" {
		return p
	}
	return filepath.Join(dataDir, "config.json")
}
