package fsops

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds of search's context lines.
const MaxSearchContext = 5

// lineMatcher finds the lines of a text that match a search's query, one
// line at a time as ripgrep does: no match spans a line break.
type lineMatcher struct {
	// lit is the literal to look for; with re set it is only a literal
	// every match contains (a prefilter), and may be empty.
	lit []byte
	// re is nil for a plain case-sensitive literal search.
	re *regexp.Regexp
	// class, for a regex without a required literal, is a set of bytes of
	// which every match contains one (a prefilter), or nil.
	class *byteSet
}

// byteSet is a set of bytes.
type byteSet [256]bool

// maxClassPrefilter is the largest byte set worth scanning for: past it,
// most lines hold one and the prefilter only adds work.
const maxClassPrefilter = 40

// newLineMatcher compiles the query: a literal, or an RE2 regular
// expression when regex is set, either of them case-insensitive on asking.
// Character classes and "." never match a line break, so a match always
// lies within one line.
func newLineMatcher(query string, regex, fold bool) (*lineMatcher, error) {
	if !regex && !fold {
		if strings.ContainsAny(query, "\n") {
			return nil, &InputError{Field: "query", Message: "must not contain a line break: search matches one line at a time"}
		}
		return &lineMatcher{lit: []byte(query)}, nil
	}
	pattern := query
	if !regex {
		pattern = regexp.QuoteMeta(query)
	}
	flags := syntax.Perl &^ syntax.OneLine
	if fold {
		flags |= syntax.FoldCase
	}
	tree, err := syntax.Parse(pattern, flags)
	if err != nil {
		return nil, &InputError{Field: "query", Message: regexProblem(err)}
	}
	if lineBreakLiteral(tree) {
		return nil, &InputError{Field: "query", Message: "must not match a line break: search matches one line at a time"}
	}
	withoutNewlines(tree)
	re, err := regexp.Compile(tree.String())
	if err != nil {
		return nil, &InputError{Field: "query", Message: regexProblem(err)}
	}
	m := &lineMatcher{re: re, lit: requiredLiteral(tree)}
	if len(m.lit) == 0 {
		if set, n := requiredClass(tree); n > 0 && n <= maxClassPrefilter {
			m.class = set
		}
	}
	return m, nil
}

// requiredClass returns a set of bytes of which every match of re contains
// at least one, the smallest found at the top level, and its size (0: none
// found). A rune outside ASCII stands for its UTF-8 leading byte.
func requiredClass(re *syntax.Regexp) (*byteSet, int) {
	switch re.Op {
	case syntax.OpLiteral:
		if len(re.Rune) == 0 {
			return nil, 0
		}
		set := &byteSet{}
		r := re.Rune[0]
		if re.Flags&syntax.FoldCase != 0 {
			r = rarestRune(re.Rune)
		}
		set.addRange(r, r)
		if re.Flags&syntax.FoldCase != 0 {
			for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
				set.addRange(f, f)
			}
		}
		return set, set.size()
	case syntax.OpCharClass:
		set := &byteSet{}
		for i := 0; i+1 < len(re.Rune); i += 2 {
			set.addRange(re.Rune[i], re.Rune[i+1])
		}
		return set, set.size()
	case syntax.OpCapture, syntax.OpPlus:
		return requiredClass(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredClass(re.Sub[0])
		}
	case syntax.OpConcat:
		var best *byteSet
		bestN := 0
		for _, s := range re.Sub {
			if set, n := requiredClass(s); n > 0 && (bestN == 0 || n < bestN) {
				best, bestN = set, n
			}
		}
		return best, bestN
	}
	return nil, 0
}

// letterFrequency ranks ASCII letters from the most to the least common
// in English and code alike.
const letterFrequency = "etaoinsrhldcumfpgwybvkxjqz"

// rarestRune picks the rune of a case-folded literal least likely to occur,
// by letterFrequency; anything not a letter counts as rarer than any.
func rarestRune(runes []rune) rune {
	best, bestRank := runes[0], -1
	for _, r := range runes {
		rank := len(letterFrequency)
		if i := strings.IndexRune(letterFrequency, unicode.ToLower(r)); i >= 0 {
			rank = i
		}
		if rank > bestRank {
			best, bestRank = r, rank
		}
	}
	return best
}

// addRange adds the bytes a rune in [lo, hi] can start with.
func (s *byteSet) addRange(lo, hi rune) {
	var b [utf8.UTFMax]byte
	utf8.EncodeRune(b[:], lo)
	first := b[0]
	utf8.EncodeRune(b[:], min(hi, unicode.MaxRune))
	for c := int(first); c <= int(b[0]); c++ {
		s[c] = true
	}
}

func (s *byteSet) size() int {
	n := 0
	for _, in := range s {
		if in {
			n++
		}
	}
	return n
}

// index returns the offset of the first byte of data in s, or -1.
func (s *byteSet) index(data []byte) int {
	for i, c := range data {
		if s[c] {
			return i
		}
	}
	return -1
}

// lineBreakLiteral reports whether the pattern spells a line break itself.
func lineBreakLiteral(re *syntax.Regexp) bool {
	if re.Op == syntax.OpLiteral {
		for _, r := range re.Rune {
			if r == '\n' {
				return true
			}
		}
	}
	for _, s := range re.Sub {
		if lineBreakLiteral(s) {
			return true
		}
	}
	return false
}

// withoutNewlines takes the line break out of every character class and
// makes "." stop at it, so the compiled expression, run over a whole file,
// only finds matches within a line.
func withoutNewlines(re *syntax.Regexp) {
	switch re.Op {
	case syntax.OpAnyChar:
		re.Op = syntax.OpAnyCharNotNL
	case syntax.OpCharClass:
		var out []rune
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			if lo <= '\n' && '\n' <= hi {
				if lo < '\n' {
					out = append(out, lo, '\n'-1)
				}
				if hi > '\n' {
					out = append(out, '\n'+1, hi)
				}
				continue
			}
			out = append(out, lo, hi)
		}
		if len(out) == 0 {
			*re = syntax.Regexp{Op: syntax.OpNoMatch}
			return
		}
		re.Rune = out
	}
	for _, s := range re.Sub {
		withoutNewlines(s)
	}
}

// requiredLiteral returns a case-sensitive literal that every match of re
// contains, the longest one found at the top level, or nil.
func requiredLiteral(re *syntax.Regexp) []byte {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase == 0 {
			return []byte(string(re.Rune))
		}
	case syntax.OpCapture:
		return requiredLiteral(re.Sub[0])
	case syntax.OpConcat:
		var best []byte
		for _, s := range re.Sub {
			if l := requiredLiteral(s); len(l) > len(best) {
				best = l
			}
		}
		return best
	case syntax.OpPlus:
		return requiredLiteral(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiteral(re.Sub[0])
		}
	}
	return nil
}

// matchName reports whether an entry's name matches.
func (m *lineMatcher) matchName(name string) bool {
	if m.re == nil {
		return strings.Contains(name, string(m.lit))
	}
	if len(m.lit) > 0 && !strings.Contains(name, string(m.lit)) {
		return false
	}
	return m.re.MatchString(name)
}

// scan calls hit for every matching line of data, in order, with the
// line's number (from 1), its start and end offsets (end excludes the line
// break) and the offset of the match in data, until hit returns false.
func (m *lineMatcher) scan(data []byte, hit func(line, start, end, at int) bool) {
	pos, line, counted := 0, 1, 0
	for pos < len(data) {
		var at int
		switch {
		case m.re == nil:
			i := bytes.Index(data[pos:], m.lit)
			if i < 0 {
				return
			}
			at = pos + i
		case len(m.lit) > 0 || m.class != nil:
			var i int
			if len(m.lit) > 0 {
				i = bytes.Index(data[pos:], m.lit)
			} else {
				i = m.class.index(data[pos:])
			}
			if i < 0 {
				return
			}
			i += pos
			start, end := lineBounds(data, pos, i)
			loc := m.re.FindIndex(data[start:end])
			if loc == nil {
				pos = end + 1
				continue
			}
			at = start + loc[0]
		default:
			loc := m.re.FindIndex(data[pos:])
			if loc == nil {
				return
			}
			at = pos + loc[0]
		}
		start, end := lineBounds(data, pos, at)
		if at == len(data) && start == at {
			return // an empty match after the last line break is no line
		}
		line += bytes.Count(data[counted:start], newline)
		counted = start
		if !hit(line, start, end, at) {
			return
		}
		pos = end + 1
	}
}

var newline = []byte{'\n'}

// lineBounds returns the start and end of the line holding offset at,
// knowing that a line starts at or before from.
func lineBounds(data []byte, from, at int) (int, int) {
	start := from + bytes.LastIndexByte(data[from:at], '\n') + 1
	end := bytes.IndexByte(data[at:], '\n')
	if end < 0 {
		return start, len(data)
	}
	return start, at + end
}

// contextLines returns up to n lines before the line [start, end) and up
// to n after it, as previews.
func contextLines(data []byte, start, end, n int) (before, after []string) {
	for s := start; len(before) < n && s > 0; {
		prev := bytes.LastIndexByte(data[:s-1], '\n') + 1
		before = append(before, preview(data[prev:s-1], 0))
		s = prev
	}
	for i, j := 0, len(before)-1; i < j; i, j = i+1, j-1 {
		before[i], before[j] = before[j], before[i]
	}
	for e := end; len(after) < n && e < len(data); {
		next := bytes.IndexByte(data[e+1:], '\n')
		stop := len(data)
		if next >= 0 {
			stop = e + 1 + next
		}
		if e+1 == len(data) {
			break
		}
		after = append(after, preview(data[e+1:stop], 0))
		e = stop
	}
	return before, after
}

// preview returns the line around offset at, at most searchPreviewBytes
// long, cut on character boundaries, as valid UTF-8.
func preview(line []byte, at int) string {
	line = bytes.TrimRight(line, "\r")
	if len(line) > searchPreviewBytes {
		start := max(0, min(at-searchPreviewBytes/4, len(line)-searchPreviewBytes))
		for start > 0 && !utf8.RuneStart(line[start]) {
			start--
		}
		end := min(len(line), start+searchPreviewBytes)
		for end < len(line) && !utf8.RuneStart(line[end]) {
			end--
		}
		line = line[start:end]
	}
	return strings.ToValidUTF8(string(line), "\uFFFD")
}

// regexProblem says why a query is not a valid RE2 expression without
// Go's "error parsing regexp: " prefix: the problem and where it is.
func regexProblem(err error) string {
	var se *syntax.Error
	if errors.As(err, &se) {
		return fmt.Sprintf("not a valid RE2 regular expression: %s at %q", se.Code, se.Expr)
	}
	return "not a valid RE2 regular expression"
}
