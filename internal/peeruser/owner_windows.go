package peeruser

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

const method = "GetExtendedTcpTable owner PID, process token user SID"

var (
	procGetExtendedTcpTable  = windows.NewLazySystemDLL("iphlpapi.dll").NewProc("GetExtendedTcpTable")
	procWTSEnumerateProcessW = windows.NewLazySystemDLL("wtsapi32.dll").NewProc("WTSEnumerateProcessesW")
)

// tcpTableOwnerPIDAll is TCP_TABLE_OWNER_PID_ALL.
const tcpTableOwnerPIDAll = 5

func self() (Account, error) {
	tu, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return Account{}, fmt.Errorf("read this process's token user: %w", err)
	}
	return named(Account{ID: tu.User.Sid.String()}), nil
}

func named(a Account) Account {
	sid, err := windows.StringToSid(a.ID)
	if err != nil {
		return a
	}
	if name, domain, _, err := sid.LookupAccount(""); err == nil {
		a.Name = name
		if domain != "" {
			a.Name = domain + `\` + name
		}
	}
	return a
}

// lookupTries and lookupPause bound owner's second looks at the table: a
// connection accepted a moment ago can be missing from it, or listed
// without its pid yet (seen under Wine on a busy host). A connection that
// is still not listed with an owner after that is refused.
const (
	lookupTries = 3
	lookupPause = 5 * time.Millisecond
)

func owner(local, remote netip.AddrPort) (Account, error) {
	pid, err := peerProcess(local, remote)
	if err != nil {
		return Account{}, err
	}
	if pid == uint32(os.Getpid()) {
		return self()
	}
	return processAccount(pid)
}

// peerProcess returns the owning pid of the peer's row in the TCP table,
// looking again (lookupTries) while the row is missing or has no pid yet.
func peerProcess(local, remote netip.AddrPort) (uint32, error) {
	ipv6 := !remote.Addr().Is4()
	for try := 1; ; try++ {
		table, err := tcpTable(ipv6)
		if err != nil {
			return 0, err
		}
		rows, err := tableRows(table, ipv6)
		if err != nil {
			return 0, err
		}
		pid, ok := peerPID(rows, local, remote)
		if ok && pid != 0 {
			return pid, nil
		}
		if try == lookupTries {
			if !ok {
				return 0, ErrNotFound
			}
			return pid, nil
		}
		time.Sleep(lookupPause)
	}
}

// tcpTable returns the whole IPv4 or IPv6 TCP table with owning pids.
func tcpTable(ipv6 bool) ([]byte, error) {
	family := uintptr(windows.AF_INET)
	if ipv6 {
		family = windows.AF_INET6
	}
	size := uint32(16 << 10)
	for range 8 {
		buf := make([]byte, size)
		r, _, _ := procGetExtendedTcpTable.Call(uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&size)), 0, family, tcpTableOwnerPIDAll, 0)
		switch windows.Errno(r) {
		case 0:
			return buf[:size], nil
		case windows.ERROR_INSUFFICIENT_BUFFER:
			size += size / 4 // the table may grow before the next call
			continue
		default:
			return nil, fmt.Errorf("GetExtendedTcpTable: %w", windows.Errno(r))
		}
	}
	return nil, errors.New("GetExtendedTcpTable: the table kept growing")
}

// processAccount returns the token user of process pid. Another
// account's process usually cannot be opened (its DACL grants its own
// user, not this one); the account the session manager lists for it is
// then the answer, so that the refusal can name it.
func processAccount(pid uint32) (Account, error) {
	if pid == 0 || pid == 4 {
		return Account{}, fmt.Errorf("the peer is owned by the system (pid %d)", pid)
	}
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
	if err != nil {
		sid, lerr := listedSID(pid)
		if lerr != nil {
			return Account{}, fmt.Errorf("open the peer's process %d: %w (%v)", pid, err, lerr)
		}
		return Account{ID: sid}, nil
	}
	defer windows.CloseHandle(h)
	var tok windows.Token
	if err := windows.OpenProcessToken(h, windows.TOKEN_QUERY, &tok); err != nil {
		return Account{}, fmt.Errorf("open the token of the peer's process %d: %w", pid, err)
	}
	defer tok.Close()
	tu, err := tok.GetTokenUser()
	if err != nil {
		return Account{}, fmt.Errorf("read the token user of the peer's process %d: %w", pid, err)
	}
	return Account{ID: tu.User.Sid.String()}, nil
}

// wtsProcessInfo is WTS_PROCESS_INFOW.
type wtsProcessInfo struct {
	SessionID uint32
	PID       uint32
	Name      *uint16
	UserSID   *windows.SID
}

// listedSID returns the account Windows' session manager lists for process
// pid (WTSEnumerateProcessesW, which names every process's user).
func listedSID(pid uint32) (string, error) {
	var info *wtsProcessInfo
	var n uint32
	r, _, err := procWTSEnumerateProcessW.Call(0, 0, 1, uintptr(unsafe.Pointer(&info)), uintptr(unsafe.Pointer(&n)))
	if r == 0 {
		return "", fmt.Errorf("WTSEnumerateProcesses: %w", err)
	}
	defer windows.WTSFreeMemory(uintptr(unsafe.Pointer(info)))
	for _, p := range unsafe.Slice(info, n) {
		if p.PID == pid && p.UserSID != nil {
			return p.UserSID.String(), nil
		}
	}
	return "", fmt.Errorf("the session manager lists no account for process %d", pid)
}
