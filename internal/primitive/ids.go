package primitive

import (
	"crypto/rand"
	"encoding/base32"
	"strings"
)

// idEncoding writes Hearth's identifiers: a short kind prefix plus 20
// random base32 characters (100 bits), unguessable and safe in file names.
var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// NewID returns prefix + "_" + 20 random characters.
func NewID(prefix string) string {
	var b [13]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never returns an error since Go 1.24
	// 13 bytes encode as 21 characters, the last holding 1 bit: it is
	// dropped. Made on the stack for an ordinary prefix, so the id is the
	// one allocation.
	var buf [48]byte
	out := append(append(buf[:0], prefix...), '_')
	n := len(out)
	out = append(out, make([]byte, idEncoding.EncodedLen(len(b)))...)
	idEncoding.Encode(out[n:], b[:])
	return string(out[:n+20])
}

// ValidID reports whether id looks like one made by NewID with prefix, so
// identifiers can be used in file names without further escaping.
func ValidID(prefix, id string) bool {
	rest, ok := strings.CutPrefix(id, prefix+"_")
	if !ok || len(rest) != 20 {
		return false
	}
	for _, c := range rest {
		if !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
			return false
		}
	}
	return true
}
