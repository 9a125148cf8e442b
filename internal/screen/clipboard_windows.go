package screen

import (
	"fmt"
	"log/slog"
	"runtime"
	"time"
	"unicode/utf16"
	"unsafe"

	"golang.org/x/sys/windows"
)

// The Windows clipboard through user32: CF_UNICODETEXT read with
// GetClipboardData and written with SetClipboardData of a movable global
// block the system then owns.

var (
	modkernel32          = windows.NewLazySystemDLL("kernel32.dll")
	procOpenClipboard    = moduser32.NewProc("OpenClipboard")
	procCloseClipboard   = moduser32.NewProc("CloseClipboard")
	procEmptyClipboard   = moduser32.NewProc("EmptyClipboard")
	procGetClipboardData = moduser32.NewProc("GetClipboardData")
	procSetClipboardData = moduser32.NewProc("SetClipboardData")
	procIsFormatAvail    = moduser32.NewProc("IsClipboardFormatAvailable")
	procGlobalAlloc      = modkernel32.NewProc("GlobalAlloc")
	procGlobalFree       = modkernel32.NewProc("GlobalFree")
	procGlobalLock       = modkernel32.NewProc("GlobalLock")
	procGlobalUnlock     = modkernel32.NewProc("GlobalUnlock")
	procGlobalSize       = modkernel32.NewProc("GlobalSize")
)

const (
	cfUnicodeText = 13
	gmemMoveable  = 0x0002
)

// DefaultClipboard returns the clipboard of Hearth's session.
func DefaultClipboard(*slog.Logger) Clipboard { return winClipboard{} }

type winClipboard struct{}

func (winClipboard) Close() {}

// open opens the clipboard, retrying for a moment while another program
// holds it open.
func open() error {
	var err error
	for range 20 {
		var r uintptr
		if r, _, err = procOpenClipboard.Call(0); r != 0 {
			return nil
		}
		time.Sleep(25 * time.Millisecond)
	}
	return fmt.Errorf("open the clipboard (another program holds it): %w", err)
}

// Text and SetText keep their goroutine on one thread: the clipboard is
// open for the thread that opened it.
func (winClipboard) Text(maxBytes int) (string, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := open(); err != nil {
		return "", err
	}
	defer procCloseClipboard.Call()
	if ok, _, _ := procIsFormatAvail.Call(cfUnicodeText); ok == 0 {
		return "", ErrNoText
	}
	h, _, err := procGetClipboardData.Call(cfUnicodeText)
	if h == 0 {
		return "", fmt.Errorf("GetClipboardData: %w", err)
	}
	size, _, _ := procGlobalSize.Call(h)
	// A UTF-16 unit is at most 3 bytes of UTF-8; a text block more than
	// three times the bound's units cannot fit, and is not copied.
	units := int(size / 2)
	if units > 3*maxBytes+1 {
		return "", ErrTooLong
	}
	p, _, err := procGlobalLock.Call(h)
	if p == 0 {
		return "", fmt.Errorf("GlobalLock: %w", err)
	}
	defer procGlobalUnlock.Call(h)
	u := unsafe.Slice((*uint16)(globalPtr(p)), units)
	for i, c := range u {
		if c == 0 {
			u = u[:i]
			break
		}
	}
	s := string(utf16.Decode(u))
	if len(s) > maxBytes {
		return "", ErrTooLong
	}
	return s, nil
}

func (winClipboard) SetText(text string) error {
	u, err := windows.UTF16FromString(text)
	if err != nil {
		return fmt.Errorf("encode the text: %w", err)
	}
	h, _, err := procGlobalAlloc.Call(gmemMoveable, uintptr(2*len(u)))
	if h == 0 {
		return fmt.Errorf("GlobalAlloc: %w", err)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	owned := false
	defer func() {
		if !owned {
			procGlobalFree.Call(h)
		}
	}()
	p, _, err := procGlobalLock.Call(h)
	if p == 0 {
		return fmt.Errorf("GlobalLock: %w", err)
	}
	copy(unsafe.Slice((*uint16)(globalPtr(p)), len(u)), u)
	procGlobalUnlock.Call(h)
	if err := open(); err != nil {
		return err
	}
	defer procCloseClipboard.Call()
	if r, _, err := procEmptyClipboard.Call(); r == 0 {
		return fmt.Errorf("EmptyClipboard: %w", err)
	}
	if r, _, err := procSetClipboardData.Call(cfUnicodeText, h); r == 0 {
		return fmt.Errorf("SetClipboardData: %w", err)
	}
	owned = true // the system owns the block now
	return nil
}

// globalPtr is the address GlobalLock returned, as a pointer: the block is
// memory Go does not manage, locked in place until GlobalUnlock.
func globalPtr(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }
