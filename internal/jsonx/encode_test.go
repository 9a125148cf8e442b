package jsonx

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// tricky is what a string encoder gets wrong: every ASCII control, the
// characters escaped for HTML, quotes and backslashes, invalid and
// truncated UTF-8, the line and paragraph separators, and multibyte text.
var tricky = []string{"", "plain", `"`, `\`, "<a href=\"x\">&amp;</a>", "\x00\x01\x07\b\t\n\v\f\r\x1b\x1f\x7f",
	"\u2028\u2029", "\xff", "a\xc3", "\xed\xa0\x80", "héllo wörld", "日本語", "emoji 😀", "\ufffd", "tab\there",
	strings.Repeat("x", 300), "C:\\Users\\me\\notes.txt", "/home/me/a b/c.txt"}

func TestAppendStringMatchesMarshal(t *testing.T) {
	check := func(s string) {
		t.Helper()
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendString(nil, s); string(got) != string(want) {
			t.Fatalf("AppendString(%q) = %s, Marshal %s", s, got, want)
		}
	}
	for _, s := range tricky {
		check(s)
	}
	for b := range 256 {
		check(string([]byte{byte(b)}))
		check("a" + string([]byte{byte(b)}) + "z")
	}
	for r := rune(0); r < 0x3000; r++ {
		check(string(r))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		n := rng.IntN(24)
		b := make([]byte, n)
		for i := range b {
			if rng.IntN(3) == 0 {
				b[i] = byte(rng.IntN(256))
			} else {
				const alphabet = "a<>&\"\\\n\x00\xe2\x80\xa8\xc3\xa9"
				b[i] = alphabet[rng.IntN(len(alphabet))]
			}
		}
		check(string(b))
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range tricky {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := AppendString(nil, s); string(got) != string(want) {
			t.Fatalf("AppendString(%q) = %s, Marshal %s", s, got, want)
		}
	})
}

func TestAppendTimeMatchesMarshal(t *testing.T) {
	zones := []*time.Location{time.UTC, time.FixedZone("plus", 5*3600+30*60), time.FixedZone("minus", -(9*3600 + 59)),
		time.FixedZone("edge", 23*3600+59*60), time.FixedZone("day", 24*3600), time.FixedZone("-day", -24*3600),
		time.FixedZone("far", 100*3600)}
	times := []time.Time{{}, time.Unix(0, 0), time.Unix(1764600000, 123456789), time.Unix(1764600000, 120000000),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(0, 1, 1, 0, 0, 0, 1, time.UTC)}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		times = append(times, time.Unix(rng.Int64N(1<<36)-1<<35, rng.Int64N(1e9)))
	}
	for _, tm := range times {
		for _, z := range zones {
			tz := tm.In(z)
			want, err := json.Marshal(tz)
			got, ok := AppendTime(nil, tz)
			if ok != (err == nil) || ok && string(got) != string(want) {
				t.Fatalf("AppendTime(%v) = %s %v, Marshal %s %v", tz, got, ok, want, err)
			}
		}
	}
}
