package ledger

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/hearth-dev/hearth/internal/jsonx"
)

// Canonical returns the canonical JSON encoding of v. A json.RawMessage is
// taken as JSON text; any other value is first encoded with encoding/json.
//
// The canonical form, which is what the ledger hashes, is:
//   - no insignificant whitespace;
//   - object members sorted by key, comparing the keys' UTF-8 bytes;
//   - strings in UTF-8, escaping only '"', '\\' and the control characters
//     below U+0020 (as \b, \t, \n, \f, \r, or \u00xx with lowercase hex);
//     every other character, including '<', '>', '&', U+2028 and U+2029,
//     is written as itself (invalid UTF-8 has already become U+FFFD, as
//     encoding/json decodes it);
//   - an integer written without fraction or exponent is kept exactly as
//     its decimal digits ("-0" becomes "0"); any other number is read as an
//     IEEE 754 double and written as ECMAScript's Number.prototype.toString
//     does (RFC 8785), so 1.0 becomes 1 and 1e21 becomes 1e+21;
//   - true, false and null as themselves.
//
// This is RFC 8785 (JCS) except that keys sort by UTF-8 rather than UTF-16
// code units (the orders differ only between U+E000–U+FFFF and characters
// beyond U+FFFF) and that large integers are not rounded to doubles.
// Duplicate object keys keep the last value, as encoding/json does.
func Canonical(v any) ([]byte, error) {
	x, err := decodeJSON(v)
	if err != nil {
		return nil, err
	}
	return appendCanonical(nil, x)
}

// decodeJSON turns v into the generic tree (map[string]any, []any, string,
// json.Number, bool, nil) that appendCanonical writes.
func decodeJSON(v any) (any, error) {
	raw, ok := v.(json.RawMessage)
	if !ok {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("encode JSON: %w", err)
		}
		raw = b
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return nil, fmt.Errorf("decode JSON: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("decode JSON: data after the top-level value")
	}
	return x, nil
}

func appendCanonical(b []byte, x any) ([]byte, error) {
	switch x := x.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case string:
		return appendString(b, x), nil
	case json.Number:
		return appendNumber(b, string(x))
	case []any:
		b = append(b, '[')
		for i, v := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendCanonical(b, v); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			var err error
			if b, err = appendCanonical(b, x[k]); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	default:
		return nil, fmt.Errorf("canonical JSON: unexpected %T", x)
	}
}

// appendString writes s as a canonical JSON string. s must be valid UTF-8,
// which encoding/json guarantees for decoded strings.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = jsonx.AppendEscape(append(b, s[start:i]...), c)
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendNumber writes the JSON number literal s in canonical form.
func appendNumber(b []byte, s string) ([]byte, error) {
	if !strings.ContainsAny(s, ".eE") {
		if s == "-0" {
			s = "0"
		}
		return append(b, s...), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, fmt.Errorf("canonical JSON: number %s is out of range", s)
	}
	if f == 0 {
		return append(b, '0'), nil
	}
	// ECMAScript formatting, as encoding/json's float encoder does it.
	format := byte('f')
	if abs := math.Abs(f); abs < 1e-6 || abs >= 1e21 {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// Go writes e-07; ECMAScript writes e-7.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}
