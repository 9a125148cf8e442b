//go:build !windows

package wake

import (
	"fmt"
	"os"
	"os/exec"
)

// browserCandidates are the browsers looked for on PATH.
func browserCandidates() []string {
	return []string{"google-chrome", "google-chrome-stable", "chromium", "chromium-browser", "microsoft-edge"}
}

// spawn starts path with the CDP pipe on descriptors 3 (the child reads
// commands) and 4 (the child writes answers).
func spawn(path string, args []string) (*process, error) {
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("create command pipe: %w", err)
	}
	resR, resW, err := os.Pipe()
	if err != nil {
		cmdR.Close()
		cmdW.Close()
		return nil, fmt.Errorf("create answer pipe: %w", err)
	}
	cmd := exec.Command(path, args...)
	cmd.ExtraFiles = []*os.File{cmdR, resW}
	err = cmd.Start()
	cmdR.Close()
	resW.Close()
	if err != nil {
		cmdW.Close()
		resR.Close()
		return nil, err
	}
	return &process{
		pid:       cmd.Process.Pid,
		wait:      cmd.Wait,
		kill:      cmd.Process.Kill,
		toChild:   cmdW,
		fromChild: resR,
	}, nil
}
