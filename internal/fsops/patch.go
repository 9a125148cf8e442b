package fsops

import (
	"bytes"
	"fmt"
	"strings"
)

// Replacement is one edit of a patch: Old must occur exactly once.
type Replacement struct {
	Old string `json:"old"`
	New string `json:"new"`
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// lineStyle is how a text's lines end.
type lineStyle int

const (
	styleNone lineStyle = iota // no line breaks, or a mix of CRLF and bare LF
	styleLF                    // every line break is a bare LF
	styleCRLF                  // every line break is CRLF
)

func detectStyle(s string) lineStyle {
	lf := strings.Count(s, "\n")
	if lf == 0 {
		return styleNone
	}
	crlf := strings.Count(s, "\r\n")
	switch crlf {
	case 0:
		return styleLF
	case lf:
		return styleCRLF
	}
	return styleNone
}

func toLF(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }

func toCRLF(s string) string { return strings.ReplaceAll(toLF(s), "\n", "\r\n") }

// applyPatch applies the replacements in order, each to the result of the
// ones before it, and returns the new content. Each Old must occur exactly
// once (overlapping occurrences count) in the text it is applied to, or the
// patch fails with a *ConflictError naming the replacement and the match
// count, and nothing is written.
//
// A UTF-8 byte-order mark is kept and never matched. In a file whose line
// breaks are all CRLF, an Old or New written with LF is converted to CRLF
// (normalized reports whether an Old needed that to match), and a match
// never starts or ends between the CR and LF of a pair, so the file stays
// pure CRLF. Likewise CRLF in an Old or New for an LF file becomes LF.
// Files with mixed line breaks are matched byte for byte.
func applyPatch(content []byte, reps []Replacement) (out []byte, normalized bool, err error) {
	if len(reps) == 0 {
		return nil, false, &InputError{Field: "replacements", Message: "give at least one {old, new} replacement"}
	}
	for i, r := range reps {
		if r.Old == "" {
			return nil, false, &InputError{Field: fmt.Sprintf("replacements[%d].old", i), Message: "old must not be empty"}
		}
	}
	bom := bytes.HasPrefix(content, utf8BOM)
	text := string(content)
	if bom {
		text = text[len(utf8BOM):]
	}
	style := detectStyle(text)
	for i, r := range reps {
		old, repl := r.Old, r.New
		switch style {
		case styleCRLF:
			old, repl = toCRLF(old), toCRLF(repl)
		case styleLF:
			old, repl = toLF(old), toLF(repl)
		}
		if old != r.Old {
			normalized = true
		}
		pos, n := findUnique(text, old, style == styleCRLF)
		if n != 1 {
			return nil, false, &ConflictError{
				Reason:      ReasonMatchCount,
				Replacement: i,
				Matches:     n,
				Message:     matchMessage(i, n, old != r.Old),
			}
		}
		text = text[:pos] + repl + text[pos+len(old):]
	}
	if bom {
		return append(append([]byte{}, utf8BOM...), text...), normalized, nil
	}
	return []byte(text), normalized, nil
}

func matchMessage(i, n int, normalized bool) string {
	how := ""
	if normalized {
		how = " (after matching its line endings to the file's)"
	}
	if n == 0 {
		return fmt.Sprintf("replacement %d: old text not found%s; re-read the file and copy the text exactly", i, how)
	}
	return fmt.Sprintf("replacement %d: old text matches %d places%s; include more surrounding text so it matches exactly one", i, n, how)
}

// findUnique returns the position of old in text and how many places it
// matches, counting overlapping matches. With crlf, a match whose edge falls
// between a CR and its LF does not count.
func findUnique(text, old string, crlf bool) (pos, n int) {
	pos = -1
	for from := 0; from <= len(text)-len(old); {
		i := strings.Index(text[from:], old)
		if i < 0 {
			break
		}
		i += from
		from = i + 1
		end := i + len(old)
		if crlf && (i > 0 && text[i-1] == '\r' && text[i] == '\n' ||
			end < len(text) && text[end-1] == '\r' && text[end] == '\n') {
			continue
		}
		if n == 0 {
			pos = i
		}
		n++
	}
	return pos, n
}
