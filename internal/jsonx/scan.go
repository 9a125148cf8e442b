package jsonx

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// ScanResult is what Scan learns about a body of JSON text.
type ScanResult struct {
	// Invalid is set when the walk met what valid JSON cannot have there
	// (json.Valid's grammar: RFC 8259 without a check of UTF-8).
	Invalid bool
	// TooDeep is set when the nesting passes the depth Scan was given.
	TooDeep bool
	// BadPath is the path of the first string (a key or a value) that is
	// not valid UTF-8 or holds an escaped lone surrogate (\ud800): Go's
	// decoder would silently turn it into U+FFFD. Nil when there is none.
	// The walk goes on past it (the grammar and the records are still
	// read to the end).
	BadPath []string
}

// Valid reports what json.Valid(data) reports, for the data Scan walked:
// a walk that stopped early (too deep) has not read the rest, which
// json.Valid then reads.
func (r ScanResult) Valid(data []byte) bool {
	if r.Invalid {
		return false
	}
	return !r.TooDeep || json.Valid(data)
}

// Scan walks data once: its grammar, its depth (nesting deeper than
// maxDepth stops it) and its strings.
func Scan(data []byte, maxDepth int) ScanResult { return ScanRecording(data, maxDepth, nil) }

// A Record asks ScanRecording to note the members of the object at Path
// as it walks them, so that a caller that needs a few objects' members
// does not walk the text again. Members is the caller's buffer: the walk
// fills it up to its capacity and never allocates.
type Record struct {
	// Path is the keys, as written, from the top-level value to the
	// object (empty: the top-level value itself). A path through an array
	// is never recorded.
	Path []string
	// Members are the object's members in order, as many as fit in
	// cap(Members).
	Members []Member
	// Found counts the objects the walk met at Path: 0 when there is none
	// (absent, or not an object), more than 1 when an object on the way
	// repeats a key; the members of all of them are in Members.
	Found int
	// Full: the object had more members than cap(Members); those past it
	// are not in Members.
	Full bool
	// Repeated: a key was written twice (byte for byte) among Members.
	Repeated bool
	// Escaped: a key among Members is written with an escape.
	Escaped bool
}

// A Member is one recorded member of an object, as written.
type Member struct {
	// Key is the bytes between the key's quotes (escapes as written).
	Key []byte
	// Escaped: Key holds an escape (its bytes are not its text).
	Escaped bool
	// Value is the member's value as written, without the whitespace
	// around it.
	Value []byte
}

// ScanRecording is Scan that also fills records (see Record). The
// records are whole only when the walk read everything: the result is
// neither Invalid nor TooDeep.
func ScanRecording(data []byte, maxDepth int, records []Record) ScanResult {
	// The path's buffer is beside the scanner, not in it (a scanner
	// holding a slice of itself goes to the heap); the records go down
	// the walk as an argument, never into the scanner, whose contents
	// escape (the path holds slices of data): the caller's buffers stay
	// where the caller put them.
	var pathBuf [16]pathElem
	s := &scanner{data: data, maxDepth: maxDepth, path: pathBuf[:0]}
	s.value(0, records)
	if !s.done() {
		s.next()
		s.res.Invalid = s.i < len(s.data)
	}
	return s.res
}

type scanner struct {
	data     []byte
	i        int
	maxDepth int
	// path is where the walk is, as byte ranges of data and array
	// indexes: made into strings only for a BadPath.
	path []pathElem
	res  ScanResult
}

// pathElem is an object's key (index < 0) or an array's index.
type pathElem struct {
	key   []byte
	index int
}

// done: the walk stops (a bad string does not stop it).
func (s *scanner) done() bool { return s.res.Invalid || s.res.TooDeep }

// record is the record of the object at the walk's path, or nil.
func (s *scanner) record(records []Record) *Record {
	for i := range records {
		if r := &records[i]; len(r.Path) == len(s.path) && s.under(r.Path) {
			return r
		}
	}
	return nil
}

// watched is records when the walk's path leads to one's object (is a
// prefix of its Path), else nil: only there does the walk look for them.
func (s *scanner) watched(records []Record) []Record {
	for i := range records {
		if r := &records[i]; len(r.Path) >= len(s.path) && s.under(r.Path) {
			return records
		}
	}
	return nil
}

// under reports whether the walk's path is the start of path.
func (s *scanner) under(path []string) bool {
	for i, e := range s.path {
		if e.index >= 0 || string(e.key) != path[i] {
			return false
		}
	}
	return true
}

// note adds a member to rec, within its buffer.
func (rec *Record) note(key, value []byte) {
	escaped := bytes.IndexByte(key, '\\') >= 0
	rec.Escaped = rec.Escaped || escaped
	n := len(rec.Members)
	if n == cap(rec.Members) {
		rec.Full = true
		return
	}
	for _, m := range rec.Members {
		if string(m.Key) == string(key) {
			rec.Repeated = true
		}
	}
	rec.Members = rec.Members[:n+1]
	rec.Members[n] = Member{Key: key, Escaped: escaped, Value: value}
}

// next skips whitespace and returns the byte there, 0 at the end (a NUL
// is never valid outside a string: every caller refuses a 0).
func (s *scanner) next() byte {
	for s.i < len(s.data) {
		switch c := s.data[s.i]; c {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return c
		}
	}
	return 0
}

// value walks the value at s.i; records are nil unless its path leads to
// a record's object.
func (s *scanner) value(depth int, records []Record) {
	switch c := s.next(); c {
	case '{':
		if depth+1 > s.maxDepth {
			s.res.TooDeep = true
			return
		}
		var rec *Record
		if records != nil {
			if rec = s.record(records); rec != nil {
				rec.Found++
			}
		}
		s.i++
		if s.next() == '}' {
			s.i++
			return
		}
		for {
			if s.next() != '"' {
				s.res.Invalid = true
				return
			}
			key, ok := s.str()
			if s.done() {
				return
			}
			if !ok && s.res.BadPath == nil {
				s.fail(key)
			}
			if s.next() != ':' {
				s.res.Invalid = true
				return
			}
			s.i++
			s.path = append(s.path, pathElem{key: key, index: -1})
			s.next()
			start := s.i // the value's first byte
			s.value(depth+1, s.watched(records))
			if s.done() {
				return
			}
			if rec != nil {
				rec.note(key, s.data[start:s.i])
			}
			s.path = s.path[:len(s.path)-1]
			if !s.more('}') {
				return
			}
		}
	case '[':
		if depth+1 > s.maxDepth {
			s.res.TooDeep = true
			return
		}
		s.i++
		if s.next() == ']' {
			s.i++
			return
		}
		for n := 0; ; n++ {
			s.path = append(s.path, pathElem{index: n})
			s.value(depth+1, nil)
			if s.done() {
				return
			}
			s.path = s.path[:len(s.path)-1]
			if !s.more(']') {
				return
			}
		}
	case '"':
		if _, ok := s.str(); !ok && !s.done() && s.res.BadPath == nil {
			s.fail(nil)
		}
	case 't':
		s.literal("true")
	case 'f':
		s.literal("false")
	case 'n':
		s.literal("null")
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		s.number()
	default:
		s.res.Invalid = true
	}
}

// more reads what follows a member or an element: a comma (true: another
// comes) or the closing byte (false), else the JSON is invalid (false).
func (s *scanner) more(closing byte) bool {
	switch s.next() {
	case ',':
		s.i++
		return true
	case closing:
		s.i++
	default:
		s.res.Invalid = true
	}
	return false
}

func (s *scanner) literal(word string) {
	// Only the literal's own bytes are compared (a conversion of the rest
	// of the body would copy it, once per literal).
	if end := s.i + len(word); end > len(s.data) || string(s.data[s.i:end]) != word {
		s.res.Invalid = true
		return
	}
	s.i += len(word)
}

// number reads -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?; what follows
// it is the caller's to check.
func (s *scanner) number() {
	d, i := s.data, s.i
	digits := func() bool {
		start := i
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
		return i > start
	}
	if d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case !digits():
		s.res.Invalid = true
		return
	}
	if i < len(d) && d[i] == '.' {
		i++
		if !digits() {
			s.res.Invalid = true
			return
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if !digits() {
			s.res.Invalid = true
			return
		}
	}
	s.i = i
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
// surrogates; a string JSON does not allow (a control byte, an unknown
// escape, no closing quote) sets Invalid.
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
			return text, ok && !highPending
		case c == '\\':
			var esc byte
			if s.i+1 < len(s.data) {
				esc = s.data[s.i+1]
			}
			switch esc {
			case 'u':
				r, hex := hex4(s.data[s.i+2:])
				if !hex {
					s.res.Invalid = true
					return nil, false
				}
				s.i += 6
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
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				if highPending {
					ok = false
				}
				highPending = false
				s.i += 2
				continue
			}
			s.res.Invalid = true
			return nil, false
		case c < 0x20:
			s.res.Invalid = true
			return nil, false
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
	s.res.Invalid = true // no closing quote
	return nil, false
}

// hex4 is the value of the four hex digits that b starts with.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
