//go:build !windows

package selftest

import "errors"

// errNoWin32 is why the fixture windows do not exist here.
var errNoWin32 = errors.New("the fixture window is a Win32 window; this is not Windows")

type fixtureWindows struct{}

func openFixture(Fixture) (*fixtureWindows, error) { return nil, errNoWin32 }
func (*fixtureWindows) Close()                     {}
func (*fixtureWindows) State() State               { return State{} }
func (*fixtureWindows) HWND() uint64               { return 0 }
func (*fixtureWindows) PanelHWND() uint64          { return 0 }

// findWindows finds nothing: there are no Win32 windows here.
func findWindows(string) ([]uint64, error) { return nil, nil }
