//go:build !windows

package screen

// SetPerMonitorDPIAware is for Windows, where a process must ask to see
// physical pixels on every monitor; X11 coordinates always are.
func SetPerMonitorDPIAware() error { return nil }
