package changes

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"
)

// DiffLine is one line of a unified diff: Kind is ' ' (context), '-'
// (removed), '+' (added) or '@' (a hunk header).
type DiffLine struct {
	Kind byte
	Text string
}

// Class is the line's CSS class.
func (l DiffLine) Class() string {
	switch l.Kind {
	case '-':
		return "diff-del"
	case '+':
		return "diff-add"
	case '@':
		return "diff-hunk"
	}
	return "diff-ctx"
}

// String is the line as a unified diff writes it.
func (l DiffLine) String() string {
	if l.Kind == '@' {
		return l.Text
	}
	return string(l.Kind) + l.Text
}

// maxDiffCells bounds the comparison table (lines before × lines after,
// once the common start and end are set aside); beyond it the middle is
// shown as removed, then added.
const maxDiffCells = 4 << 20

// Text reports whether b reads as text: valid UTF-8 without NUL bytes.
func Text(b []byte) bool {
	return utf8.Valid(b) && bytes.IndexByte(b, 0) < 0
}

// Unified is the unified diff of a and b with context lines of context
// around each change (nil when they are equal).
func Unified(a, b []byte, context int) []DiffLine {
	x, y := splitLines(a), splitLines(b)
	ops := compare(x, y)
	// Hunks: runs of changes with their context, merged when close.
	var out []DiffLine
	n := len(ops)
	i := 0
	for i < n {
		for i < n && ops[i].kind == ' ' {
			i++
		}
		if i == n {
			break
		}
		start := max(0, i-context)
		end := i
		for end < n {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < n && ops[run].kind == ' ' {
				run++
			}
			if run == n || run-end > 2*context {
				end = min(n, end+context)
				break
			}
			end = run
		}
		var ai, bi, al, bl int
		ai, bi = ops[start].ai, ops[start].bi
		for _, o := range ops[start:end] {
			if o.kind != '+' {
				al++
			}
			if o.kind != '-' {
				bl++
			}
		}
		out = append(out, DiffLine{'@', "@@ -" + span(ai, al) + " +" + span(bi, bl) + " @@"})
		for _, o := range ops[start:end] {
			t := ""
			switch o.kind {
			case '+':
				t = y[o.bi]
			default:
				t = x[o.ai]
			}
			out = append(out, DiffLine{o.kind, t})
		}
		i = end
	}
	return out
}

func span(start, n int) string {
	if n == 0 {
		return strconv.Itoa(start) + ",0"
	}
	return strconv.Itoa(start+1) + "," + strconv.Itoa(n)
}

func splitLines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	s := strings.TrimSuffix(string(b), "\n")
	return strings.Split(s, "\n")
}

type op struct {
	kind   byte
	ai, bi int
}

// compare lines x and y: the common start and end, and a longest common
// subsequence of the middle when it is small enough.
func compare(x, y []string) []op {
	pre := 0
	for pre < len(x) && pre < len(y) && x[pre] == y[pre] {
		pre++
	}
	suf := 0
	for suf < len(x)-pre && suf < len(y)-pre && x[len(x)-1-suf] == y[len(y)-1-suf] {
		suf++
	}
	var ops []op
	for i := range pre {
		ops = append(ops, op{' ', i, i})
	}
	mx, my := x[pre:len(x)-suf], y[pre:len(y)-suf]
	if len(mx)*len(my) <= maxDiffCells {
		ops = append(ops, lcs(mx, my, pre, pre)...)
	} else {
		for i := range mx {
			ops = append(ops, op{'-', pre + i, pre})
		}
		for j := range my {
			ops = append(ops, op{'+', pre + len(mx), pre + j})
		}
	}
	for k := range suf {
		ops = append(ops, op{' ', len(x) - suf + k, len(y) - suf + k})
	}
	return ops
}

// lcs diffs x and y by a longest common subsequence table.
func lcs(x, y []string, ax, by int) []op {
	n, m := len(x), len(y)
	if n == 0 || m == 0 {
		var ops []op
		for i := range x {
			ops = append(ops, op{'-', ax + i, by})
		}
		for j := range y {
			ops = append(ops, op{'+', ax + n, by + j})
		}
		return ops
	}
	t := make([]int32, (n+1)*(m+1))
	w := m + 1
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if x[i] == y[j] {
				t[i*w+j] = t[(i+1)*w+j+1] + 1
			} else {
				t[i*w+j] = max(t[(i+1)*w+j], t[i*w+j+1])
			}
		}
	}
	var ops []op
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && x[i] == y[j]:
			ops = append(ops, op{' ', ax + i, by + j})
			i++
			j++
		case i < n && (j == m || t[(i+1)*w+j] >= t[i*w+j+1]):
			ops = append(ops, op{'-', ax + i, by + j})
			i++
		default:
			ops = append(ops, op{'+', ax + i, by + j})
			j++
		}
	}
	return ops
}
