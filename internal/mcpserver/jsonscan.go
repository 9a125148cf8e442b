package mcpserver

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxJSONDepth bounds how deeply a request's JSON may nest. Hearth's own
// inputs need a handful of levels; the go-sdk's decoder refuses deep
// nesting in plain text, so Hearth refuses it first, as a JSON-RPC error.
const MaxJSONDepth = 128

// scanResult is what scanJSON learns about a request body.
type scanResult struct {
	// TooDeep is set when the nesting passes MaxJSONDepth.
	TooDeep bool
	// BadPath is the path of the first string (a key or a value) that is
	// not valid UTF-8 or holds an escaped lone surrogate (\ud800): Go's
	// decoder would silently turn it into U+FFFD. Nil when there is none.
	BadPath []string
}

// scanJSON walks data, which must already be valid JSON.
func scanJSON(data []byte) scanResult {
	s := &scanner{data: data}
	s.path = s.pathBuf[:0]
	s.value(0)
	return s.res
}

type scanner struct {
	data []byte
	i    int
	// path is where the walk is, as byte ranges of data and array
	// indexes: made into strings only for a BadPath.
	path    []pathElem
	pathBuf [16]pathElem
	res     scanResult
}

// pathElem is an object's key (index < 0) or an array's index.
type pathElem struct {
	key   []byte
	index int
}

func (s *scanner) done() bool { return s.res.TooDeep || s.res.BadPath != nil }

func (s *scanner) space() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) value(depth int) {
	s.space()
	if s.i >= len(s.data) || s.done() {
		return
	}
	switch s.data[s.i] {
	case '{':
		if depth+1 > MaxJSONDepth {
			s.res.TooDeep = true
			return
		}
		s.i++
		for !s.done() {
			s.space()
			if s.data[s.i] == '}' {
				s.i++
				return
			}
			if s.data[s.i] == ',' {
				s.i++
				s.space()
			}
			key, ok := s.str()
			if !ok {
				s.fail(key)
				return
			}
			s.space()
			s.i++ // ':'
			s.path = append(s.path, pathElem{key: key, index: -1})
			s.value(depth + 1)
			if s.done() {
				return
			}
			s.path = s.path[:len(s.path)-1]
		}
	case '[':
		if depth+1 > MaxJSONDepth {
			s.res.TooDeep = true
			return
		}
		s.i++
		for n := 0; !s.done(); n++ {
			s.space()
			if s.data[s.i] == ']' {
				s.i++
				return
			}
			if s.data[s.i] == ',' {
				s.i++
			}
			s.path = append(s.path, pathElem{index: n})
			s.value(depth + 1)
			if s.done() {
				return
			}
			s.path = s.path[:len(s.path)-1]
		}
	case '"':
		if _, ok := s.str(); !ok {
			s.fail(nil)
		}
	default:
		// A number, true, false or null.
		for s.i < len(s.data) && !strings.ContainsRune(",]} \t\r\n", rune(s.data[s.i])) {
			s.i++
		}
	}
}

func (s *scanner) fail(key []byte) {
	p := make([]string, 0, len(s.path)+1)
	for _, e := range s.path {
		if e.index >= 0 {
			p = append(p, "["+strconv.Itoa(e.index)+"]")
		} else {
			p = append(p, string(e.key))
		}
	}
	if len(key) > 0 {
		p = append(p, string(key))
	}
	if len(p) == 0 {
		p = []string{""}
	}
	s.res.BadPath = p
}

// str reads a string at s.i, returning its text for a path (escapes kept
// as written, a range of data) and whether it is valid UTF-8 without lone
// surrogates.
func (s *scanner) str() ([]byte, bool) {
	s.i++ // opening quote
	start := s.i
	ok := true
	highPending := false
	for s.i < len(s.data) {
		c := s.data[s.i]
		switch {
		case c == '"':
			text := s.data[start:s.i]
			s.i++
			if highPending {
				ok = false
			}
			return text, ok
		case c == '\\':
			if s.i+1 < len(s.data) && s.data[s.i+1] == 'u' && s.i+5 < len(s.data) {
				r, err := strconv.ParseUint(string(s.data[s.i+2:s.i+6]), 16, 16)
				s.i += 6
				if err != nil {
					ok = false
					continue
				}
				switch {
				case r >= 0xD800 && r <= 0xDBFF:
					if highPending {
						ok = false
					}
					highPending = true
				case r >= 0xDC00 && r <= 0xDFFF:
					if !highPending {
						ok = false
					}
					highPending = false
				default:
					if highPending {
						ok = false
					}
					highPending = false
				}
				continue
			}
			if highPending {
				ok = false
			}
			highPending = false
			s.i += 2
		case c < utf8.RuneSelf:
			if highPending {
				ok = false
			}
			highPending = false
			s.i++
		default:
			if highPending {
				ok = false
			}
			highPending = false
			r, size := utf8.DecodeRune(s.data[s.i:])
			if r == utf8.RuneError && size <= 1 {
				ok = false
				size = 1
			}
			s.i += size
		}
	}
	return s.data[start:], false
}

// fieldPath renders a path as Hearth's validation messages name fields:
// keys joined with dots, indexes in brackets (args[1], files[0].data).
func fieldPath(p []string) string {
	var b strings.Builder
	for i, e := range p {
		if i > 0 && !strings.HasPrefix(e, "[") {
			b.WriteByte('.')
		}
		b.WriteString(strings.ToValidUTF8(e, "\uFFFD"))
	}
	return b.String()
}
