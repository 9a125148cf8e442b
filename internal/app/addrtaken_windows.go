package app

import (
	"errors"

	"golang.org/x/sys/windows"
)

// addrTaken reports whether a listen failed because the port is not
// Hearth's to take: another socket holds it (WSAEADDRINUSE), or Windows
// keeps it for something else (WSAEACCES: a port another program bound
// exclusively, or one in a range Hyper-V or WinNAT reserved).
func addrTaken(err error) bool {
	return errors.Is(err, windows.WSAEADDRINUSE) || errors.Is(err, windows.WSAEACCES)
}
