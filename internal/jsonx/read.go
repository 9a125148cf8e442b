package jsonx

import "bytes"

// JSON text is read here without decoding it: where a value ends, and the
// members of an object, as byte ranges of the input. It is what the MCP
// fast path splits the small objects inside a call's _meta with (the
// request's own members come from Scan's records) and what the one-pass
// decode of a call's arguments splits them with; both keep their own
// rules on top (a bound on members, repeated keys, UTF-8) and hand
// anything they do not accept to encoding/json.

// SkipSpace returns the index of the first byte at or after i that is not
// JSON whitespace.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// ValueEnd returns the length of the JSON value at the start of b, or 0
// when it cannot tell. With valid false, b need not be valid JSON (the
// caller checks the value, json.Unmarshal does) and must be compact:
// whitespace outside a string means it cannot tell. With valid true, b is
// part of valid JSON: a string, an object or array (whitespace and all),
// or a literal or number, which ends at whitespace, ',', '}', ']' or the
// end.
func ValueEnd(b []byte, valid bool) int {
	depth := 0
	inString := false
	for i := 0; i < len(b); i++ {
		if inString {
			// The next quote ends the string unless a backslash comes
			// before it: both found a run at a time.
			q := bytes.IndexByte(b[i:], '"')
			if q < 0 {
				return 0
			}
			if e := bytes.IndexByte(b[i:i+q], '\\'); e >= 0 {
				i += e + 1 // the backslash; the loop steps over what it escapes
				continue
			}
			i += q
			inString = false
			if depth == 0 {
				return i + 1
			}
			continue
		}
		c := b[i]
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i
			}
			if depth--; depth == 0 {
				return i + 1
			}
		case ',':
			if depth == 0 {
				return i
			}
		case ' ', '\t', '\n', '\r':
			if !valid {
				return 0
			}
			if depth == 0 {
				return i
			}
		}
	}
	if valid && depth == 0 && !inString {
		return len(b)
	}
	return 0
}

// Members walks the members of one JSON object:
//
//	it := jsonx.WalkObject(raw)
//	for it.Next() {
//		use(it.Key(), it.Value())
//	}
//	if !it.OK() {
//		// not one plain object: decode raw another way
//	}
//
// raw must be valid JSON (json.Valid). The walk stops, and OK is false,
// when raw is not an object (with whitespace around it at most) or a key
// is written with an escape (its bytes would not be its text). A caller
// may stop early; OK is then false too.
type Members struct {
	raw      []byte
	i        int // where the next member (or the end) is looked for; -1 before the '{'
	key, val []byte
	done, ok bool
}

// WalkObject starts a walk of the members of raw.
func WalkObject(raw []byte) Members { return Members{raw: raw, i: -1} }

// Next moves to the next member and reports whether there is one.
func (m *Members) Next() bool {
	if m.done {
		return false
	}
	raw, i := m.raw, m.i
	if i < 0 {
		i = SkipSpace(raw, 0)
		if i >= len(raw) || raw[i] != '{' {
			return m.fail()
		}
		if i = SkipSpace(raw, i+1); i < len(raw) && raw[i] == '}' {
			return m.end(i + 1)
		}
	} else {
		if i = SkipSpace(raw, i); i >= len(raw) {
			return m.fail()
		}
		switch raw[i] {
		case ',':
			i = SkipSpace(raw, i+1)
		case '}':
			return m.end(i + 1)
		default:
			return m.fail()
		}
	}
	if i >= len(raw) || raw[i] != '"' {
		return m.fail()
	}
	end := bytes.IndexByte(raw[i+1:], '"')
	if end < 0 {
		return m.fail()
	}
	key := raw[i+1 : i+1+end]
	if bytes.IndexByte(key, '\\') >= 0 {
		return m.fail()
	}
	if i = SkipSpace(raw, i+2+end); i >= len(raw) || raw[i] != ':' {
		return m.fail()
	}
	i = SkipSpace(raw, i+1)
	n := ValueEnd(raw[i:], true)
	if n <= 0 {
		return m.fail()
	}
	m.key, m.val, m.i = key, raw[i:i+n], i+n
	return true
}

// Key is the current member's key: the bytes between its quotes.
func (m *Members) Key() []byte { return m.key }

// Value is the current member's value, as JSON text.
func (m *Members) Value() []byte { return m.val }

// OK reports, once Next has returned false, whether the walk read the
// whole object.
func (m *Members) OK() bool { return m.done && m.ok }

func (m *Members) fail() bool {
	m.done, m.ok = true, false
	return false
}

func (m *Members) end(i int) bool {
	m.done, m.ok = true, SkipSpace(m.raw, i) == len(m.raw)
	return false
}
