package jsonx

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// Plain JSON is read and written here without encoding/json: a string
// with nothing to decode, a key or a value that json.Marshal writes as it
// is. The primitive package decodes a call's input with them; their tests
// and primitive's hold them to encoding/json's answers.

// PlainString returns the text of raw when it is a JSON string that
// encoding/json decodes to its bytes unchanged: quoted, no escape, no
// control character, valid UTF-8.
func PlainString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	in := raw[1 : len(raw)-1]
	for _, c := range in {
		if c < 0x20 || c == '"' || c == '\\' {
			return "", false
		}
	}
	if !utf8.Valid(in) {
		return "", false
	}
	return string(in), true
}

// Unquote decodes the JSON string raw: directly when plain, else with
// encoding/json (whose error it returns). The result is returned, not
// written through a pointer, so that a plain string costs no allocation.
func Unquote(raw []byte) (string, error) {
	if p, ok := PlainString(raw); ok {
		return p, nil
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

// PlainKey reports whether json.Marshal writes k as is between quotes.
func PlainKey(k string) bool {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// CompactValue reports whether json.Marshal of the valid JSON value v (as
// a json.RawMessage) writes v unchanged: no whitespace outside strings, no
// <, > or &, no U+2028 or U+2029.
func CompactValue(v []byte) bool {
	if len(v) == 0 || bytes.Contains(v, []byte("\u2028")) || bytes.Contains(v, []byte("\u2029")) {
		return false
	}
	inString := false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '<' || c == '>' || c == '&':
			return false
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case !inString && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return false
		}
	}
	return true
}
