//go:build !windows

package desktop

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hearth-dev/hearth/internal/proc"
)

// Off Windows a file, folder or address opens with xdg-open (the
// desktop's own choice of app), and the apps are the XDG .desktop entries
// of $XDG_DATA_HOME and $XDG_DATA_DIRS, named in the language of
// $LC_ALL, $LC_MESSAGES or $LANG.

func openFile(ctx context.Context, path string) (int, error) { return xdgOpen(ctx, path) }

func openURL(ctx context.Context, u string) (int, error) { return xdgOpen(ctx, u) }

// xdgOpen hands what to xdg-open and waits for it: xdg-open returns once
// the app was started (or answers an error).
func xdgOpen(ctx context.Context, what string) (int, error) {
	bin, err := exec.LookPath("xdg-open")
	if err != nil {
		return 0, errors.New("xdg-open is not installed (package xdg-utils)")
	}
	cmd := exec.CommandContext(ctx, bin, what)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("xdg-open: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return 0, nil
}

// openApp starts the program of a's .desktop entry, its field codes
// dropped, in a session of its own so that it outlives Hearth's call,
// and hands it to started: the e-stop kills it with what it started, as
// it kills what xdg-open detached (which Hearth adopts).
func openApp(_ context.Context, a *App, started *proc.Started) (int, error) {
	args := execArgs(a.launch)
	if len(args) == 0 {
		return 0, fmt.Errorf("the entry %s has no Exec line", a.ID)
	}
	cmd := exec.Command(args[0], args[1:]...)
	setDetached(cmd)
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("start %s: %w", args[0], err)
	}
	if err := started.Add(cmd); err != nil {
		return 0, err
	}
	return cmd.Process.Pid, nil
}

// execArgs splits an Exec value into arguments, dropping the field codes
// (%f, %U, …) that stand for files a launcher would pass.
func execArgs(execLine string) []string {
	var args []string
	var cur strings.Builder
	inQuote, any := false, false
	for i := 0; i < len(execLine); i++ {
		c := execLine[i]
		switch {
		case c == '"':
			inQuote, any = !inQuote, true
		case c == '\\' && inQuote && i+1 < len(execLine):
			i++
			cur.WriteByte(execLine[i])
		case c == ' ' && !inQuote:
			if any {
				args = append(args, cur.String())
			}
			cur.Reset()
			any = false
		default:
			cur.WriteByte(c)
			any = true
		}
	}
	if any {
		args = append(args, cur.String())
	}
	out := args[:0]
	for _, a := range args {
		if len(a) == 2 && a[0] == '%' {
			continue
		}
		out = append(out, strings.ReplaceAll(a, "%%", "%"))
	}
	return out
}

// dataDirs are the XDG data directories, the user's first.
func dataDirs() []string {
	home := os.Getenv("XDG_DATA_HOME")
	if home == "" {
		if h, err := os.UserHomeDir(); err == nil {
			home = filepath.Join(h, ".local", "share")
		}
	}
	dirs := []string{home}
	sys := os.Getenv("XDG_DATA_DIRS")
	if sys == "" {
		sys = "/usr/local/share:/usr/share"
	}
	return append(dirs, filepath.SplitList(sys)...)
}

// locales are the Name[…] keys to try, most particular first
// ("de_DE.UTF-8" gives de_DE, de).
func locales() []string {
	l := ""
	for _, k := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		if l = os.Getenv(k); l != "" {
			break
		}
	}
	l, _, _ = strings.Cut(l, ".")
	l, _, _ = strings.Cut(l, "@")
	if l == "" || l == "C" || l == "POSIX" {
		return nil
	}
	out := []string{l}
	if lang, _, ok := strings.Cut(l, "_"); ok {
		out = append(out, lang)
	}
	return out
}

// appDirs are the folders of .desktop entries, the user's first.
func appDirs() []string {
	var out []string
	for _, d := range dataDirs() {
		out = append(out, filepath.Join(d, "applications"))
	}
	return out
}

// appsStamp fingerprints the .desktop folders and the language the names
// are read in (appCache).
func appsStamp() string { return stampFolders(appDirs(), locales()...) }

// listApps reads the .desktop entries that a menu shows (Type=Application,
// not NoDisplay or Hidden); an entry of the user's hides the system's of
// the same id.
func listApps() ([]App, error) {
	locs := locales()
	seen := map[string]bool{}
	var apps []App
	for _, root := range appDirs() {
		_ = filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() || !strings.HasSuffix(p, ".desktop") {
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			id := strings.ReplaceAll(rel, string(filepath.Separator), "-")
			if seen[id] {
				return nil
			}
			seen[id] = true
			if a, ok := readEntry(p, id, locs); ok {
				apps = append(apps, a)
			}
			return nil
		})
	}
	slices.SortFunc(apps, func(a, b App) int { return strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)) })
	return apps, nil
}

// readEntry reads the [Desktop Entry] group of a .desktop file.
func readEntry(path, id string, locs []string) (App, bool) {
	f, err := os.Open(path)
	if err != nil {
		return App{}, false
	}
	defer f.Close()
	kv := map[string]string{}
	group := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		if line[0] == '[' {
			group = line
			continue
		}
		if group != "[Desktop Entry]" {
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			kv[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	if kv["Type"] != "Application" || kv["NoDisplay"] == "true" || kv["Hidden"] == "true" || kv["Exec"] == "" {
		return App{}, false
	}
	name := kv["Name"]
	for _, l := range locs {
		if v := kv["Name["+l+"]"]; v != "" {
			name = v
			break
		}
	}
	if name == "" {
		return App{}, false
	}
	a := App{Name: name, ID: id, Kind: "xdg", launch: kv["Exec"]}
	if args := execArgs(kv["Exec"]); len(args) > 0 {
		a.Program = args[0]
	}
	return a, true
}
