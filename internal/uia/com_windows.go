package uia

import (
	"errors"
	"fmt"
	"syscall"
	"unicode/utf16"
	"unsafe"

	"golang.org/x/sys/windows"
)

// iface is a COM interface pointer: the object starts with a pointer to
// its table of methods. IUIAutomation and its element, tree walker and
// pattern interfaces derive from IUnknown, not IDispatch, so they are
// called through the table directly, by the method indexes of
// UIAutomationClient.h.
type iface struct{ vtbl *[128]uintptr }

// call invokes method i with the object as first argument.
//
//go:uintptrescapes
func (p *iface) call(i int, args ...uintptr) error {
	all := make([]uintptr, 0, len(args)+1)
	all = append(all, uintptr(unsafe.Pointer(p)))
	all = append(all, args...)
	hr, _, _ := syscall.SyscallN(p.vtbl[i], all...)
	if int32(hr) < 0 {
		return hresult(uint32(hr))
	}
	return nil
}

func (p *iface) release() {
	if p != nil {
		syscall.SyscallN(p.vtbl[2], uintptr(unsafe.Pointer(p)))
	}
}

// Method indexes (0-2 are IUnknown's QueryInterface, AddRef, Release).
const (
	// IUIAutomation
	autoGetRootElement    = 5
	autoElementFromHandle = 6
	autoGetControlWalker  = 14
	// IUIAutomationTreeWalker
	walkGetParent      = 3
	walkGetFirstChild  = 4
	walkGetNextSibling = 6
	// IUIAutomationElement
	elSetFocus            = 3
	elGetCurrentPatternAs = 14
	elGetCurrentPattern   = 16
	elProcessID           = 20
	elControlType         = 21
	elName                = 23
	elHasKeyboardFocus    = 26
	elIsEnabled           = 28
	elAutomationID        = 29
	elClassName           = 30
	elIsPassword          = 35
	elNativeWindowHandle  = 36
	elIsOffscreen         = 38
	elBoundingRectangle   = 43
	// IUIAutomationInvokePattern
	invokeInvoke = 3
	// IUIAutomationValuePattern
	valueSetValue     = 3
	valueCurrentValue = 4
)

// Pattern ids (UIA_*PatternId) and the names Props reports.
const (
	patInvoke = 10000
	patValue  = 10002
)

var probedPatterns = []struct {
	id   uintptr
	name string
}{
	{patInvoke, "invoke"}, {patValue, "value"}, {10015, "toggle"}, {10005, "expand_collapse"},
	{10010, "selection_item"}, {10004, "scroll"},
}

var (
	clsidCUIAutomation    = windows.GUID{Data1: 0xff48dba4, Data2: 0x60ef, Data3: 0x4201, Data4: [8]byte{0xaa, 0x87, 0x54, 0x10, 0x3e, 0xef, 0x59, 0x4e}}
	iidIUIAutomation      = windows.GUID{Data1: 0x30cbe57d, Data2: 0xd9d0, Data3: 0x452a, Data4: [8]byte{0xab, 0x13, 0x7a, 0xc5, 0xac, 0x48, 0x25, 0xee}}
	iidInvokePattern      = windows.GUID{Data1: 0xfb377fbe, Data2: 0x8ea6, Data3: 0x46d5, Data4: [8]byte{0x9c, 0x73, 0x64, 0x99, 0x64, 0x2d, 0x30, 0x59}}
	iidValuePattern       = windows.GUID{Data1: 0xa94cd8b1, Data2: 0x0844, Data3: 0x4cd6, Data4: [8]byte{0x9d, 0x2d, 0x64, 0x05, 0x37, 0xab, 0x39, 0xe9}}
	modole32              = windows.NewLazySystemDLL("ole32.dll")
	modoleaut32           = windows.NewLazySystemDLL("oleaut32.dll")
	procCoCreateInstance  = modole32.NewProc("CoCreateInstance")
	procSysAllocStringLen = modoleaut32.NewProc("SysAllocStringLen")
	procSysFreeString     = modoleaut32.NewProc("SysFreeString")
	procSysStringLen      = modoleaut32.NewProc("SysStringLen")
)

const clsctxInprocServer = 0x1

// HRESULTs a provider maps onto the package's errors.
const (
	uiaElementNotAvailable = 0x80040201
	uiaElementNotEnabled   = 0x80040200
	uiaNotSupported        = 0x80040204
	uiaNoClickablePoint    = 0x80040202
	eNoInterface           = 0x80004002
	eNotImpl               = 0x80004001
	regdbClassNotReg       = 0x80040154
)

type hresultError uint32

func (h hresultError) Error() string {
	switch h {
	case uiaElementNotAvailable:
		return "element not available (UIA_E_ELEMENTNOTAVAILABLE)"
	case uiaElementNotEnabled:
		return "element not enabled (UIA_E_ELEMENTNOTENABLED)"
	case uiaNotSupported:
		return "not supported (UIA_E_NOTSUPPORTED)"
	case regdbClassNotReg:
		return "class not registered (REGDB_E_CLASSNOTREG)"
	}
	return fmt.Sprintf("HRESULT 0x%08X: %v", uint32(h), syscall.Errno(h))
}

// Is lets errors.Is match the package's errors.
func (h hresultError) Is(target error) bool {
	switch target {
	case ErrGone:
		return h == uiaElementNotAvailable
	case ErrUnsupported:
		return h == uiaNotSupported || h == eNoInterface || h == eNotImpl
	}
	return false
}

func hresult(hr uint32) error { return hresultError(hr) }

func coCreateInstance(clsid, iid *windows.GUID) (*iface, error) {
	var out *iface
	hr, _, _ := procCoCreateInstance.Call(uintptr(unsafe.Pointer(clsid)), 0, clsctxInprocServer, uintptr(unsafe.Pointer(iid)), uintptr(unsafe.Pointer(&out)))
	if int32(hr) < 0 {
		return nil, hresult(uint32(hr))
	}
	if out == nil {
		return nil, errors.New("CoCreateInstance returned no object")
	}
	return out, nil
}

// bstr reads and frees a BSTR out-parameter.
func bstr(b *uint16) string {
	if b == nil {
		return ""
	}
	n, _, _ := procSysStringLen.Call(uintptr(unsafe.Pointer(b)))
	s := windows.UTF16ToString(unsafe.Slice(b, int(n)))
	procSysFreeString.Call(uintptr(unsafe.Pointer(b)))
	return s
}

// newBSTR allocates a BSTR holding s (NUL characters included); free it
// with freeBSTR.
func newBSTR(s string) (*uint16, error) {
	u := utf16.Encode([]rune(s))
	var p *uint16
	if len(u) > 0 {
		p = &u[0]
	}
	r, _, err := procSysAllocStringLen.Call(uintptr(unsafe.Pointer(p)), uintptr(len(u)))
	if r == 0 {
		return nil, fmt.Errorf("SysAllocStringLen: %w", err)
	}
	// Read the returned address as a pointer without converting a
	// uintptr value to unsafe.Pointer (the memory is not Go's).
	return *(**uint16)(unsafe.Pointer(&r)), nil
}

func freeBSTR(b *uint16) { procSysFreeString.Call(uintptr(unsafe.Pointer(b))) }
