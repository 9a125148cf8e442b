//go:build windows

package wake

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// browserCandidates are the standard install locations of Edge and Chrome.
func browserCandidates() []string {
	var out []string
	for _, env := range []string{"ProgramFiles(x86)", "ProgramFiles", "LOCALAPPDATA"} {
		if dir := os.Getenv(env); dir != "" {
			out = append(out, filepath.Join(dir, `Microsoft\Edge\Application\msedge.exe`))
		}
	}
	for _, env := range []string{"ProgramFiles", "ProgramFiles(x86)", "LOCALAPPDATA"} {
		if dir := os.Getenv(env); dir != "" {
			out = append(out, filepath.Join(dir, `Google\Chrome\Application\chrome.exe`))
		}
	}
	return out
}

// startupInfo is STARTUPINFOW with its reserved fields named:
// windows.StartupInfo hides cbReserved2 and lpReserved2, which carry the C
// runtime's inherited descriptor table.
type startupInfo struct {
	Cb            uint32
	Reserved      *uint16
	Desktop       *uint16
	Title         *uint16
	X             uint32
	Y             uint32
	XSize         uint32
	YSize         uint32
	XCountChars   uint32
	YCountChars   uint32
	FillAttribute uint32
	Flags         uint32
	ShowWindow    uint16
	CbReserved2   uint16
	LpReserved2   *byte
	StdInput      windows.Handle
	StdOutput     windows.Handle
	StdErr        windows.Handle
}

type startupInfoEx struct {
	startupInfo
	attrs *windows.ProcThreadAttributeList
}

// C runtime descriptor flags (FOPEN, FPIPE) in the inherited table.
const (
	crtOpen = 0x01
	crtPipe = 0x08
)

// crtHandleTable builds the C runtime's inherited descriptor table for
// lpReserved2: a 32-bit count, then one flag byte per descriptor, then
// one HANDLE per descriptor, packed. handles[i] is descriptor i; a zero
// handle is a closed descriptor (flag 0, INVALID_HANDLE_VALUE).
func crtHandleTable(handles []windows.Handle) []byte {
	n := len(handles)
	size := int(unsafe.Sizeof(uintptr(0)))
	b := make([]byte, 4+n+n*size)
	binary.LittleEndian.PutUint32(b, uint32(n))
	for i, h := range handles {
		v := uint64(windows.InvalidHandle)
		if h != 0 {
			b[4+i] = crtOpen | crtPipe
			v = uint64(h)
		}
		off := 4 + n + i*size
		if size == 8 {
			binary.LittleEndian.PutUint64(b[off:], v)
		} else {
			binary.LittleEndian.PutUint32(b[off:], uint32(v))
		}
	}
	return b
}

// spawn starts path with the CDP pipe as C runtime descriptors 3 (the
// child reads commands) and 4 (the child writes answers), passed in the
// inherited handle table of its STARTUPINFO. Only those two handles are
// inherited (PROC_THREAD_ATTRIBUTE_HANDLE_LIST).
func spawn(path string, args []string) (*process, error) {
	var cmdR, cmdW, resR, resW windows.Handle
	if err := windows.CreatePipe(&cmdR, &cmdW, nil, 0); err != nil {
		return nil, fmt.Errorf("create command pipe: %w", err)
	}
	if err := windows.CreatePipe(&resR, &resW, nil, 0); err != nil {
		windows.CloseHandle(cmdR)
		windows.CloseHandle(cmdW)
		return nil, fmt.Errorf("create answer pipe: %w", err)
	}
	closeChild := func() {
		windows.CloseHandle(cmdR)
		windows.CloseHandle(resW)
	}
	fail := func(err error) (*process, error) {
		closeChild()
		windows.CloseHandle(cmdW)
		windows.CloseHandle(resR)
		return nil, err
	}
	for _, h := range []windows.Handle{cmdR, resW} {
		if err := windows.SetHandleInformation(h, windows.HANDLE_FLAG_INHERIT, windows.HANDLE_FLAG_INHERIT); err != nil {
			return fail(fmt.Errorf("make pipe handle inheritable: %w", err))
		}
	}
	table := crtHandleTable([]windows.Handle{0, 0, 0, cmdR, resW})
	inherit := []windows.Handle{cmdR, resW}
	attrs, err := windows.NewProcThreadAttributeList(1)
	if err != nil {
		return fail(fmt.Errorf("create process attribute list: %w", err))
	}
	defer attrs.Delete()
	if err := attrs.Update(windows.PROC_THREAD_ATTRIBUTE_HANDLE_LIST, unsafe.Pointer(&inherit[0]), uintptr(len(inherit))*unsafe.Sizeof(inherit[0])); err != nil {
		return fail(fmt.Errorf("set inherited handles: %w", err))
	}
	si := &startupInfoEx{attrs: attrs.List()}
	si.Cb = uint32(unsafe.Sizeof(*si))
	si.CbReserved2 = uint16(len(table))
	si.LpReserved2 = &table[0]

	parts := make([]string, 0, len(args)+1)
	parts = append(parts, syscall.EscapeArg(path))
	for _, a := range args {
		parts = append(parts, syscall.EscapeArg(a))
	}
	line, err := windows.UTF16PtrFromString(strings.Join(parts, " "))
	if err != nil {
		return fail(fmt.Errorf("command line: %w", err))
	}
	app, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return fail(fmt.Errorf("browser path: %w", err))
	}
	var pi windows.ProcessInformation
	err = windows.CreateProcess(app, line, nil, nil, true,
		windows.CREATE_UNICODE_ENVIRONMENT|windows.EXTENDED_STARTUPINFO_PRESENT,
		nil, nil, (*windows.StartupInfo)(unsafe.Pointer(si)), &pi)
	if err != nil {
		return fail(err)
	}
	closeChild()
	windows.CloseHandle(pi.Thread)
	ph := pi.Process
	return &process{
		pid: int(pi.ProcessId),
		wait: func() error {
			defer windows.CloseHandle(ph)
			if _, err := windows.WaitForSingleObject(ph, windows.INFINITE); err != nil {
				return fmt.Errorf("wait for browser: %w", err)
			}
			var code uint32
			if err := windows.GetExitCodeProcess(ph, &code); err != nil {
				return fmt.Errorf("browser exit code: %w", err)
			}
			if code != 0 {
				return fmt.Errorf("browser exited with code %d", code)
			}
			return nil
		},
		kill: func() error {
			err := windows.TerminateProcess(ph, 1)
			if errors.Is(err, windows.ERROR_ACCESS_DENIED) {
				return nil // already ended
			}
			return err
		},
		toChild:   os.NewFile(uintptr(cmdW), "cdp-commands"),
		fromChild: os.NewFile(uintptr(resR), "cdp-answers"),
	}, nil
}
