package jsonx

import (
	"time"
	"unicode/utf8"
)

// JSON is written here as encoding/json's Marshal writes it, byte for
// byte, for the few shapes a read call answers with on every call (a
// string, a time, a flat result struct), without its reflection. Whatever
// it does not know is left to encoding/json; the tests hold it to
// Marshal's output.

// Appender is a value that appends its own JSON encoding, exactly what
// json.Marshal gives for it, to dst. ok is false when it cannot (the
// caller then marshals it). A struct that embeds an Appender inherits its
// method and would be written as the embedded value alone: implement it
// only on a type no other type embeds, and hold it to Marshal in a test.
type Appender interface {
	AppendJSON(dst []byte) (out []byte, ok bool)
}

const hexDigits = "0123456789abcdef"

// plainASCII reports the ASCII bytes Marshal writes as they are:
// printable, and neither a quote, a backslash nor one of the characters it
// escapes for HTML.
var plainASCII = func() (t [utf8.RuneSelf]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
	}
	return t
}()

// AppendString appends s as a JSON string as Marshal writes it: HTML's
// <, > and & escaped, invalid UTF-8 replaced by U+FFFD, U+2028 and U+2029
// escaped.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if plainASCII[b] {
				i++
				continue
			}
			dst = AppendEscape(append(dst, s[start:i]...), b)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// AppendEscape appends the escape Marshal writes for the ASCII byte b
// inside a string: \" and \\, the short forms of \b \f \n \r \t, and
// \u00XX for any other (control bytes, and <, > and & as Marshal escapes
// them). Which bytes to escape is the caller's to say.
func AppendEscape(dst []byte, b byte) []byte {
	switch b {
	case '"', '\\':
		return append(dst, '\\', b)
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	return append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xf])
}

// AppendTime appends t as Marshal writes a time.Time (RFC 3339 with
// nanoseconds, quoted). ok is false where Marshal fails: a year outside
// 0–9999, or a zone offset of a day or more.
func AppendTime(dst []byte, t time.Time) ([]byte, bool) {
	if y := t.Year(); y < 0 || y > 9999 {
		return dst, false
	}
	if _, off := t.Zone(); off <= -24*3600 || off >= 24*3600 {
		return dst, false
	}
	dst = append(dst, '"')
	dst = t.AppendFormat(dst, time.RFC3339Nano)
	return append(dst, '"'), true
}
