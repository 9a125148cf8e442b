//go:build !windows

package main

import (
	"context"
	"errors"
	"io"
)

func install(context.Context, io.Writer) error {
	return errors.New("install is for Windows; on Linux run `hearth-tray serve` from your service manager")
}

func uninstall(context.Context, bool, io.Writer) error {
	return errors.New("uninstall is for Windows; on Linux stop `hearth-tray serve` in your service manager and delete the program")
}
