//go:build windows

package desktop

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/hearth-dev/hearth/internal/autostart"
	"github.com/hearth-dev/hearth/internal/proc"
)

// On Windows a file, folder, address or app opens through ShellExecuteEx
// with the "open" verb, as a double-click does: the app registered for
// it, the default browser, the shortcut's program. The apps are the Start
// menu's shortcuts (the user's and everyone's Programs folders, found as
// known folders, so a moved or renamed profile still works), each named
// as the Start menu names it: the localized name its folder's desktop.ini
// gives, else the shortcut's file name. A packaged (Store) app opens by
// its AppUserModelID through shell:AppsFolder.

var (
	shell32             = windows.NewLazySystemDLL("shell32.dll")
	procShellExecuteExW = shell32.NewProc("ShellExecuteExW")
	shlwapi             = windows.NewLazySystemDLL("shlwapi.dll")
	procSHLoadIndirect  = shlwapi.NewProc("SHLoadIndirectString")
)

// shellExecuteInfo is SHELLEXECUTEINFOW.
type shellExecuteInfo struct {
	size      uint32
	mask      uint32
	hwnd      uintptr
	verb      *uint16
	file      *uint16
	params    *uint16
	dir       *uint16
	show      int32
	instApp   uintptr
	idList    uintptr
	class     *uint16
	keyClass  uintptr
	hotKey    uint32
	iconOrMon uintptr
	hProcess  windows.Handle
}

const (
	seeMaskNoCloseProcess = 0x00000040
	seeMaskNoAsync        = 0x00000100
	seeMaskFlagNoUI       = 0x00000400
	swShowNormal          = 1
)

// shellOpen opens what with its "open" verb and returns the process it
// started, when the shell says (0 when an app took it over by DDE or a
// running instance).
func shellOpen(what string) (int, error) {
	verb, _ := windows.UTF16PtrFromString("open")
	file, err := windows.UTF16PtrFromString(what)
	if err != nil {
		return 0, err
	}
	info := shellExecuteInfo{mask: seeMaskNoCloseProcess | seeMaskNoAsync | seeMaskFlagNoUI, verb: verb, file: file, show: swShowNormal}
	info.size = uint32(unsafe.Sizeof(info))
	r, _, callErr := procShellExecuteExW.Call(uintptr(unsafe.Pointer(&info)))
	if r == 0 {
		return 0, fmt.Errorf("ShellExecuteEx: %w", callErr)
	}
	if info.hProcess == 0 {
		return 0, nil
	}
	defer windows.CloseHandle(info.hProcess)
	pid, err := windows.GetProcessId(info.hProcess)
	if err != nil {
		return 0, nil
	}
	return int(pid), nil
}

func openFile(_ context.Context, path string) (int, error) { return shellOpen(path) }

func openURL(_ context.Context, u string) (int, error) { return shellOpen(u) }

// openApp opens a through the shell, which answers no process: the app
// is not in a Job Object of Hearth's and started is not told of it, so
// the e-stop leaves it running.
func openApp(_ context.Context, a *App, _ *proc.Started) (int, error) {
	if a.Kind == "store" {
		return shellOpen(`shell:AppsFolder\` + a.ID)
	}
	return shellOpen(a.launch)
}

func execBit(fs.FileInfo) bool { return false }

// programsFolders are the user's and everyone's Start menu Programs
// folders.
func programsFolders() []string {
	var dirs []string
	for _, id := range []*windows.KNOWNFOLDERID{windows.FOLDERID_Programs, windows.FOLDERID_CommonPrograms} {
		d, err := windows.KnownFolderPath(id, 0)
		if err == nil && d != "" {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// appsStamp fingerprints the Programs folders (appCache): a shortcut or a
// desktop.ini added, removed or replaced changes it, and so does a
// packaged app installed or removed (packagesStamp).
func appsStamp() string { return stampFolders(programsFolders(), packagesStamp()) }

// listApps reads the Start menu's shortcuts, then adds the packaged
// (Store) apps of the Applications folder (storeapps_windows.go).
func listApps() ([]App, error) {
	dirs := programsFolders()
	if len(dirs) == 0 {
		return nil, errors.New("no Start menu Programs folder is known")
	}
	seen := map[string]bool{}
	var apps []App
	for _, root := range dirs {
		names := map[string]map[string]string{} // dir → file → localized name
		_ = filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() || !strings.EqualFold(filepath.Ext(p), ".lnk") {
				return nil
			}
			dir := filepath.Dir(p)
			if names[dir] == nil {
				names[dir] = localizedNames(dir)
			}
			name := names[dir][strings.ToLower(filepath.Base(p))]
			if name == "" {
				name = strings.TrimSuffix(filepath.Base(p), filepath.Ext(p))
			}
			if seen[strings.ToLower(name)] {
				return nil
			}
			target, err := autostart.ShortcutTarget(p)
			if err != nil {
				return nil
			}
			if strings.HasPrefix(strings.ToLower(filepath.Base(target)), "unins") {
				return nil // an uninstaller is no app to open
			}
			seen[strings.ToLower(name)] = true
			apps = append(apps, App{Name: name, Kind: "desktop", Program: target, launch: p})
			return nil
		})
	}
	slices.SortFunc(apps, func(a, b App) int { return strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)) })
	return withStoreApps(apps, listStoreApps()), nil
}

// localizedNames reads dir's desktop.ini [LocalizedFileNames]: the name
// the Start menu shows for each shortcut (keys lower-cased), resolving
// "@dll,-id" resource references with SHLoadIndirectString.
func localizedNames(dir string) map[string]string {
	out := map[string]string{}
	b, err := os.ReadFile(filepath.Join(dir, "desktop.ini"))
	if err != nil {
		return out
	}
	text := decodeINI(b)
	in := false
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			in = strings.EqualFold(line, "[LocalizedFileNames]")
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !in || !ok {
			continue
		}
		v = strings.TrimSpace(v)
		if strings.HasPrefix(v, "@") {
			v = loadIndirect(v)
		}
		if v != "" {
			out[strings.ToLower(strings.TrimSpace(k))] = v
		}
	}
	return out
}

// decodeINI reads a desktop.ini, which Windows writes in UTF-16 (with a
// byte-order mark) or in the ANSI code page.
func decodeINI(b []byte) string {
	if len(b) >= 2 && b[0] == 0xFF && b[1] == 0xFE {
		u := make([]uint16, (len(b)-2)/2)
		for i := range u {
			u[i] = uint16(b[2+2*i]) | uint16(b[3+2*i])<<8
		}
		return windows.UTF16ToString(u)
	}
	return string(b)
}

// loadIndirect resolves an indirect string ("@%SystemRoot%\system32\
// shell32.dll,-22067") in the user's language; "" when it cannot.
func loadIndirect(ref string) string {
	src, err := windows.UTF16PtrFromString(ref)
	if err != nil {
		return ""
	}
	buf := make([]uint16, 512)
	r, _, _ := procSHLoadIndirect.Call(uintptr(unsafe.Pointer(src)), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0)
	if r != 0 {
		return ""
	}
	return windows.UTF16ToString(buf)
}
