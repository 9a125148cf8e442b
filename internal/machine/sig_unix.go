//go:build !windows

package machine

import "syscall"

var sigterm = syscall.SIGTERM
