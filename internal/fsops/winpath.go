package fsops

import (
	"strings"
)

// windowsPathProblem checks p against the Windows path rules that real-path
// resolution alone does not cover, and returns the rule broken and a detail
// for the model, or "" when p is acceptable. It is a pure function so the
// rules are tested on every platform; Resolve applies it on Windows only.
//
// Both separators count, as Windows treats '/' like '\'. The only colon
// allowed is the drive colon of "C:\": every other colon names an NTFS
// alternate data stream.
func windowsPathProblem(p string) (Rule, string) {
	isSep := func(c byte) bool { return c == '\\' || c == '/' }
	if len(p) >= 4 && isSep(p[0]) && isSep(p[1]) && p[2] == '?' && isSep(p[3]) ||
		len(p) >= 4 && isSep(p[0]) && p[1] == '?' && p[2] == '?' && isSep(p[3]) {
		return RuleVerbatim, `\\?\ and \??\ paths bypass Windows path normalization; give a plain drive path like C:\dir\file`
	}
	if len(p) >= 4 && isSep(p[0]) && isSep(p[1]) && p[2] == '.' && isSep(p[3]) {
		return RuleDevice, `\\.\ names a device, not a file`
	}
	if len(p) >= 2 && isSep(p[0]) && isSep(p[1]) {
		return RuleUNC, `network (UNC) paths are not accepted; give a local drive path`
	}
	rest := p
	if len(p) >= 2 && isASCIILetter(p[0]) && p[1] == ':' {
		rest = p[2:]
		if rest == "" || !isSep(rest[0]) {
			return RuleNotAbsolute, `a drive letter must be followed by a backslash (C:\...), not a drive-relative path`
		}
	} else {
		return RuleNotAbsolute, `give an absolute path with a drive letter, like C:\dir\file`
	}
	for _, c := range splitComponents(rest, isSep) {
		switch {
		case c == ".":
			continue
		case c == "..":
			return RuleParentRef, "'..' components are not accepted; give the path without them"
		case strings.IndexByte(c, ':') >= 0:
			return RuleStream, "component " + quote(c) + " names an NTFS alternate data stream; only the drive colon is allowed"
		case strings.ContainsFunc(c, invalidWindowsRune):
			return RuleInvalidChar, "component " + quote(c) + ` contains a character Windows does not allow in names (< > " | ? * or a control character)`
		case strings.HasSuffix(c, ".") || strings.HasSuffix(c, " "):
			return RuleTrailingDot, "component " + quote(c) + " ends with a dot or space, which Windows strips, so it would name another file"
		case isReservedDeviceName(c):
			return RuleReservedName, "component " + quote(c) + " is a reserved device name on Windows"
		}
	}
	return "", ""
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func invalidWindowsRune(r rune) bool {
	return r < 0x20 || strings.ContainsRune(`<>"|?*`, r)
}

// isReservedDeviceName reports whether a component names a DOS device: CON,
// PRN, AUX, NUL, CONIN$, CONOUT$, COM0-9 and LPT0-9 (also with the
// superscript digits ¹²³), in any case, with any extension, and with
// trailing spaces before the extension ("nul .txt").
func isReservedDeviceName(c string) bool {
	base := c
	if i := strings.IndexByte(base, '.'); i >= 0 {
		base = base[:i]
	}
	base = strings.ToUpper(strings.TrimRight(base, " "))
	switch base {
	case "CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$":
		return true
	}
	if len(base) >= 4 && (strings.HasPrefix(base, "COM") || strings.HasPrefix(base, "LPT")) {
		switch base[3:] {
		case "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "¹", "²", "³":
			return true
		}
	}
	return false
}

func quote(s string) string { return `"` + s + `"` }
