package desktop

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

// The Applications folder is read through the shell's item interfaces:
// SHGetKnownFolderItem(FOLDERID_AppsFolder) gives its IShellItem, whose
// BHID_EnumItems handler enumerates the entries; each entry's normal
// display name is the Start menu's name and its parent-relative parsing
// name is, for a packaged app, its AppUserModelID.

var (
	procSHGetKnownFolderItem = shell32.NewProc("SHGetKnownFolderItem")

	folderIDAppsFolder = windows.GUID{Data1: 0x1e87508d, Data2: 0x89c2, Data3: 0x42f0, Data4: [8]byte{0x8a, 0x7e, 0x64, 0x5a, 0x0f, 0x50, 0xca, 0x58}}
	iidIShellItem      = windows.GUID{Data1: 0x43826d1e, Data2: 0xe718, Data3: 0x42ee, Data4: [8]byte{0xbc, 0x55, 0xa1, 0xe2, 0x61, 0xc3, 0x7b, 0xfe}}
	bhidEnumItems      = windows.GUID{Data1: 0x94f60519, Data2: 0x2850, Data3: 0x4924, Data4: [8]byte{0xaa, 0x5a, 0xd1, 0x5e, 0x84, 0x86, 0x80, 0x39}}
	iidIEnumShellItems = windows.GUID{Data1: 0x70629033, Data2: 0xe363, Data3: 0x4a28, Data4: [8]byte{0xa5, 0x67, 0x0d, 0xb7, 0x80, 0x06, 0xe6, 0xd7}}
)

const (
	sigdnNormalDisplay         = 0x00000000
	sigdnParentRelativeParsing = 0x80018001
	// maxAppsFolderItems bounds one reading (a PC has hundreds).
	maxAppsFolderItems = 4096
)

// comObject is a COM interface pointer: its first word is the vtable.
type comObject struct{ vtbl *[16]uintptr }

// call calls the i-th method of o's vtable; an HRESULT below zero is an
// error.
func (o *comObject) call(i int, args ...uintptr) error {
	hr, _, _ := syscall.SyscallN(o.vtbl[i], append([]uintptr{uintptr(unsafe.Pointer(o))}, args...)...)
	if int32(hr) < 0 {
		return windows.Errno(hr)
	}
	return nil
}

func (o *comObject) release() { syscall.SyscallN(o.vtbl[2], uintptr(unsafe.Pointer(o))) }

// displayName is IShellItem::GetDisplayName (vtable slot 5).
func (o *comObject) displayName(sigdn uint32) (string, error) {
	var p *uint16
	if err := o.call(5, uintptr(sigdn), uintptr(unsafe.Pointer(&p))); err != nil {
		return "", err
	}
	defer windows.CoTaskMemFree(unsafe.Pointer(p))
	return windows.UTF16PtrToString(p), nil
}

// appsFolderItems reads the Applications folder's entries. It fails where
// the shell has no such folder (Wine).
func appsFolderItems() ([]shellApp, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	switch err := windows.CoInitializeEx(0, windows.COINIT_APARTMENTTHREADED); {
	case err == nil || errors.Is(err, syscall.Errno(1)): // S_FALSE: this thread had COM already
		defer windows.CoUninitialize()
	case errors.Is(err, syscall.Errno(0x80010106)):
		// RPC_E_CHANGED_MODE: the thread has a multithreaded apartment,
		// where the shell's items work too.
	default:
		return nil, fmt.Errorf("start COM: %w", err)
	}
	if err := procSHGetKnownFolderItem.Find(); err != nil {
		return nil, fmt.Errorf("the shell has no known folder items: %w", err)
	}
	var folder *comObject
	hr, _, _ := procSHGetKnownFolderItem.Call(uintptr(unsafe.Pointer(&folderIDAppsFolder)), 0, 0,
		uintptr(unsafe.Pointer(&iidIShellItem)), uintptr(unsafe.Pointer(&folder)))
	if int32(hr) < 0 || folder == nil {
		return nil, fmt.Errorf("open the Applications folder: %w", windows.Errno(hr))
	}
	defer folder.release()
	var enum *comObject
	// IShellItem::BindToHandler (slot 3).
	if err := folder.call(3, 0, uintptr(unsafe.Pointer(&bhidEnumItems)), uintptr(unsafe.Pointer(&iidIEnumShellItems)), uintptr(unsafe.Pointer(&enum))); err != nil || enum == nil {
		return nil, fmt.Errorf("list the Applications folder: %w", err)
	}
	defer enum.release()
	var out []shellApp
	for len(out) < maxAppsFolderItems {
		var item *comObject
		var fetched uint32
		// IEnumShellItems::Next (slot 3): S_FALSE (1) at the end.
		hr, _, _ := syscall.SyscallN(enum.vtbl[3], uintptr(unsafe.Pointer(enum)), 1, uintptr(unsafe.Pointer(&item)), uintptr(unsafe.Pointer(&fetched)))
		if int32(hr) < 0 {
			return out, fmt.Errorf("list the Applications folder: %w", windows.Errno(hr))
		}
		if hr != 0 || fetched == 0 || item == nil {
			break
		}
		name, nerr := item.displayName(sigdnNormalDisplay)
		parsing, perr := item.displayName(sigdnParentRelativeParsing)
		item.release()
		if nerr == nil && perr == nil {
			out = append(out, shellApp{Name: name, Parsing: parsing})
		}
	}
	return out, nil
}

// listStoreApps is the packaged apps of the Applications folder; none
// where the shell has no such folder.
func listStoreApps() []App {
	items, err := appsFolderItems()
	if err != nil {
		return nil
	}
	return storeApps(items)
}

// packagesStamp changes when a packaged app is installed or removed for
// the user: the modification time of %LOCALAPPDATA%\Packages, which holds
// a folder per installed package (its entries are not walked: there are
// many, and deep).
func packagesStamp() string {
	local, err := windows.KnownFolderPath(windows.FOLDERID_LocalAppData, windows.KF_FLAG_DONT_VERIFY)
	if err != nil {
		return ""
	}
	fi, err := os.Stat(filepath.Join(local, "Packages"))
	if err != nil {
		return "no Packages"
	}
	return fmt.Sprintf("Packages %d", fi.ModTime().UnixNano())
}
