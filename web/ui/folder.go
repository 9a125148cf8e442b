package ui

import (
	"os"
	"runtime"
	"strings"

	"github.com/hearth-dev/hearth/internal/risk"
)

// Folders names folders as the person knows them, on the panel's main
// path: a known folder by its name (Downloads, Documents\Invoices, even
// where Windows moved it, into OneDrive or onto another drive), else the
// path below the home folder, else a short form of the path (the full one
// is under Details). It works on the platform's paths, or on Windows
// paths anywhere (Windows), so Windows' forms are tested on every system.
type Folders struct {
	// Windows selects Windows paths: '\' and '/' both separate, a drive
	// letter starts an absolute path, and names that differ only by case
	// are the same.
	Windows bool
	// Home is the person's home folder; "" for none.
	Home string
	// Known are the known folders, where they are now.
	Known []KnownFolder
}

// KnownFolder is a folder the person knows by a name (Documents) wherever
// it is.
type KnownFolder struct{ Name, Path string }

// knownFolderIDs are the person's known folders by the name Windows shows
// them under and the name the known-folder lookup answers
// (risk.KnownFolderEnv).
var knownFolderIDs = [][2]string{
	{"Desktop", "FOLDERID_Desktop"},
	{"Documents", "FOLDERID_Documents"},
	{"Downloads", "FOLDERID_Downloads"},
	{"Pictures", "FOLDERID_Pictures"},
	{"Music", "FOLDERID_Music"},
	{"Videos", "FOLDERID_Videos"},
}

// ThisPC is Folders of this computer: its home folder and, on Windows,
// its known folders where Windows says they are.
func ThisPC() Folders {
	f := Folders{Windows: runtime.GOOS == "windows"}
	f.Home, _ = os.UserHomeDir()
	env := risk.KnownFolderEnv(os.Getenv)
	for _, k := range knownFolderIDs {
		if p := env(k[1]); p != "" {
			f.Known = append(f.Known, KnownFolder{Name: k[0], Path: p})
		}
	}
	return f
}

// Sep is the separator the folders' names are written with.
func (f Folders) Sep() string {
	if f.Windows {
		return `\`
	}
	return "/"
}

// clean drops the prefix of a Windows long path (\\?\), turns '/' into
// '\' on Windows, and resolves the path lexically as the file operations
// do (filepath.Clean): "." and repeated separators go, ".." takes off the
// name before it (never the root), and trailing separators go (a root
// keeps its own). So a folder is named by where the call really reaches,
// never by a prefix that "..\.." walks out of.
func (f Folders) clean(p string) string {
	if p == "" {
		return ""
	}
	if f.Windows {
		p = strings.ReplaceAll(p, "/", `\`)
		if rest, ok := strings.CutPrefix(p, `\\?\UNC\`); ok {
			p = `\\` + rest
		} else {
			p = strings.TrimPrefix(p, `\\?\`)
		}
	}
	sep := f.Sep()
	root := f.root(p)
	var names []string
	for _, n := range strings.Split(p[len(root):], sep) {
		switch {
		case n == "" || n == ".":
		case n != "..":
			names = append(names, n)
		case len(names) > 0 && names[len(names)-1] != "..":
			names = names[:len(names)-1]
		case root == "":
			// A relative path keeps the ".." it starts with.
			names = append(names, n)
		}
	}
	if root != "" && len(names) == 0 {
		return root
	}
	if len(names) == 0 {
		return "."
	}
	return root + strings.Join(names, sep)
}

// Path is p as the file operations resolve it: its separators, "." and
// ".." resolved, no trailing separator.
func (f Folders) Path(p string) string { return f.clean(p) }

// root is the root p starts with: "/", `C:\`, `\\server\share\`, or "".
func (f Folders) root(p string) string {
	if !f.Windows {
		if strings.HasPrefix(p, "/") {
			return "/"
		}
		return ""
	}
	if len(p) >= 3 && p[1] == ':' && p[2] == '\\' {
		return p[:3]
	}
	if len(p) >= 2 && p[1] == ':' {
		return p[:2]
	}
	if rest, ok := strings.CutPrefix(p, `\\`); ok {
		parts := strings.SplitN(rest, `\`, 3)
		if len(parts) >= 2 {
			return `\\` + parts[0] + `\` + parts[1] + `\`
		}
	}
	return ""
}

// below returns p's path below folder, and whether p is folder ("") or
// in it.
func (f Folders) below(p, folder string) (string, bool) {
	folder = f.clean(folder)
	if folder == "" {
		return "", false
	}
	same := func(a, b string) bool { return a == b || f.Windows && strings.EqualFold(a, b) }
	if same(p, folder) {
		return "", true
	}
	prefix := folder
	if !strings.HasSuffix(prefix, f.Sep()) {
		prefix += f.Sep()
	}
	if len(p) > len(prefix) && same(p[:len(prefix)], prefix) {
		return p[len(prefix):], true
	}
	return "", false
}

// Name names the folder d as the person knows it: "Downloads",
// "Documents\Invoices", "your home folder", or a short form of a path
// outside it ("D:\…\2024\Invoices").
func (f Folders) Name(d string) string {
	d = f.clean(d)
	best, bestLen := "", -1
	for _, k := range f.Known {
		if rest, ok := f.below(d, k.Path); ok && len(k.Path) > bestLen {
			best, bestLen = k.Name, len(k.Path)
			if rest != "" {
				best += f.Sep() + rest
			}
		}
	}
	if bestLen >= 0 {
		return best
	}
	if rest, ok := f.below(d, f.Home); ok {
		if rest == "" {
			return "your home folder"
		}
		return rest
	}
	root := f.root(d)
	parts := strings.Split(strings.TrimPrefix(d, root), f.Sep())
	if len(parts) <= 3 {
		return d
	}
	return root + "…" + f.Sep() + strings.Join(parts[len(parts)-2:], f.Sep())
}

// Dir is the folder p is in.
func (f Folders) Dir(p string) string {
	p = f.clean(p)
	root := f.root(p)
	i := strings.LastIndex(p, f.Sep())
	if i < len(root) {
		return root
	}
	return p[:i]
}

// Base is the last name of p.
func (f Folders) Base(p string) string {
	p = f.clean(p)
	if i := strings.LastIndex(p, f.Sep()); i >= 0 && len(p) > len(f.root(p)) {
		return p[i+1:]
	}
	return p
}

// Same reports whether a and b name the same path.
func (f Folders) Same(a, b string) bool {
	rest, ok := f.below(f.clean(a), b)
	return ok && rest == ""
}

// Common is the deepest folder every one of dirs is in ("" when none is),
// and whether they are all that one folder.
func (f Folders) Common(dirs []string) (string, bool) {
	if len(dirs) == 0 {
		return "", false
	}
	common, same := f.clean(dirs[0]), true
	for _, d := range dirs[1:] {
		d = f.clean(d)
		if !f.Same(d, common) {
			same = false
		}
		for common != "" {
			if _, ok := f.below(d, common); ok {
				break
			}
			up := f.Dir(common)
			if up == common {
				common = ""
				break
			}
			common = up
		}
	}
	return common, same
}
