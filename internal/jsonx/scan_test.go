package jsonx

import (
	"encoding/json"
	"strings"
	"testing"
)

// scanDepth is the depth bound the tests scan with (the MCP server's
// MaxJSONDepth).
const scanDepth = 128

// scanCases are bodies at the edges of JSON's grammar, of the depth bound
// and of the string checks.
var scanCases = []string{
	``, ` `, `{}`, `[]`, ` {} `, "\t[\r\n]\n", `{"a":1}`, `{"a":1,}`, `{,}`, `{"a" 1}`, `{"a":}`, `{"a":1 "b":2}`,
	`{"a":1}}`, `{"a":1}x`, `{"a":1} {}`, `{1:2}`, `{'a':1}`, `[1,]`, `[,1]`, `[1 2]`, `[1,,2]`, `]`, `}`, `[`, `{`,
	`{"a":[1,{"b":null}],"c":true,"d":false}`, `tru`, `true`, `truex`, `nul`, `null`, `nulll`, `falsey`, `f`,
	`0`, `-0`, `01`, `-01`, `1.`, `1.5`, `.5`, `1e`, `1e+`, `1e+5`, `1E-5`, `-`, `--1`, `+1`, `1.5e3.2`, `0x10`,
	`-1.0e-0`, `1_000`, `123456789012345678901234567890`, `Infinity`, `NaN`,
	`"a"`, `"a`, `"\"`, `"\\"`, `"\/"`, `"\b\f\n\r\t"`, `"\a"`, `"\x41"`, `"\u0041"`, `"\u004"`, `"\u00g1"`, `"\U0041"`,
	`"\ud800"`, `"\ud800\udc00"`, `"\udc00"`, `"\ud800x"`, `"\ud800\u0041"`, `"\uD83D\uDE00"`, "\"a\tb\"", "\"a\nb\"",
	"\"\x00\"", "\"\x1f\"", "\"\x7f\"", "\"\xff\"", "\"caf\xc3\xa9\"", "\"\xc3\"", "{\"k\xff\":1}", "[\"ok\",\"\xed\xa0\x80\"]",
	"\xef\xbb\xbf{}", "{}\x00", "\x00", "{\"a\":1}\v", `{"a":"\`, `{"a":"\u`, `["\u12`,
	strings.Repeat("[", scanDepth) + strings.Repeat("]", scanDepth),
	strings.Repeat("[", scanDepth+1) + strings.Repeat("]", scanDepth+1),
	strings.Repeat("[", scanDepth+1) + strings.Repeat("]", scanDepth),
	strings.Repeat(`{"a":`, scanDepth+1) + `1` + strings.Repeat("}", scanDepth+1),
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	"[\"\xff\"", "[\"\xff\",", "{\"a\":\"\xff\"} x",
}

// TestScanValidAsJSONValid: Scan's walk tells valid JSON from
// invalid exactly as json.Valid does (so the MCP server's fingerprint needs
// no second pass), the depth bound and the string checks included.
func TestScanValidAsJSONValid(t *testing.T) {
	for _, c := range scanCases {
		checkScan(t, []byte(c))
	}
	r := Scan([]byte(`{"a":{"b":["x","`+"\xff"+`"]}}`), scanDepth)
	if got := strings.Join(r.BadPath, "|"); got != "a|b|[1]" || r.Invalid || r.TooDeep {
		t.Errorf("bad string in an array: %+v", r)
	}
	r = Scan([]byte("{\"ok\":1,\"k\xff\":1}"), scanDepth)
	if got := strings.Join(r.BadPath, "|"); got != "k\xff" {
		t.Errorf("bad key: %+v", r)
	}
	if r := Scan([]byte(`{"a":"\ud800"}`), scanDepth); strings.Join(r.BadPath, "|") != "a" {
		t.Errorf("lone surrogate: %+v", r)
	}
	if r := Scan([]byte(strings.Repeat("[", scanDepth+1)+strings.Repeat("]", scanDepth+1)), scanDepth); !r.TooDeep || r.Invalid {
		t.Errorf("too deep: %+v", r)
	}
}

func checkScan(t *testing.T, data []byte) {
	t.Helper()
	r := Scan(data, scanDepth)
	if got, want := r.Valid(data), json.Valid(data); got != want {
		t.Errorf("Scan(%q).Valid = %v (%+v), json.Valid %v", data, got, r, want)
	}
	if r.Invalid && r.TooDeep {
		t.Errorf("Scan(%q) = %+v: invalid and stopped", data, r)
	}
	checkRecords(t, data)
}

func FuzzScan(f *testing.F) {
	for _, c := range scanCases {
		f.Add([]byte(c))
	}
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fs","arguments":{"operation":"stat","path":"/a"},"_meta":{"k":[1.5e3,-0,true,null]}}}`))
	// The record tests' paths (the top level, p, p.m), with what the
	// records flag: escapes, repeats, more members than a buffer holds.
	f.Add([]byte(`{"a":1,"p":{"x":"y","m":{"k":[1,2],"j":{"m":{}}}},"q":[{"p":{"m":{}}}]}`))
	f.Add([]byte(`{"p\u0041":1,"p":{"m\n":2,"m":{"k\"":3,"k\"":4}},"p":{"m":5}}`))
	f.Add([]byte(" { \"p\" : { \"m\" : { \"a\" : \"\xff\" , \"b\" : [ ] } } } "))
	f.Fuzz(func(t *testing.T, data []byte) { checkScan(t, data) })
}

// TestScanIsLinear: a body of many literals and numbers is walked
// without copying the rest of it at each one (a 4 MiB body of literals
// took minutes when each literal's check copied what follows it).
func TestScanIsLinear(t *testing.T) {
	body := []byte("[" + strings.Repeat("true,false,null,12,", 20000) + "true]")
	if r := Scan(body, scanDepth); r.Invalid || r.TooDeep || r.BadPath != nil {
		t.Fatalf("Scan: %+v", r)
	}
	if a := testing.AllocsPerRun(3, func() { Scan(body, scanDepth) }); a > 1 {
		t.Errorf("Scan of %d literals allocates %v times, want at most 1 (the walk's state)", 80000, a)
	}
}
