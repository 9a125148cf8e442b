package ledger

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Entry kinds written by Hearth. Kind is an open set of lowercase names
// (see validKind); these are the ones docs/DESIGN.md, "Governance" names.
const (
	KindIntent          = "intent"
	KindOutcome         = "outcome"
	KindEstop           = "estop"
	KindReset           = "reset"
	KindQueueResume     = "queue_resume"
	KindPermitRequested = "permit_requested"
	KindPermitApproved  = "permit_approved"
	KindPermitDenied    = "permit_denied"
	KindPermitExpired   = "permit_expired"
	KindRuleAdded       = "rule_added"
	KindRuleRemoved     = "rule_removed"
	KindReconcile       = "reconcile"
	KindPolicyChange    = "policy_change"
	KindTunnelKeySet    = "tunnel_key_set"
)

// TimeLayout is the layout of an entry's ts: RFC 3339, UTC, milliseconds.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// GenesisPrev is the prev of the first entry: 64 zeros.
const GenesisPrev = "0000000000000000000000000000000000000000000000000000000000000000"

// ErrForbiddenKey is wrapped by the error Append returns when data carries
// a key that names a secret or a raw OpenAI identifier.
var ErrForbiddenKey = errors.New("ledger data contains a forbidden key")

// forbiddenKey reports whether an entry's data may not carry the key k at
// any depth (compared case-insensitively): it names a secret or a raw
// OpenAI identifier. Callers record digests of such values under other
// names (for example route_sha256), never the values.
func forbiddenKey(k string) bool {
	switch strings.ToLower(k) {
	case "openai/session", "openai/subject", "openai/organization",
		"api_key", "key", "secret", "token", "password":
		return true
	}
	return false
}

// Entry is one ledger entry. Its canonical JSON (Raw) is the object
//
//	{"data":{…},"kind":"…","prev":"<64 hex>","seq":N,"ts":"…"}
//
// in the canonical form documented on Canonical; Raw is what is stored,
// exported and hashed.
type Entry struct {
	Seq  int64           // 1-based position in the ledger
	Time time.Time       // UTC, millisecond precision
	Kind string          // intent, outcome, estop, …
	Prev string          // hex SHA-256 of the previous entry's Raw; GenesisPrev for seq 1
	Data json.RawMessage // canonical JSON object with kind-specific fields
	Raw  []byte          // canonical bytes of the whole entry
}

// Hash returns the hex SHA-256 of the entry's canonical bytes: the next
// entry's Prev.
func (e Entry) Hash() string {
	h := sha256.Sum256(e.Raw)
	return hex.EncodeToString(h[:])
}

// MarshalJSON returns the entry's canonical bytes.
func (e Entry) MarshalJSON() ([]byte, error) {
	if e.Raw == nil {
		return nil, errors.New("ledger entry has no canonical bytes")
	}
	return e.Raw, nil
}

// newEntry builds the entry from its parts; data must already be a
// canonical JSON object.
func newEntry(seq int64, t time.Time, kind, prev string, data []byte) Entry {
	t = t.UTC().Truncate(time.Millisecond)
	b := make([]byte, 0, len(data)+len(kind)+160)
	b = append(b, `{"data":`...)
	b = append(b, data...)
	b = append(b, `,"kind":`...)
	b = appendString(b, kind)
	b = append(b, `,"prev":"`...)
	b = append(b, prev...)
	b = append(b, `","seq":`...)
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, `,"ts":"`...)
	b = t.AppendFormat(b, TimeLayout)
	b = append(b, `"}`...)
	return Entry{Seq: seq, Time: t, Kind: kind, Prev: prev, Data: data, Raw: b}
}

// canonicalData checks and canonicalizes an entry's data: it must encode
// to a JSON object (nil means {}) with no forbidden key at any depth.
func canonicalData(data any) ([]byte, error) {
	if data == nil {
		return []byte("{}"), nil
	}
	x, err := decodeJSON(data)
	if err != nil {
		return nil, fmt.Errorf("ledger data: %w", err)
	}
	if _, ok := x.(map[string]any); !ok {
		return nil, errors.New("ledger data must be a JSON object")
	}
	if err := checkKeys("data", x); err != nil {
		return nil, err
	}
	return appendCanonical(nil, x)
}

func checkKeys(path string, x any) error {
	switch x := x.(type) {
	case map[string]any:
		for k, v := range x {
			if forbiddenKey(k) {
				return fmt.Errorf("%w %q at %s (record a digest under another name)", ErrForbiddenKey, k, path)
			}
			if err := checkKeys(path+"."+k, v); err != nil {
				return err
			}
		}
	case []any:
		for i, v := range x {
			if err := checkKeys(path+"["+strconv.Itoa(i)+"]", v); err != nil {
				return err
			}
		}
	}
	return nil
}

// validKind reports whether kind is a lowercase name: a letter, then
// letters, digits or underscores, at most 64 bytes.
func validKind(kind string) bool {
	if kind == "" || len(kind) > 64 || kind[0] < 'a' || kind[0] > 'z' {
		return false
	}
	for i := 0; i < len(kind); i++ {
		c := kind[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

// ParseEntry parses an entry's canonical bytes, refusing bytes that are
// not exactly the canonical form of a well-formed entry.
func ParseEntry(raw []byte) (Entry, error) {
	members, err := checkCanonical(raw)
	if err != nil {
		return Entry{}, err
	}
	// Canonical members are sorted, so a well-formed entry has exactly
	// these keys in this order.
	want := [...]string{"data", "kind", "prev", "seq", "ts"}
	if len(raw) == 0 || raw[0] != '{' || len(members) != len(want) {
		return Entry{}, errors.New("want an object with fields data, kind, prev, seq, ts")
	}
	for i, m := range members {
		if string(m.key) != want[i] {
			return Entry{}, fmt.Errorf("unexpected field %q", m.key)
		}
	}
	data, kind, prev, seq, ts := members[0].val, members[1].val, members[2].val, members[3].val, members[4].val
	e := Entry{Raw: raw, Data: data}
	if data[0] != '{' {
		return Entry{}, errors.New("data is not a JSON object")
	}
	if e.Kind, err = plainString(kind); err != nil || !validKind(e.Kind) {
		return Entry{}, fmt.Errorf("kind %s is not a lowercase name", kind)
	}
	if e.Prev, err = plainString(prev); err != nil || !isHexHash(e.Prev) {
		return Entry{}, errors.New("prev is not 64 lowercase hex digits")
	}
	if e.Seq, err = strconv.ParseInt(string(seq), 10, 64); err != nil || e.Seq < 1 {
		return Entry{}, fmt.Errorf("seq %s is not a positive integer", seq)
	}
	t, err := plainString(ts)
	if err == nil {
		e.Time, err = time.Parse(TimeLayout, t)
	}
	var formatted [len(TimeLayout) + 8]byte
	if err != nil || string(e.Time.AppendFormat(formatted[:0], TimeLayout)) != t {
		return Entry{}, fmt.Errorf("ts %s is not RFC 3339 UTC with milliseconds", ts)
	}
	return e, nil
}

// plainString returns the content of a canonical JSON string with no
// escapes, which is all that kind, prev and ts may be.
func plainString(v []byte) (string, error) {
	if len(v) < 2 || v[0] != '"' || bytes.IndexByte(v[1:len(v)-1], '\\') >= 0 {
		return "", errors.New("not a plain string")
	}
	return string(v[1 : len(v)-1]), nil
}

func isHexHash(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
