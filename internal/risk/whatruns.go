package risk

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// What a write to a persistence place would run, read from the content
// it writes, for the headline of the operator's card: the Exec= of a
// .desktop file, the command of a service, a cron line or a scheduled
// task, the target of a .lnk shortcut, the first command of a shell
// start-up file or a git hook. It reads at most whatRunsScan bytes and
// says at most whatRunsMax characters; "" when it cannot tell.

const (
	whatRunsScan = 64 << 10
	whatRunsMax  = 160
)

// WhatRuns says what the file at path would run with content, in at most
// a line; "" when it cannot tell.
func WhatRuns(path string, content []byte) string {
	if len(content) > whatRunsScan {
		content = content[:whatRunsScan]
	}
	p := strings.ToLower(strings.ReplaceAll(path, `\`, "/"))
	var s string
	switch {
	case strings.HasSuffix(p, ".lnk"):
		s = lnkTarget(content)
	case strings.HasSuffix(p, ".desktop"):
		s = keyValue(content, "Exec=")
	case strings.HasSuffix(p, ".service") || strings.Contains(p, "/systemd/"):
		s = keyValue(content, "ExecStart=")
		if s == "" {
			s = keyValue(content, "Exec=")
		}
	case bytes.Contains(content, []byte("<Command>")):
		s = strings.TrimSpace(xmlText(content, "Command") + " " + xmlText(content, "Arguments"))
	case strings.Contains(p, "/cron"):
		s = cronCommand(content, strings.HasPrefix(p, "/etc/"))
	default:
		s = keyValue(content, "exec_always ")
		if s == "" {
			s = keyValue(content, "exec ")
		}
		if s == "" {
			s = firstCommand(content)
		}
	}
	return bound(s)
}

// WhatRunsAdded says what a change of the file at path from old to new
// adds that would run, in at most a line: what WhatRuns reads from the
// lines new has and old had not, so that a start-up file's card leads with
// the command a change appends rather than the file's first line, which
// was there already. When old is nil (the file does not exist: the whole
// file is new) or is not text (a .lnk shortcut), it is WhatRuns of new.
// "" when the change adds nothing it can tell runs.
func WhatRunsAdded(path string, old, new []byte) string {
	if old == nil || strings.HasSuffix(strings.ToLower(path), ".lnk") || !utf8.Valid(old) || !utf8.Valid(new) {
		return WhatRuns(path, new)
	}
	if len(old) > whatRunsScan {
		old = old[:whatRunsScan]
	}
	had := map[string]int{}
	lines(old, func(l string) bool {
		had[l]++
		return true
	})
	var added []byte
	lines(new, func(l string) bool {
		if had[l] > 0 {
			had[l]--
			return true
		}
		added = append(append(added, l...), '\n')
		return true
	})
	if len(added) == 0 {
		return ""
	}
	return WhatRuns(path, added)
}

// bound makes s one line of at most whatRunsMax characters.
func bound(s string) string {
	s = strings.Join(strings.Fields(strings.ToValidUTF8(s, "")), " ")
	if utf8.RuneCountInString(s) <= whatRunsMax {
		return s
	}
	r := []rune(s)
	return string(r[:whatRunsMax-1]) + "…"
}

// lines calls f with each line of content, trimmed, until it returns
// false.
func lines(content []byte, f func(string) bool) {
	sc := bufio.NewScanner(bytes.NewReader(content))
	sc.Buffer(make([]byte, 0, 4096), whatRunsScan)
	for sc.Scan() {
		if !f(strings.TrimSpace(sc.Text())) {
			return
		}
	}
}

// keyValue is the value of the first line starting with key.
func keyValue(content []byte, key string) string {
	var out string
	lines(content, func(l string) bool {
		if v, ok := strings.CutPrefix(l, key); ok {
			out = strings.TrimSpace(v)
			return false
		}
		return true
	})
	return out
}

// firstCommand is the first line that is not empty, not a comment and not
// the #! line.
func firstCommand(content []byte) string {
	var out string
	lines(content, func(l string) bool {
		if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "::") || strings.HasPrefix(strings.ToLower(l), "rem ") {
			return true
		}
		out = l
		return false
	})
	return out
}

// cronCommand is the command of the first cron line: after its five time
// fields (or an @word), and after the user field in the system's files.
func cronCommand(content []byte, system bool) string {
	var out string
	lines(content, func(l string) bool {
		f := strings.Fields(l)
		if len(f) == 0 || strings.HasPrefix(l, "#") || strings.Contains(f[0], "=") {
			return true
		}
		skip := 5
		if strings.HasPrefix(f[0], "@") {
			skip = 1
		}
		if system {
			skip++
		}
		if len(f) > skip {
			out = strings.Join(f[skip:], " ")
		}
		return false
	})
	return out
}

// xmlText is the text of the first element named name.
func xmlText(content []byte, name string) string {
	s := string(content)
	i := strings.Index(s, "<"+name+">")
	if i < 0 {
		return ""
	}
	s = s[i+len(name)+2:]
	j := strings.Index(s, "</"+name+">")
	if j < 0 {
		return ""
	}
	return strings.NewReplacer("&quot;", `"`, "&amp;", "&", "&lt;", "<", "&gt;", ">", "&apos;", "'").Replace(s[:j])
}

// lnkTarget reads a Shell Link (.lnk) file's target and its arguments
// (ShellLink) as one line; "" when the content is not a shell link it
// can read.
func lnkTarget(b []byte) string {
	target, args, ok := ShellLink(b)
	if !ok {
		return ""
	}
	return strings.TrimSpace(target + " " + args)
}

// ShellLink reads a Shell Link (.lnk) file's target — the local base
// path of its link info, else its relative path — and its arguments;
// ok is false when the content is not a shell link it can read. The
// startup index (internal/startup) reads a Startup folder's shortcuts
// with it.
func ShellLink(b []byte) (target, args string, ok bool) {
	const (
		hasIDList   = 0x1
		hasLinkInfo = 0x2
		hasName     = 0x4
		hasRelPath  = 0x8
		hasWorkDir  = 0x10
		hasArgs     = 0x20
		isUnicode   = 0x80
	)
	if len(b) < 0x4c || binary.LittleEndian.Uint32(b) != 0x4c {
		return "", "", false
	}
	flags := binary.LittleEndian.Uint32(b[0x14:])
	at := 0x4c
	if flags&hasIDList != 0 {
		if len(b) < at+2 {
			return "", "", false
		}
		at += 2 + int(binary.LittleEndian.Uint16(b[at:]))
	}
	if flags&hasLinkInfo != 0 {
		if len(b) < at+28 {
			return "", "", false
		}
		size := int(binary.LittleEndian.Uint32(b[at:]))
		if binary.LittleEndian.Uint32(b[at+8:])&1 != 0 {
			off := at + int(binary.LittleEndian.Uint32(b[at+16:]))
			if off < len(b) {
				if end := bytes.IndexByte(b[off:], 0); end >= 0 {
					target = string(b[off : off+end])
				}
			}
		}
		at += size
	}
	str := func() (string, bool) {
		if at < 0 || len(b) < at+2 {
			return "", false
		}
		n := int(binary.LittleEndian.Uint16(b[at:]))
		at += 2
		if flags&isUnicode == 0 {
			if len(b) < at+n {
				return "", false
			}
			s := string(b[at : at+n])
			at += n
			return s, true
		}
		if len(b) < at+2*n {
			return "", false
		}
		u := make([]uint16, n)
		for i := range u {
			u[i] = binary.LittleEndian.Uint16(b[at+2*i:])
		}
		at += 2 * n
		return string(utf16.Decode(u)), true
	}
	var rel string
	for _, f := range []uint32{hasName, hasRelPath, hasWorkDir, hasArgs} {
		if flags&f == 0 {
			continue
		}
		s, ok := str()
		if !ok {
			break
		}
		switch f {
		case hasRelPath:
			rel = s
		case hasArgs:
			args = s
		}
	}
	if target == "" {
		target = rel
	}
	if target == "" {
		return "", "", false
	}
	return target, args, true
}
