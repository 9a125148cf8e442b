package autostart

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// The Start-menu shortcut is written through the shell's own IShellLinkW
// and IPersistFile (COM), not a PowerShell WScript.Shell script: no
// script text is ever built from the paths, it works where PowerShell is
// restricted or missing, and it is a few dozen lines.

var (
	clsidShellLink  = windows.GUID{Data1: 0x00021401, Data4: [8]byte{0xC0, 0, 0, 0, 0, 0, 0, 0x46}}
	iidIShellLinkW  = windows.GUID{Data1: 0x000214F9, Data4: [8]byte{0xC0, 0, 0, 0, 0, 0, 0, 0x46}}
	iidIPersistFile = windows.GUID{Data1: 0x0000010B, Data4: [8]byte{0xC0, 0, 0, 0, 0, 0, 0, 0x46}}

	procCoCreateInstance = windows.NewLazySystemDLL("ole32.dll").NewProc("CoCreateInstance")
)

// Method indexes (0-2 are IUnknown's QueryInterface, AddRef, Release).
const (
	linkGetPath         = 3
	linkSetDescription  = 7
	linkSetWorkingDir   = 9
	linkSetIconLocation = 17
	linkSetPath         = 20
	persistFileLoad     = 5
	persistFileSave     = 6
	clsctxInprocServer  = 0x1
	stgmRead            = 0
	rpcEChangedMode     = 0x80010106
	coinitApartmentThrd = 0x2
	maxPath             = 260 * 4
	sFalse              = syscall.Errno(1)
)

// comObj is a COM interface pointer: a pointer to its method table.
type comObj struct{ vtbl *[32]uintptr }

//go:uintptrescapes
func (p *comObj) call(i int, args ...uintptr) error {
	all := append([]uintptr{uintptr(unsafe.Pointer(p))}, args...)
	hr, _, _ := syscall.SyscallN(p.vtbl[i], all...)
	if int32(hr) < 0 {
		return fmt.Errorf("HRESULT 0x%08X", uint32(hr))
	}
	return nil
}

func (p *comObj) release() { syscall.SyscallN(p.vtbl[2], uintptr(unsafe.Pointer(p))) }

// withShellLink runs f with a new ShellLink object and its IPersistFile,
// on a COM apartment of this OS thread.
func withShellLink(f func(link, file *comObj) error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	switch err := windows.CoInitializeEx(0, coinitApartmentThrd); {
	case err == nil || errors.Is(err, sFalse):
		defer windows.CoUninitialize()
	case errors.Is(err, syscall.Errno(rpcEChangedMode)):
		// The thread already has a multithreaded apartment; ShellLink
		// works there too.
	default:
		return fmt.Errorf("initialize COM: %w", err)
	}
	var link *comObj
	hr, _, _ := procCoCreateInstance.Call(uintptr(unsafe.Pointer(&clsidShellLink)), 0, clsctxInprocServer,
		uintptr(unsafe.Pointer(&iidIShellLinkW)), uintptr(unsafe.Pointer(&link)))
	if int32(hr) < 0 {
		return fmt.Errorf("create a shell link object: HRESULT 0x%08X", uint32(hr))
	}
	defer link.release()
	var file *comObj
	if err := link.call(0, uintptr(unsafe.Pointer(&iidIPersistFile)), uintptr(unsafe.Pointer(&file))); err != nil {
		return fmt.Errorf("shell link IPersistFile: %w", err)
	}
	defer file.release()
	return f(link, file)
}

// CreateShortcut writes a shell link at lnk that starts target (no
// arguments) in dir, with target's icon and description as its tooltip,
// replacing an existing one.
func CreateShortcut(lnk, target, dir, description string) error {
	if err := os.MkdirAll(filepath.Dir(lnk), 0o755); err != nil {
		return fmt.Errorf("create shortcut %s: %w", lnk, err)
	}
	err := withShellLink(func(link, file *comObj) error {
		for _, set := range []struct {
			method int
			value  string
			extra  []uintptr
		}{
			{linkSetPath, target, nil},
			{linkSetWorkingDir, dir, nil},
			{linkSetDescription, description, nil},
			{linkSetIconLocation, target, []uintptr{0}},
		} {
			p, err := windows.UTF16PtrFromString(set.value)
			if err != nil {
				return err
			}
			err = link.call(set.method, append([]uintptr{uintptr(unsafe.Pointer(p))}, set.extra...)...)
			runtime.KeepAlive(p)
			if err != nil {
				return err
			}
		}
		p, err := windows.UTF16PtrFromString(lnk)
		if err != nil {
			return err
		}
		return file.call(persistFileSave, uintptr(unsafe.Pointer(p)), 1)
	})
	if err != nil {
		return fmt.Errorf("create shortcut %s: %w", lnk, err)
	}
	return nil
}

// ShortcutTarget reads the program a shell link starts.
func ShortcutTarget(lnk string) (string, error) {
	var target string
	err := withShellLink(func(link, file *comObj) error {
		p, err := windows.UTF16PtrFromString(lnk)
		if err != nil {
			return err
		}
		if err := file.call(persistFileLoad, uintptr(unsafe.Pointer(p)), stgmRead); err != nil {
			return err
		}
		buf := make([]uint16, maxPath)
		if err := link.call(linkGetPath, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0); err != nil {
			return err
		}
		target = windows.UTF16ToString(buf)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("read shortcut %s: %w", lnk, err)
	}
	return target, nil
}
