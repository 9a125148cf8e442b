package main

import "golang.org/x/sys/unix"

// getTermios is the ioctl that reads a terminal's attributes; it fails
// with ENOTTY on anything that is not a terminal.
const getTermios = unix.TCGETS
