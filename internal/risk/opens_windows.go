package risk

import (
	"unsafe"

	"golang.org/x/sys/windows"
)

// procAssocQueryString is shlwapi's AssocQueryStringW, which answers
// what Explorer would start to open a file of an extension.
var procAssocQueryString = windows.NewLazySystemDLL("shlwapi.dll").NewProc("AssocQueryStringW")

// The AssocQueryString flags and strings used.
const (
	assocfNoTruncate        = 0x20
	assocfInitIgnoreUnknown = 0x400
	assocstrCommand         = 1
	assocstrExecutable      = 2
)

// registeredHandler is the program (and command) the extension ext is
// registered to open with, for the open verb; empty when none is or the
// system does not say.
func registeredHandler(ext string) handlerInfo {
	return handlerInfo{program: assocString(assocstrExecutable, ext), command: assocString(assocstrCommand, ext)}
}

// assocString is one AssocQueryString answer for ext's open verb, "" on
// any failure.
func assocString(what uint32, ext string) string {
	e, err := windows.UTF16PtrFromString(ext)
	if err != nil {
		return ""
	}
	verb, _ := windows.UTF16PtrFromString("open")
	buf := make([]uint16, 1024)
	n := uint32(len(buf))
	hr, _, _ := procAssocQueryString.Call(assocfNoTruncate|assocfInitIgnoreUnknown, uintptr(what),
		uintptr(unsafe.Pointer(e)), uintptr(unsafe.Pointer(verb)), uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&n)))
	if hr != 0 {
		return ""
	}
	return windows.UTF16ToString(buf)
}
