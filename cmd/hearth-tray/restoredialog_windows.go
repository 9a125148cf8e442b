package main

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Task dialog values (commctrl.h).
const (
	tdfAllowDialogCancellation = 0x0008
	tdfExpandFooterArea        = 0x0040
	tdcbfOKButton              = 0x0001
	tdcbfCancelButton          = 0x0008
	tdWarningIcon              = 0xFFFF // MAKEINTRESOURCEW(-1)
	idOK                       = 1
	idRestore                  = 100
)

var procTaskDialogIndirect = windows.NewLazySystemDLL("comctl32.dll").NewProc("TaskDialogIndirect")

// askRestore shows p in a task dialog with a Restore button (and Cancel),
// or only OK when there is nothing to restore; SQLite's message is behind
// "Details". It reports whether the user chose Restore. Where the task
// dialog is unavailable (comctl32 before version 6) it falls back to a
// message box whose OK restores.
func askRestore(p restorePrompt) (bool, error) {
	id, err := taskDialog(p, 0)
	if err == nil {
		return p.CanRestore && id == idRestore, nil
	}
	text := p.Instruction + "\n\n" + p.Content
	flags := uint32(windows.MB_OK | windows.MB_ICONWARNING)
	if p.CanRestore {
		text += "\n\nOK restores the backup now; Cancel leaves everything as it is."
		flags = windows.MB_OKCANCEL | windows.MB_ICONWARNING
	}
	t, _ := windows.UTF16PtrFromString(p.Title)
	m, _ := windows.UTF16PtrFromString(text)
	r, merr := windows.MessageBox(0, m, t, flags)
	if merr != nil {
		return false, fmt.Errorf("task dialog: %v; message box: %w", err, merr)
	}
	return p.CanRestore && r == idOK, nil
}

// taskDialog shows p with TaskDialogIndirect and returns the id of the
// button chosen; callback, when not 0, is the dialog's PFTASKDIALOGCALLBACK
// (tests click a button with it). TASKDIALOGCONFIG and TASKDIALOG_BUTTON
// are declared under #pragma pack(1), so they are laid out here byte by
// byte.
func taskDialog(p restorePrompt, callback uintptr) (int32, error) {
	if err := procTaskDialogIndirect.Find(); err != nil {
		return 0, err
	}
	var keep []*uint16
	str := func(s string) uintptr {
		if s == "" {
			return 0
		}
		u, err := windows.UTF16PtrFromString(s)
		if err != nil {
			return 0
		}
		keep = append(keep, u)
		return uintptr(unsafe.Pointer(u))
	}
	var buttons []byte
	common := uint32(tdcbfOKButton)
	nButtons := uint32(0)
	def := int32(idOK)
	if p.CanRestore {
		buttons = packed{}.i32(idRestore).ptr(str("Restore")).b
		common, nButtons, def = tdcbfCancelButton, 1, idRestore
	}
	var buttonsPtr uintptr
	if len(buttons) > 0 {
		buttonsPtr = uintptr(unsafe.Pointer(&buttons[0]))
	}
	details := p.Details
	if p.Command != "" {
		details = "The same from a terminal: " + p.Command + "\n\nSQLite: " + details
	}
	cfg := packed{}.
		u32(0). // cbSize, set below
		ptr(0). // hwndParent
		ptr(0). // hInstance
		u32(tdfAllowDialogCancellation | tdfExpandFooterArea).
		u32(common).             // dwCommonButtons
		ptr(str(p.Title)).       // pszWindowTitle
		ptr(tdWarningIcon).      // pszMainIcon
		ptr(str(p.Instruction)). // pszMainInstruction
		ptr(str(p.Content)).     // pszContent
		u32(nButtons).ptr(buttonsPtr).
		i32(def).             // nDefaultButton
		u32(0).ptr(0).i32(0). // radio buttons
		ptr(0).               // pszVerificationText
		ptr(str(details)).    // pszExpandedInformation
		ptr(0).ptr(0).        // expanded / collapsed control text
		ptr(0).ptr(0).        // footer icon, footer
		ptr(callback).ptr(0). // pfCallback, lpCallbackData
		u32(0).b              // cxWidth
	binary.LittleEndian.PutUint32(cfg, uint32(len(cfg)))
	var chosen int32
	hr, _, _ := procTaskDialogIndirect.Call(uintptr(unsafe.Pointer(&cfg[0])), uintptr(unsafe.Pointer(&chosen)), 0, 0)
	runtime.KeepAlive(keep)
	runtime.KeepAlive(buttons)
	runtime.KeepAlive(cfg)
	if int32(hr) < 0 {
		return 0, fmt.Errorf("TaskDialogIndirect: HRESULT %#x", uint32(hr))
	}
	return chosen, nil
}

// packed lays out a #pragma pack(1) structure.
type packed struct{ b []byte }

func (p packed) u32(v uint32) packed { p.b = binary.LittleEndian.AppendUint32(p.b, v); return p }
func (p packed) i32(v int32) packed  { return p.u32(uint32(v)) }
func (p packed) ptr(v uintptr) packed {
	if unsafe.Sizeof(v) == 8 {
		p.b = binary.LittleEndian.AppendUint64(p.b, uint64(v))
		return p
	}
	return p.u32(uint32(v))
}
