package proc

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/windows"
)

// List reports the processes in a toolhelp snapshot. The image path and
// owner need a handle on each process; for processes this user may not
// open (services, other sessions, protected processes) they are left empty
// rather than failing the list.
func List() ([]Info, error) {
	entries, err := processEntries()
	if err != nil {
		return nil, err
	}
	users := map[string]string{}
	out := make([]Info, 0, len(entries))
	for _, e := range entries {
		info := Info{
			PID:  int(e.ProcessID),
			PPID: int(e.ParentProcessID),
			Name: windows.UTF16ToString(e.ExeFile[:]),
		}
		if h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, e.ProcessID); err == nil {
			info.Exe = imagePath(h)
			info.User = tokenUser(h, users)
			_ = windows.CloseHandle(h)
		}
		out = append(out, info)
	}
	return out, nil
}

func processEntries() ([]windows.ProcessEntry32, error) {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPPROCESS, 0)
	if err != nil {
		return nil, fmt.Errorf("snapshot processes: %w", err)
	}
	defer windows.CloseHandle(snap)
	e := windows.ProcessEntry32{Size: uint32(unsafe.Sizeof(windows.ProcessEntry32{}))}
	var out []windows.ProcessEntry32
	for err = windows.Process32First(snap, &e); err == nil; err = windows.Process32Next(snap, &e) {
		out = append(out, e)
	}
	if !errors.Is(err, windows.ERROR_NO_MORE_FILES) {
		return nil, fmt.Errorf("snapshot processes: %w", err)
	}
	return out, nil
}

func imagePath(h windows.Handle) string {
	buf := make([]uint16, windows.MAX_LONG_PATH)
	n := uint32(len(buf))
	if err := windows.QueryFullProcessImageName(h, 0, &buf[0], &n); err != nil {
		return ""
	}
	return windows.UTF16ToString(buf[:n])
}

// tokenUser names the account the process runs as ("DOMAIN\user"),
// resolving each SID once per List through cache: a lookup can reach a
// domain controller and take a while.
func tokenUser(h windows.Handle, cache map[string]string) string {
	var tok windows.Token
	if err := windows.OpenProcessToken(h, windows.TOKEN_QUERY, &tok); err != nil {
		return ""
	}
	defer tok.Close()
	tu, err := tok.GetTokenUser()
	if err != nil {
		return ""
	}
	sid := tu.User.Sid.String()
	if name, ok := cache[sid]; ok {
		return name
	}
	name := sid
	if account, domain, _, err := tu.User.Sid.LookupAccount(""); err == nil {
		name = account
		if domain != "" {
			name = domain + `\` + account
		}
	}
	cache[sid] = name
	return name
}
