package fsops

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestApplyPatch(t *testing.T) {
	bom := "\xEF\xBB\xBF"
	tests := []struct {
		name       string
		content    string
		reps       []Replacement
		want       string
		normalized bool
		conflict   int // replacement index of the expected conflict, or -1
		matches    int
	}{
		{"single", "hello world\n", []Replacement{{"world", "there"}}, "hello there\n", false, -1, 0},
		{"sequential", "a b c", []Replacement{{"a", "x"}, {"x b", "y"}}, "y c", false, -1, 0},
		{"delete", "keep drop keep2", []Replacement{{" drop", ""}}, "keep keep2", false, -1, 0},
		{"missing", "abc", []Replacement{{"zzz", "y"}}, "", false, 0, 0},
		{"double", "x x", []Replacement{{"x", "y"}}, "", false, 0, 2},
		{"overlapping counts", "aaa", []Replacement{{"aa", "b"}}, "", false, 0, 2},
		{"second conflicts", "one two", []Replacement{{"one", "1"}, {"three", "3"}}, "", false, 1, 0},
		{"later sees earlier", "ab", []Replacement{{"a", "b"}, {"b", "c"}}, "", false, 1, 2},
		{"crlf kept, LF old normalized", "l1\r\nl2\r\nl3\r\n", []Replacement{{"l1\nl2\n", "x\ny\nz\n"}},
			"x\r\ny\r\nz\r\nl3\r\n", true, -1, 0},
		{"crlf old matches as is", "l1\r\nl2\r\n", []Replacement{{"l1\r\nl2", "m"}}, "m\r\n", false, -1, 0},
		{"crlf single-line old, multi-line new", "a\r\nb\r\n", []Replacement{{"a", "a1\na2"}},
			"a1\r\na2\r\nb\r\n", false, -1, 0},
		{"crlf match may not split a pair", "a\r\nb\r\n", []Replacement{{"a\r", "x"}}, "", false, 0, 0},
		{"crlf match may not start inside a pair", "a\r\nb", []Replacement{{"\nb", "x"}},
			"ax", true, -1, 0}, // "\nb" becomes "\r\nb"
		{"lf file, CRLF old", "l1\nl2\n", []Replacement{{"l1\r\nl2", "a\r\nb"}}, "a\nb\n", true, -1, 0},
		{"mixed endings exact only", "a\r\nb\nc", []Replacement{{"a\nb", "x"}}, "", false, 0, 0},
		{"mixed endings exact match", "a\r\nb\nc", []Replacement{{"b\nc", "x"}}, "a\r\nx", false, -1, 0},
		{"bom kept", bom + "hello", []Replacement{{"hello", "bye"}}, bom + "bye", false, -1, 0},
		{"bom never matched", bom + "hello", []Replacement{{bom + "hello", "bye"}}, "", false, 0, 0},
		{"bom replace at start", bom + "hello", []Replacement{{"h", "H"}}, bom + "Hello", false, -1, 0},
		{"bom and crlf", bom + "a\r\nb\r\n", []Replacement{{"a\nb", "c\nd"}}, bom + "c\r\nd\r\n", true, -1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, norm, err := applyPatch([]byte(tt.content), tt.reps)
			if tt.conflict >= 0 {
				var ce *ConflictError
				if !errors.As(err, &ce) {
					t.Fatalf("got %q, %v; want conflict at %d", out, err, tt.conflict)
				}
				if ce.Reason != ReasonMatchCount || ce.Replacement != tt.conflict || ce.Matches != tt.matches {
					t.Fatalf("conflict %+v; want replacement %d with %d matches", ce, tt.conflict, tt.matches)
				}
				if !strings.Contains(ce.Message, "replacement ") {
					t.Errorf("message %q does not name the replacement", ce.Message)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tt.want || norm != tt.normalized {
				t.Fatalf("got %q normalized=%v, want %q normalized=%v", out, norm, tt.want, tt.normalized)
			}
		})
	}
}

func TestApplyPatchInvalid(t *testing.T) {
	for _, reps := range [][]Replacement{nil, {{"", "x"}}, {{"a", "b"}, {"", "c"}}} {
		_, _, err := applyPatch([]byte("abc"), reps)
		if !errors.Is(err, ErrInvalidInput) {
			t.Errorf("applyPatch(%v) = %v, want an input error", reps, err)
		}
	}
}

// FuzzPatch checks applyPatch against an independent brute-force model:
// every applied replacement matched exactly one place (overlaps counted,
// CRLF pairs never split) in the text it was applied to, a conflict is
// reported exactly when one did not, a CRLF file never gains a bare LF, and
// a BOM is kept.
func FuzzPatch(f *testing.F) {
	f.Add("hello world\n", "world", "there", "", "", false, false)
	f.Add("a\nb\nc\n", "a\nb", "x\ny", "c", "z", true, false)
	f.Add("a\r\nb\r\n", "a\r", "x", "", "", true, true)
	f.Add("aaa", "aa", "b", "", "", false, false)
	f.Add("x\ny\n", "\ny", "\r\nq", "q", "\n", true, true)
	f.Fuzz(func(t *testing.T, content, old1, new1, old2, new2 string, crlf, bom bool) {
		if crlf {
			content = toCRLF(content)
		}
		if bom {
			content = "\xEF\xBB\xBF" + content
		}
		reps := []Replacement{{old1, new1}}
		if old2 != "" {
			reps = append(reps, Replacement{old2, new2})
		}
		out, _, err := applyPatch([]byte(content), reps)

		text := strings.TrimPrefix(content, "\xEF\xBB\xBF")
		hadBOM := len(text) != len(content)
		pureCRLF := strings.Contains(text, "\r\n") && strings.Count(text, "\n") == strings.Count(text, "\r\n")
		pureLF := strings.Contains(text, "\n") && !strings.Contains(text, "\r\n")
		for i, r := range reps {
			if r.Old == "" {
				if !errors.Is(err, ErrInvalidInput) {
					t.Fatalf("empty old %d accepted: %v", i, err)
				}
				return
			}
			o, n := r.Old, r.New
			switch {
			case pureCRLF:
				o = strings.ReplaceAll(strings.ReplaceAll(o, "\r\n", "\n"), "\n", "\r\n")
				n = strings.ReplaceAll(strings.ReplaceAll(n, "\r\n", "\n"), "\n", "\r\n")
			case pureLF:
				o, n = strings.ReplaceAll(o, "\r\n", "\n"), strings.ReplaceAll(n, "\r\n", "\n")
			}
			var at []int
			for k := 0; k+len(o) <= len(text); k++ {
				if text[k:k+len(o)] != o {
					continue
				}
				end := k + len(o)
				if pureCRLF && (k > 0 && text[k-1] == '\r' && text[k] == '\n' || end < len(text) && text[end-1] == '\r' && text[end] == '\n') {
					continue
				}
				at = append(at, k)
			}
			if len(at) != 1 {
				var ce *ConflictError
				if !errors.As(err, &ce) || ce.Replacement != i || ce.Matches != len(at) {
					t.Fatalf("replacement %d matches %d places, but applyPatch returned %q, %v", i, len(at), out, err)
				}
				return
			}
			text = text[:at[0]] + n + text[at[0]+len(o):]
		}
		if err != nil {
			t.Fatalf("every replacement matched once, but applyPatch failed: %v", err)
		}
		want := text
		if hadBOM {
			want = "\xEF\xBB\xBF" + text
		}
		if string(out) != want {
			t.Fatalf("applyPatch = %q, want %q", out, want)
		}
		if hadBOM != bytes.HasPrefix(out, utf8BOM) && hadBOM {
			t.Fatalf("BOM lost: %q", out)
		}
		if pureCRLF {
			body := strings.TrimPrefix(string(out), "\xEF\xBB\xBF")
			if strings.Count(body, "\n") != strings.Count(body, "\r\n") {
				t.Fatalf("CRLF file gained a bare LF: %q", out)
			}
		}
	})
}
