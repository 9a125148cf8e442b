package fsops

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// fixture is a directory tree for containment tests:
//
//	base/root/            a root
//	base/root/sub/a.txt
//	base/root/data/       denied (Hearth's data directory)
//	base/root/link_in  -> base/root/sub
//	base/root/link_out -> base/outside
//	base/root/dangling -> base/outside/missing
//	base/outside/secret.txt
//	base/rootlink      -> base/root (a root configured through a symlink)
type fixture struct {
	base, root, outside, data string
	roots                     Roots
	links                     bool // the symlinks exist (not under Wine)
}

func newFixture(t testing.TB, dir string) fixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	fx := fixture{base: base, root: filepath.Join(base, "root"), outside: filepath.Join(base, "outside")}
	fx.data = filepath.Join(fx.root, "data")
	for _, d := range []string{filepath.Join(fx.root, "sub"), fx.outside, fx.data} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, s := range map[string]string{
		filepath.Join(fx.root, "sub", "a.txt"):        "a",
		filepath.Join(fx.outside, "secret.txt"):       "secret",
		filepath.Join(fx.data, "hearth.db"):           "db",
		filepath.Join(fx.root, "sub", "PROGRA~1.TXT"): "literal tilde name",
	} {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fx.links = trySymlink(filepath.Join(fx.root, "sub"), filepath.Join(fx.root, "link_in")) &&
		trySymlink(fx.outside, filepath.Join(fx.root, "link_out")) &&
		trySymlink(filepath.Join(fx.outside, "missing"), filepath.Join(fx.root, "dangling")) &&
		trySymlink(fx.root, filepath.Join(base, "rootlink"))
	fx.roots, err = NewRoots([]string{fx.root}, []string{fx.data})
	if err != nil {
		t.Fatal(err)
	}
	return fx
}

// trySymlink makes a symlink and reports whether it really is one: Windows
// without developer mode refuses, and Wine reports success without one.
func trySymlink(target, link string) bool {
	if err := os.Symlink(target, link); err != nil {
		return false
	}
	info, err := os.Lstat(link)
	return err == nil && info.Mode()&os.ModeSymlink != 0
}

func ruleOf(err error) Rule {
	var ce *ContainmentError
	if errors.As(err, &ce) {
		return ce.Rule
	}
	return ""
}

func TestResolve(t *testing.T) {
	fx := newFixture(t, t.TempDir())
	j := filepath.Join
	tests := []struct {
		name string
		path string
		want string // resolved path when accepted
		rule Rule   // rule when refused
	}{
		{"root itself", fx.root, fx.root, ""},
		{"file under root", j(fx.root, "sub", "a.txt"), j(fx.root, "sub", "a.txt"), ""},
		{"new file under root", j(fx.root, "sub", "new.txt"), j(fx.root, "sub", "new.txt"), ""},
		{"new file in new dirs", j(fx.root, "x", "y", "z.txt"), j(fx.root, "x", "y", "z.txt"), ""},
		{"unclean but contained", fx.root + "//sub/./a.txt", j(fx.root, "sub", "a.txt"), ""},
		{"symlink inside root", j(fx.root, "link_in", "a.txt"), j(fx.root, "sub", "a.txt"), ""},
		{"new file through inside symlink", j(fx.root, "link_in", "b.txt"), j(fx.root, "sub", "b.txt"), ""},
		{"literal tilde name", j(fx.root, "sub", "PROGRA~1.TXT"), j(fx.root, "sub", "PROGRA~1.TXT"), ""},
		{"root reached through a symlink", j(fx.base, "rootlink", "sub", "a.txt"), j(fx.root, "sub", "a.txt"), ""},
		{"empty", "", "", RuleEmpty},
		{"relative", "sub/a.txt", "", RuleNotAbsolute},
		{"dot relative", "./a.txt", "", RuleNotAbsolute},
		{"NUL byte", j(fx.root, "a\x00b"), "", RuleNULByte},
		{"dot-dot raw escape", fx.root + "/../outside/secret.txt", "", RuleParentRef},
		{"dot-dot staying inside", fx.root + "/sub/../sub/a.txt", "", RuleParentRef},
		{"outside", j(fx.outside, "secret.txt"), "", RuleOutsideRoots},
		{"filesystem root", filepath.VolumeName(fx.base) + string(filepath.Separator), "", RuleOutsideRoots},
		{"sibling with root as name prefix", fx.root + "2/x", "", RuleOutsideRoots},
		{"symlink leaving root", j(fx.root, "link_out", "secret.txt"), "", RuleSymlinkEscape},
		{"new file through leaving symlink", j(fx.root, "link_out", "new.txt"), "", RuleSymlinkEscape},
		{"symlink leaving root, itself", j(fx.root, "link_out"), "", RuleSymlinkEscape},
		{"dangling symlink", j(fx.root, "dangling"), "", RuleDanglingSymlink},
		{"under dangling symlink", j(fx.root, "dangling", "x.txt"), "", RuleDanglingSymlink},
		{"denied data dir", fx.data, "", RuleDenied},
		{"denied data file", j(fx.data, "hearth.db"), "", RuleDenied},
		{"denied, new file", j(fx.data, "new.txt"), "", RuleDenied},
		{"temp file name", j(fx.root, "sub", ".hearth-tmp-123"), "", RuleTempName},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !fx.links && (strings.Contains(tt.path, "link") || strings.Contains(tt.path, "dangling")) {
				t.Skip("symlinks cannot be made here")
			}
			got, err := fx.roots.Resolve(tt.path)
			if tt.rule != "" {
				if r := ruleOf(err); r != tt.rule {
					t.Fatalf("Resolve(%q) = %q, %v; want rule %s", tt.path, got, err, tt.rule)
				}
				if !errors.Is(err, ErrContainment) {
					t.Errorf("error %v does not match ErrContainment", err)
				}
				if !strings.Contains(err.Error(), string(tt.rule)) {
					t.Errorf("error %q does not name the rule", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tt.path, err)
			}
			if got != tt.want {
				t.Fatalf("Resolve(%q) = %q, want %q", tt.path, got, tt.want)
			}
		})
	}
}

func TestResolveNoRoots(t *testing.T) {
	r, err := NewRoots(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Resolve(t.TempDir())
	if ruleOf(err) != RuleOutsideRoots || !strings.Contains(err.Error(), "no roots") {
		t.Fatalf("got %v, want outside_roots saying no roots are configured", err)
	}
}

func TestNewRootsRefusesBadRoots(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{"relative/dir", filepath.Join(dir, "missing"), file} {
		if _, err := NewRoots([]string{root}, nil); err == nil {
			t.Errorf("NewRoots(%q) accepted a bad root", root)
		}
	}
}

func TestWindowsPathProblem(t *testing.T) {
	tests := []struct {
		path string
		rule Rule
	}{
		{`C:\Users\me\file.txt`, ""},
		{`c:/Users/me/file.txt`, ""},
		{`D:\`, ""},
		{`C:\a\.\b.txt`, ""},
		{`C:\dir\file.tar.gz`, ""},
		{`C:\dir\console.txt`, ""},
		{`C:\dir\nullable`, ""},
		{`C:\dir\COM10`, ""},
		{`C:\dir\LPT`, ""},
		{`C:\dir\file~name.txt`, ""},
		{`C:\dir\ leading space.txt`, ""},
		{`\\?\C:\Users\me`, RuleVerbatim},
		{`//?/C:/Users/me`, RuleVerbatim},
		{`\??\C:\Users\me`, RuleVerbatim},
		{`\\.\PhysicalDrive0`, RuleDevice},
		{`\\.\C:\x`, RuleDevice},
		{`\\server\share\file.txt`, RuleUNC},
		{`//server/share/file.txt`, RuleUNC},
		{`\Users\me`, RuleNotAbsolute},
		{`Users\me`, RuleNotAbsolute},
		{`C:Users\me`, RuleNotAbsolute},
		{`C:`, RuleNotAbsolute},
		{`1:\x`, RuleNotAbsolute},
		{`C:\a\..\b`, RuleParentRef},
		{`C:\a\b.txt:secret`, RuleStream},
		{`C:\a\b.txt::$DATA`, RuleStream},
		{`C:\a\b.txt:secret:$DATA`, RuleStream},
		{`C:\a:b\c.txt`, RuleStream},
		{`C:\a\b?.txt`, RuleInvalidChar},
		{`C:\a\*.txt`, RuleInvalidChar},
		{`C:\a\<b>.txt`, RuleInvalidChar},
		{`C:\a\b|c`, RuleInvalidChar},
		{`C:\a\"b"`, RuleInvalidChar},
		{"C:\\a\\b\x01c", RuleInvalidChar},
		{`C:\a\b.txt.`, RuleTrailingDot},
		{`C:\a\b.txt `, RuleTrailingDot},
		{`C:\a\dir.\x`, RuleTrailingDot},
		{`C:\dir\CON`, RuleReservedName},
		{`C:\dir\con`, RuleReservedName},
		{`C:\dir\PRN.txt`, RuleReservedName},
		{`C:\dir\aux.tar.gz`, RuleReservedName},
		{`C:\dir\NUL`, RuleReservedName},
		{`C:\dir\nul.txt`, RuleReservedName},
		{`C:\dir\NUL .txt`, RuleReservedName},
		{`C:\dir\nul.`, RuleTrailingDot},
		{`C:\dir\COM1`, RuleReservedName},
		{`C:\dir\com9.log`, RuleReservedName},
		{`C:\dir\LPT1`, RuleReservedName},
		{`C:\dir\lpt9.txt`, RuleReservedName},
		{`C:\dir\COM¹`, RuleReservedName},
		{`C:\dir\CONIN$`, RuleReservedName},
		{`C:\dir\conout$.txt`, RuleReservedName},
		{`C:\CON\file.txt`, RuleReservedName},
	}
	for _, tt := range tests {
		rule, detail := windowsPathProblem(tt.path)
		if rule != tt.rule {
			t.Errorf("windowsPathProblem(%q) = %q (%s), want %q", tt.path, rule, detail, tt.rule)
		}
		if rule != "" && detail == "" {
			t.Errorf("windowsPathProblem(%q): no detail for %s", tt.path, rule)
		}
	}
}

func TestHasPathPrefix(t *testing.T) {
	tests := []struct {
		p, root string
		sep     byte
		fold    bool
		want    bool
	}{
		{"/a/b", "/a", '/', false, true},
		{"/a", "/a", '/', false, true},
		{"/ab", "/a", '/', false, false},
		{"/A/b", "/a", '/', false, false},
		{"/x", "/", '/', false, true},
		{`C:\Users\Me\x`, `c:\users\me`, '\\', true, true},
		{`C:\USERS\ME`, `c:\users\me`, '\\', true, true},
		{`C:\Users\Me2`, `C:\Users\Me`, '\\', true, false},
		{`C:\Users\Me\x`, `C:\Users\Me`, '\\', false, true},
		{`c:\users\me\x`, `C:\Users\Me`, '\\', false, false},
		{`C:\x`, `C:\`, '\\', true, true},
		{`D:\x`, `C:\`, '\\', true, false},
		{`C:\ÄRGER\x`, `c:\ärger`, '\\', true, true},
		// The Kelvin sign is not the letter k on NTFS, though Unicode folds them.
		{"C:\\\u212Ait", `C:\kit`, '\\', true, false},
	}
	for _, tt := range tests {
		if got := hasPathPrefix(tt.p, tt.root, tt.sep, tt.fold); got != tt.want {
			t.Errorf("hasPathPrefix(%q, %q, fold=%v) = %v, want %v", tt.p, tt.root, tt.fold, got, tt.want)
		}
	}
}

func TestCheckShortNames(t *testing.T) {
	// A fake file system: PROGRA~1 is the short name of "Program Files",
	// LITERA~1 is a file whose long name really is LITERA~1.
	longFor := func(p string) (string, error) {
		switch {
		case strings.HasSuffix(p, "PROGRA~1"), strings.HasSuffix(p, "progra~1"):
			return p[:len(p)-len("PROGRA~1")] + "Program Files", nil
		case strings.HasSuffix(p, "LITERA~1"):
			return p[:len(p)-len("LITERA~1")] + "litera~1", nil
		case strings.HasSuffix(p, "DOCUME~2.TXT"):
			return p[:len(p)-len("DOCUME~2.TXT")] + "document two.txt", nil
		}
		return "", os.ErrNotExist
	}
	base := string(filepath.Separator) + "base"
	j := func(parts ...string) string { return filepath.Join(append([]string{base}, parts...)...) }
	tests := []struct {
		path string
		fold bool
		bad  string
	}{
		{j("PROGRA~1", "x"), true, "PROGRA~1"},
		{j("progra~1"), true, "progra~1"},
		{j("dir", "DOCUME~2.TXT"), true, "DOCUME~2.TXT"},
		{j("LITERA~1", "x"), true, ""},          // resolves to itself (case folded)
		{j("LITERA~1", "x"), false, "LITERA~1"}, // case-sensitive: not itself
		{j("NEWFIL~1.TXT"), true, ""},           // does not exist: aliases nothing
		{j("Program Files", "x"), true, ""},
		{j("a~b", "c~", "~1"), true, ""},
	}
	for _, tt := range tests {
		if got := checkShortNames(tt.path, longFor, tt.fold); got != tt.bad {
			t.Errorf("checkShortNames(%q, fold=%v) = %q, want %q", tt.path, tt.fold, got, tt.bad)
		}
	}
	for c, want := range map[string]bool{
		"PROGRA~1": true, "AB12~34.TXT": true, "PR1D3A~1": true, "A_RA~OFN": true, "a~b": true, "~1": true,
		"x~": false, "x~.txt": false, "plain.txt": false, "LONGNAME~1": false, "AB~1.HTML": false, "A~1.B.C": false,
	} {
		if got := looksShortName(c); got != want {
			t.Errorf("looksShortName(%q) = %v, want %v", c, got, want)
		}
	}
}

func TestResolveShortNameRule(t *testing.T) {
	fx := newFixture(t, t.TempDir())
	r := fx.roots
	r.longFor = func(p string) (string, error) {
		if filepath.Base(p) == "SUB~1" {
			return filepath.Join(filepath.Dir(p), "sub"), nil
		}
		return "", os.ErrNotExist
	}
	if err := os.Mkdir(filepath.Join(fx.root, "SUB~1"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := r.Resolve(filepath.Join(fx.root, "SUB~1", "a.txt"))
	if ruleOf(err) != RuleShortName {
		t.Fatalf("got %v, want %s", err, RuleShortName)
	}
}

// TestResolveWindows runs Resolve itself with the Windows rules (on
// Windows, and under Wine in scripts/test-windows).
func TestResolveWindows(t *testing.T) {
	if runtime.GOOS != "windows" {
		t.Skip("Windows rules; windowsPathProblem and hasPathPrefix cover them everywhere")
	}
	fx := newFixture(t, t.TempDir())
	a := filepath.Join(fx.root, "sub", "a.txt")
	got, err := fx.roots.Resolve(strings.ToUpper(fx.root) + `\SUB\A.TXT`)
	if err != nil || !strings.EqualFold(got, a) {
		t.Fatalf("case-insensitive root: %q, %v", got, err)
	}
	got, err = fx.roots.Resolve(strings.ReplaceAll(a, `\`, "/"))
	if err != nil || !strings.EqualFold(got, a) {
		t.Fatalf("forward slashes: %q, %v", got, err)
	}
	vol := filepath.VolumeName(fx.root)
	tests := []struct {
		path string
		rule Rule
	}{
		{a + ":hidden", RuleStream},
		{a + "::$DATA", RuleStream},
		{filepath.Join(fx.root, "sub", "NUL"), RuleReservedName},
		{filepath.Join(fx.root, "sub", "com1.txt"), RuleReservedName},
		{filepath.Join(fx.root, "sub", "CON"), RuleReservedName},
		{a + ".", RuleTrailingDot},
		{a + " ", RuleTrailingDot},
		{`\\?\` + a, RuleVerbatim},
		{`\\.\` + a, RuleDevice},
		{`\\localhost\` + strings.TrimSuffix(vol, ":") + `$` + strings.TrimPrefix(a, vol), RuleUNC},
		{strings.TrimPrefix(a, vol), RuleNotAbsolute},
		{vol + "relative.txt", RuleNotAbsolute},
		{filepath.Join(fx.data, "hearth.db"), RuleDenied},
		{strings.ToUpper(filepath.Join(fx.data, "hearth.db")), RuleDenied},
		{filepath.Join(fx.outside, "secret.txt"), RuleOutsideRoots},
	}
	for _, tt := range tests {
		if _, err := fx.roots.Resolve(tt.path); ruleOf(err) != tt.rule {
			t.Errorf("Resolve(%q) = %v, want %s", tt.path, err, tt.rule)
		}
	}
}

// FuzzResolve checks the containment promise: whatever the path, an
// accepted one resolves under the root, outside the denied directory, and
// its real path (re-resolved independently) is itself.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{
		"root/sub/a.txt", "root/../outside/secret.txt", "root/link_out/secret.txt",
		"root/link_in/a.txt", "outside/secret.txt", "root/data/hearth.db", "root/dangling/x",
		"rootlink/sub/a.txt", "/etc/passwd", "root//sub/./new.txt", "root/sub/..", "root/link_in/../../outside",
		"root/.hearth-tmp-1", "root2/x", "",
	} {
		f.Add(s)
	}
	fx := newFixture(f, f.TempDir())
	f.Fuzz(func(t *testing.T, s string) {
		p := s
		if !strings.HasPrefix(s, "/") {
			p = fx.base + "/" + s
		}
		got, err := fx.roots.Resolve(p)
		if err != nil {
			var ce *ContainmentError
			if errors.As(err, &ce) && ce.Rule == "" {
				t.Fatalf("containment error without a rule: %v", err)
			}
			return
		}
		if !hasPathPrefix(got, fx.root, filepath.Separator, false) {
			t.Fatalf("Resolve(%q) = %q, outside root %q", p, got, fx.root)
		}
		if hasPathPrefix(got, fx.data, filepath.Separator, false) {
			t.Fatalf("Resolve(%q) = %q, inside the denied %q", p, got, fx.data)
		}
		if real, err := realPath(got); err != nil || real != got {
			t.Fatalf("Resolve(%q) = %q, but its real path is %q (%v)", p, got, real, err)
		}
		if strings.Contains(got, "\x00") || hasParentRef(got) {
			t.Fatalf("Resolve(%q) = %q", p, got)
		}
	})
}

// TestPathMadeDuringTheWalkIsNotALink: a file that a concurrent write
// creates between the walk finding the path missing and the look at the
// path itself is resolved as the file it is, not refused as a dangling
// link (seen under Wine: one of eight writers of a new file was refused).
func TestPathMadeDuringTheWalkIsNotALink(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "made.txt")
	made := 0
	setSeams(t, seams{look: func(p string) {
		if p == target && made == 0 {
			made++
			if err := os.WriteFile(target, []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}})
	got, err := realPath(target)
	if err != nil || made != 1 {
		t.Fatalf("realPath of a file made during the walk = %q, %v (made %d)", got, err, made)
	}
	if want, _ := filepath.EvalSymlinks(target); got != want {
		t.Fatalf("realPath = %q, want %q", got, want)
	}
	// A real dangling link is still refused (where links can be made).
	link := filepath.Join(dir, "dangling")
	if !trySymlink(filepath.Join(dir, "missing"), link) {
		return
	}
	if _, err := realPath(link); ruleOf(err) != RuleDanglingSymlink {
		t.Fatalf("realPath of a dangling link: %v", err)
	}
}
