package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// TestServeRefusesBadConfig starts the real binary's serve on a config with
// an unknown key or a bad value: it must exit 1 before listening, name the
// key on stderr, and leave the file as the user wrote it.
func TestServeRefusesBadConfig(t *testing.T) {
	bin := hearthtest.Binary(t)
	cases := []struct {
		name, config, key string
		// viaEnv puts the file at HEARTH_CONFIG instead of the data directory.
		viaEnv bool
	}{
		{"unknown key", `{"rootz":[]}`, `"rootz"`, false},
		{"unknown nested key", `{"policy":{"mode":"ask","moed":"trusted"}}`, `"policy.moed"`, false},
		{"bad value", `{"max_concurrent_exec":0}`, `"max_concurrent_exec"`, false},
		{"wrong type", `{"max_concurrent_exec":"many"}`, `"max_concurrent_exec"`, true},
		{"bad enum", `{"policy":{"mode":"yolo"}}`, `"policy.mode"`, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			cfgPath := filepath.Join(home, "config.json")
			env := []string{"HEARTH_HOME=" + home, "HEARTH_CONFIG="}
			if tc.viaEnv {
				cfgPath = filepath.Join(t.TempDir(), "elsewhere.json")
				env = []string{"HEARTH_HOME=" + home, "HEARTH_CONFIG=" + cfgPath}
			}
			if err := os.WriteFile(cfgPath, []byte(tc.config), 0o600); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "serve", "--mcp-addr", "127.0.0.1:0", "--panel-addr", "127.0.0.1:0")
			cmd.Env = append(os.Environ(), env...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 {
				t.Fatalf("serve with config %s: %v, want exit code 1\nstdout: %s\nstderr: %s", tc.config, err, stdout.String(), stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.key) {
				t.Errorf("stderr does not name %s: %q", tc.key, stderr.String())
			}
			if !strings.Contains(stderr.String(), cfgPath) {
				t.Errorf("stderr does not name the file %s: %q", cfgPath, stderr.String())
			}
			if strings.Contains(stdout.String(), "Hearth listening") {
				t.Errorf("serve listened despite the bad config: %q", stdout.String())
			}
			if b, err := os.ReadFile(cfgPath); err != nil || string(b) != tc.config {
				t.Errorf("the refused config was changed: %q, %v", b, err)
			}
		})
	}
}
