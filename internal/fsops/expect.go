package fsops

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
)

// Expect is the expected_sha256 precondition of write and patch. JSON gives
// it three meanings, which the zero value and UnmarshalJSON keep apart:
//
//	field absent      Expect{}                   no check
//	null              Expect{Set: true, Null: true}  the file must not exist
//	"<64 hex>"        Expect{Set: true, SHA: hex}    the file must exist with this SHA-256
//
// Use it as a struct field with the omitzero option so that marshalling
// round-trips the absent case.
type Expect struct {
	Set  bool
	Null bool
	SHA  string // lower-case hex
}

// ExpectAbsent returns the precondition "the file must not exist".
func ExpectAbsent() Expect { return Expect{Set: true, Null: true} }

// ExpectSHA returns the precondition "the file's SHA-256 is sha".
func ExpectSHA(sha string) (Expect, error) {
	if !validSHA(sha) {
		return Expect{}, fmt.Errorf("expected_sha256 must be 64 hexadecimal characters or null, got %q", sha)
	}
	return Expect{Set: true, SHA: strings.ToLower(sha)}, nil
}

// IsZero reports whether no precondition is set (json omitzero uses it).
func (e Expect) IsZero() bool { return !e.Set }

// UnmarshalJSON accepts null or a 64-character hex string. encoding/json
// calls it for an explicit null too, which is how null differs from absent.
func (e *Expect) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		*e = ExpectAbsent()
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("expected_sha256 must be a string of 64 hexadecimal characters or null")
	}
	v, err := ExpectSHA(s)
	if err != nil {
		return err
	}
	*e = v
	return nil
}

// MarshalJSON writes null or the hash; an unset Expect should be omitted
// with omitzero (it marshals as null otherwise, which would change meaning).
func (e Expect) MarshalJSON() ([]byte, error) {
	if !e.Set || e.Null {
		return []byte("null"), nil
	}
	return json.Marshal(e.SHA)
}

// String renders the precondition for messages.
func (e Expect) String() string {
	switch {
	case !e.Set:
		return "any"
	case e.Null:
		return "absent"
	default:
		return e.SHA
	}
}

func validSHA(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}
