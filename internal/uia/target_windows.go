package uia

import (
	"fmt"

	"golang.org/x/sys/windows"
)

// windowProcess returns the process that owns window hwnd's top-level
// window.
func windowProcess(hwnd uint64) (int, error) {
	top := ancestor(windows.HWND(hwnd))
	if top == 0 {
		top = windows.HWND(hwnd)
	}
	var pid uint32
	if _, err := windows.GetWindowThreadProcessId(top, &pid); err != nil {
		return 0, fmt.Errorf("find the process of window %d: %w", hwnd, err)
	}
	return int(pid), nil
}

// processImage returns the full path of process pid's program file.
func processImage(pid int) (string, error) {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return "", fmt.Errorf("open process %d: %w", pid, err)
	}
	defer windows.CloseHandle(h)
	buf := make([]uint16, windows.MAX_LONG_PATH)
	n := uint32(len(buf))
	if err := windows.QueryFullProcessImageName(h, 0, &buf[0], &n); err != nil {
		return "", fmt.Errorf("read the program of process %d: %w", pid, err)
	}
	return windows.UTF16ToString(buf[:n]), nil
}
