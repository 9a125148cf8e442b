//go:build !linux

package proc

import "os/exec"

// startCmd starts cmd. Only Linux has a parent-death signal; on Windows the
// Job Object's kill-on-close does that work, and other Unix systems leave
// a child of a killed Hearth running.
func startCmd(cmd *exec.Cmd) error { return cmd.Start() }
