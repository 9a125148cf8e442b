package session

import (
	"strings"
	"unicode/utf8"
)

// clean turns terminal output into text a model reads: escape sequences
// (colours, cursor movement, window titles) removed, CR LF as LF, other
// control characters but tab and lone CR dropped, invalid UTF-8 replaced.
// An escape sequence cut off at the end of b is dropped.
func clean(b []byte) string {
	var out strings.Builder
	out.Grow(len(b))
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == 0x1b:
			i = skipEscape(b, i)
		case c == '\r' && i+1 < len(b) && b[i+1] == '\n':
			i++
		case c == '\n' || c == '\t' || c == '\r':
			out.WriteByte(c)
			i++
		case c < 0x20 || c == 0x7f:
			i++
		case c < utf8.RuneSelf:
			out.WriteByte(c)
			i++
		default:
			r, n := utf8.DecodeRune(b[i:])
			out.WriteRune(r) // utf8.RuneError for an invalid byte
			i += n
		}
	}
	return out.String()
}

// skipEscape returns the index after the escape sequence starting at b[i]
// (ESC): a CSI (ESC [ … final byte), an OSC or string sequence (ESC ] P _ ^
// … BEL or ESC \), or ESC and one character.
func skipEscape(b []byte, i int) int {
	if i+1 >= len(b) {
		return len(b)
	}
	switch b[i+1] {
	case '[':
		for j := i + 2; j < len(b); j++ {
			if b[j] >= 0x40 && b[j] <= 0x7e {
				return j + 1
			}
		}
		return len(b)
	case ']', 'P', '_', '^':
		for j := i + 2; j < len(b); j++ {
			if b[j] == 0x07 {
				return j + 1
			}
			if b[j] == 0x1b && j+1 < len(b) && b[j+1] == '\\' {
				return j + 2
			}
		}
		return len(b)
	case '(', ')', '*', '+', '#', '%':
		return min(i+3, len(b)) // charset designation: ESC ( B
	}
	return i + 2
}
