//go:build !windows

package app

import (
	"errors"
	"syscall"
)

// addrTaken reports whether a listen failed because another socket holds
// the port.
func addrTaken(err error) bool { return errors.Is(err, syscall.EADDRINUSE) }
