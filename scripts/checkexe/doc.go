// Package checkexe holds a test that reads a built hearth-tray.exe back:
// the PE subsystem and the resources go-winres compiled into it (manifest,
// icon group, version info). It runs only when HEARTH_EXE names the file,
// as scripts/test-sign does after scripts/build-windows; go test ./...
// skips it.
package checkexe
