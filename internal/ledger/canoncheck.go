package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf8"
)

// maxDepth is encoding/json's nesting limit, kept so that checkCanonical
// and Canonical agree on every input.
const maxDepth = 10000

// errNotCanonical is returned for well-formed JSON that is not in the
// canonical form.
var errNotCanonical = errors.New("not in canonical form")

// member is one member of a top-level object: its decoded key and the
// bytes of its value.
type member struct {
	key []byte
	val []byte
}

// checkCanonical reports whether b is exactly the canonical encoding of a
// JSON value (see Canonical), in one pass and without building the value:
// it is what verification spends its time on. If b is an object, it
// returns the object's members in order. FuzzCheckCanonical holds it to
// Canonical: b passes exactly when Canonical(b) succeeds and equals b.
func checkCanonical(b []byte) ([]member, error) {
	c := canonChecker{b: b}
	c.members = c.memberBuf[:0]
	if err := c.value(true); err != nil {
		return nil, err
	}
	if c.i != len(b) {
		return nil, c.errAt()
	}
	return c.members, nil
}

type canonChecker struct {
	b       []byte
	i       int
	depth   int
	members []member
	// memberBuf holds the members of an entry (five) without growing.
	memberBuf [8]member
}

// errAt reports the byte at the current position: a syntax error when it
// cannot be JSON here, errNotCanonical when it is whitespace, which JSON
// allows and the canonical form does not.
func (c *canonChecker) errAt() error {
	if c.i >= len(c.b) {
		return errors.New("unexpected end of JSON")
	}
	switch c.b[c.i] {
	case ' ', '\t', '\n', '\r':
		return errNotCanonical
	}
	return fmt.Errorf("invalid JSON at byte %d", c.i)
}

func (c *canonChecker) value(top bool) error {
	if c.i >= len(c.b) {
		return c.errAt()
	}
	switch ch := c.b[c.i]; {
	case ch == '{':
		return c.object(top)
	case ch == '[':
		return c.array()
	case ch == '"':
		_, err := c.str()
		return err
	case ch == 't':
		return c.literal("true")
	case ch == 'f':
		return c.literal("false")
	case ch == 'n':
		return c.literal("null")
	case ch == '-' || ch >= '0' && ch <= '9':
		return c.number()
	}
	return c.errAt()
}

func (c *canonChecker) literal(lit string) error {
	if !bytes.HasPrefix(c.b[c.i:], []byte(lit)) {
		return c.errAt()
	}
	c.i += len(lit)
	return nil
}

func (c *canonChecker) enter() error {
	if c.depth++; c.depth > maxDepth {
		return errors.New("JSON nested too deeply")
	}
	c.i++
	return nil
}

func (c *canonChecker) object(top bool) error {
	if err := c.enter(); err != nil {
		return err
	}
	if c.i < len(c.b) && c.b[c.i] == '}' {
		c.i++
		c.depth--
		return nil
	}
	var prev []byte
	for n := 0; ; n++ {
		if c.i >= len(c.b) || c.b[c.i] != '"' {
			return c.errAt()
		}
		key, err := c.str()
		if err != nil {
			return err
		}
		if n > 0 && bytes.Compare(key, prev) <= 0 {
			// Out of order, or a duplicate, which Canonical would drop.
			return errNotCanonical
		}
		prev = key
		if c.i >= len(c.b) || c.b[c.i] != ':' {
			return c.errAt()
		}
		c.i++
		start := c.i
		if err := c.value(false); err != nil {
			return err
		}
		if top {
			c.members = append(c.members, member{key: key, val: c.b[start:c.i]})
		}
		if c.i >= len(c.b) {
			return c.errAt()
		}
		switch c.b[c.i] {
		case ',':
			c.i++
			continue
		case '}':
			c.i++
			c.depth--
			return nil
		}
		return c.errAt()
	}
}

func (c *canonChecker) array() error {
	if err := c.enter(); err != nil {
		return err
	}
	if c.i < len(c.b) && c.b[c.i] == ']' {
		c.i++
		c.depth--
		return nil
	}
	for {
		if err := c.value(false); err != nil {
			return err
		}
		if c.i >= len(c.b) {
			return c.errAt()
		}
		switch c.b[c.i] {
		case ',':
			c.i++
			continue
		case ']':
			c.i++
			c.depth--
			return nil
		}
		return c.errAt()
	}
}

// str checks a string at c.i and returns its decoded value (a slice of
// the input when it has no escapes, so checking allocates nothing). Canonical
// strings escape exactly '"', '\\' and the control characters, with the
// short escapes where JSON has them and lowercase \u00xx otherwise.
func (c *canonChecker) str() ([]byte, error) {
	c.i++ // opening quote
	start := c.i
	var buf []byte // the decoded value, once an escape is seen
	for c.i < len(c.b) {
		ch := c.b[c.i]
		switch {
		case ch == '"':
			s := c.b[start:c.i]
			c.i++
			if buf != nil {
				return buf, nil
			}
			return s, nil
		case ch < 0x20:
			return nil, fmt.Errorf("invalid JSON at byte %d: control character in string", c.i)
		case ch == '\\':
			if buf == nil {
				buf = append([]byte(nil), c.b[start:c.i]...)
			}
			if c.i+1 >= len(c.b) {
				return nil, c.errAt()
			}
			dec, n, err := c.escape(c.b[c.i+1:])
			if err != nil {
				return nil, err
			}
			buf = append(buf, dec)
			c.i += 1 + n
		case ch < utf8.RuneSelf:
			if buf != nil {
				buf = append(buf, ch)
			}
			c.i++
		default:
			r, size := utf8.DecodeRune(c.b[c.i:])
			if r == utf8.RuneError && size == 1 {
				// encoding/json would turn it into U+FFFD.
				return nil, errNotCanonical
			}
			if buf != nil {
				buf = append(buf, c.b[c.i:c.i+size]...)
			}
			c.i += size
		}
	}
	return nil, c.errAt()
}

// escape checks the escape sequence after a backslash (e starts at the
// character after it) and returns the byte it stands for and its length.
func (c *canonChecker) escape(e []byte) (byte, int, error) {
	switch e[0] {
	case '"', '\\':
		return e[0], 1, nil
	case 'b':
		return '\b', 1, nil
	case 't':
		return '\t', 1, nil
	case 'n':
		return '\n', 1, nil
	case 'f':
		return '\f', 1, nil
	case 'r':
		return '\r', 1, nil
	case '/':
		return 0, 0, errNotCanonical
	case 'u':
		if len(e) < 5 {
			return 0, 0, fmt.Errorf("invalid JSON at byte %d: short \\u escape", c.i)
		}
		v := 0
		for _, h := range e[1:5] {
			switch {
			case h >= '0' && h <= '9':
				v = v<<4 | int(h-'0')
			case h >= 'a' && h <= 'f':
				v = v<<4 | int(h-'a'+10)
			case h >= 'A' && h <= 'F':
				// Valid JSON, but canonical hex is lowercase.
				return 0, 0, errNotCanonical
			default:
				return 0, 0, fmt.Errorf("invalid JSON at byte %d: bad \\u escape", c.i)
			}
		}
		switch v {
		case '\b', '\t', '\n', '\f', '\r':
			return 0, 0, errNotCanonical // has a short escape
		}
		if v >= 0x20 {
			return 0, 0, errNotCanonical // written as itself
		}
		return byte(v), 5, nil
	}
	return 0, 0, fmt.Errorf("invalid JSON at byte %d: bad escape", c.i)
}

func (c *canonChecker) number() error {
	start := c.i
	digits := func() int {
		n := 0
		for c.i < len(c.b) && c.b[c.i] >= '0' && c.b[c.i] <= '9' {
			c.i++
			n++
		}
		return n
	}
	if c.b[c.i] == '-' {
		c.i++
	}
	switch {
	case c.i < len(c.b) && c.b[c.i] == '0':
		c.i++
	case digits() == 0:
		return c.errAt()
	}
	integer := true
	if c.i < len(c.b) && c.b[c.i] == '.' {
		c.i++
		integer = false
		if digits() == 0 {
			return c.errAt()
		}
	}
	if c.i < len(c.b) && (c.b[c.i] == 'e' || c.b[c.i] == 'E') {
		c.i++
		integer = false
		if c.i < len(c.b) && (c.b[c.i] == '+' || c.b[c.i] == '-') {
			c.i++
		}
		if digits() == 0 {
			return c.errAt()
		}
	}
	tok := c.b[start:c.i]
	if integer {
		if string(tok) == "-0" {
			return errNotCanonical
		}
		return nil
	}
	canon, err := appendNumber(nil, string(tok))
	if err != nil {
		return err
	}
	if !bytes.Equal(canon, tok) {
		return errNotCanonical
	}
	return nil
}
