package screen

import (
	"errors"
	"unsafe"

	"golang.org/x/sys/windows"
)

var (
	procOpenInputDesktop          = moduser32.NewProc("OpenInputDesktop")
	procCloseDesktop              = moduser32.NewProc("CloseDesktop")
	procGetUserObjectInformationW = moduser32.NewProc("GetUserObjectInformationW")
)

// InputDesktop answers nil when input would reach the signed-in person's
// own desktop, else why not in plain words (ErrSecureDesktop for a UAC
// prompt or the lock screen). Asked right before any input Hearth sends.
func InputDesktop() error {
	return DecideInputDesktop(probeInputDesktop())
}

func probeInputDesktop() DesktopProbe {
	const desktopReadObjects, uoiName = 0x0001, 2
	d, _, err := procOpenInputDesktop.Call(0, 0, desktopReadObjects)
	if d == 0 {
		return DesktopProbe{OpenErr: err, AccessDenied: errors.Is(err, windows.ERROR_ACCESS_DENIED)}
	}
	defer procCloseDesktop.Call(d)
	var name [64]uint16
	var need uint32
	if r, _, err := procGetUserObjectInformationW.Call(d, uoiName, uintptr(unsafe.Pointer(&name[0])), unsafe.Sizeof(name), uintptr(unsafe.Pointer(&need))); r == 0 {
		return DesktopProbe{OpenErr: err}
	}
	return DesktopProbe{Name: windows.UTF16ToString(name[:])}
}
