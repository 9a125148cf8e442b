package jsonx

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// recordPaths are the objects the record tests ask for: the top level,
// one under it and one under that (the MCP edge's request, params and
// params._meta).
var recordPaths = [][]string{nil, {"p"}, {"p", "m"}}

// scanRecords scans data recording recordPaths, each into a buffer of n.
func scanRecords(data []byte, n int) ([]Record, ScanResult) {
	recs := make([]Record, len(recordPaths))
	for i, p := range recordPaths {
		recs[i] = Record{Path: p, Members: make([]Member, 0, n)}
	}
	return recs, ScanRecording(data, scanDepth, recs)
}

// show renders a record as the tests compare it.
func show(r Record) string {
	var b strings.Builder
	fmt.Fprintf(&b, "found=%d", r.Found)
	for _, flag := range []struct {
		on   bool
		name string
	}{{r.Full, "full"}, {r.Repeated, "repeated"}, {r.Escaped, "escaped"}} {
		if flag.on {
			b.WriteString(" " + flag.name)
		}
	}
	for _, m := range r.Members {
		e := ""
		if m.Escaped {
			e = "(esc)"
		}
		fmt.Fprintf(&b, " %s%s=%s", m.Key, e, m.Value)
	}
	return b.String()
}

// TestScanRecords: each rule of the recording: the members of the objects
// asked for, keys and values as written (whitespace around a value left
// out), an escaped key flagged, a repeated key flagged, a buffer too
// small flagged full, an object met twice counted, paths through arrays
// and values that are not objects not recorded.
func TestScanRecords(t *testing.T) {
	cases := []struct {
		body string
		want [3]string // top, p, p.m
	}{
		{`{"a":1,"p":{"x":"y","m":{"k":[1,2]}}}`,
			[3]string{`found=1 a=1 p={"x":"y","m":{"k":[1,2]}}`, `found=1 x="y" m={"k":[1,2]}`, `found=1 k=[1,2]`}},
		{" { \"a\" :\t1 ,\n\"p\" : { \"m\" : { } } } ",
			[3]string{`found=1 a=1 p={ "m" : { } }`, `found=1 m={ }`, `found=1`}},
		{`{"a\u0041":1,"p":{"m\n":2,"m":{"k\"":3}}}`,
			[3]string{`found=1 escaped a\u0041(esc)=1 p={"m\n":2,"m":{"k\"":3}}`, `found=1 escaped m\n(esc)=2 m={"k\"":3}`, `found=1 escaped k\"(esc)=3`}},
		{`{"a":1,"a":2,"p":{"b":1,"b":2,"m":{"c":1,"c":{}}}}`,
			[3]string{`found=1 repeated a=1 a=2 p={"b":1,"b":2,"m":{"c":1,"c":{}}}`, `found=1 repeated b=1 b=2 m={"c":1,"c":{}}`, `found=1 repeated c=1 c={}`}},
		{`{"A":1,"a":2}`, [3]string{`found=1 A=1 a=2`, `found=0`, `found=0`}}, // another case is another key here
		{`{"p":{"m":{"1":1,"2":2,"3":3,"4":4,"5":5}}}`,
			[3]string{`found=1 p={"m":{"1":1,"2":2,"3":3,"4":4,"5":5}}`, `found=1 m={"1":1,"2":2,"3":3,"4":4,"5":5}`, `found=1 full 1=1 2=2 3=3 4=4`}},
		{`{"p":{"m":1},"p":{"m":{"z":0}}}`,
			[3]string{`found=1 repeated p={"m":1} p={"m":{"z":0}}`, `found=2 repeated m=1 m={"z":0}`, `found=1 z=0`}},
		{`{"p":[{"m":{"z":0}}],"q":{"p":{"m":{}}}}`,
			[3]string{`found=1 p=[{"m":{"z":0}}] q={"p":{"m":{}}}`, `found=0`, `found=0`}},
		{`{"p":"m","x":null}`, [3]string{`found=1 p="m" x=null`, `found=0`, `found=0`}},
		{`[{"p":{}}]`, [3]string{`found=0`, `found=0`, `found=0`}},
		{`{"p\u006d":{"m":{}}}`, [3]string{`found=1 escaped p\u006d(esc)={"m":{}}`, `found=0`, `found=0`}},
		{"{\"p\":{\"m\":{\"k\":\"\xff\",\"j\":true}},\"z\":1}", // a bad string does not stop the records
			[3]string{"found=1 p={\"m\":{\"k\":\"\xff\",\"j\":true}} z=1", "found=1 m={\"k\":\"\xff\",\"j\":true}", "found=1 k=\"\xff\" j=true"}},
	}
	for _, c := range cases {
		recs, res := scanRecords([]byte(c.body), 4)
		if res.Invalid || res.TooDeep {
			t.Fatalf("%s: %+v", c.body, res)
		}
		for i, r := range recs {
			if got := show(r); got != c.want[i] {
				t.Errorf("%s: record %v = %s, want %s", c.body, recordPaths[i], got, c.want[i])
			}
		}
	}
	if r, _ := scanRecords([]byte("{\"p\":{\"m\":{\"k\":\"\xff\"}}}"), 4); !bytes.Equal(r[2].Members[0].Value, []byte("\"\xff\"")) {
		t.Errorf("bad string's value: %q", r[2].Members[0].Value)
	}
}

// TestScanRecordsDoNotAllocate: recording into the caller's buffers
// costs no allocation beyond Scan's own.
func TestScanRecordsDoNotAllocate(t *testing.T) {
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","p":{"name":"fs","arguments":{"path":"/a"},"m":{"hearth/conversation":"c1"}}}`)
	var bufs [3][8]Member
	recs := make([]Record, 3)
	plainScan := testing.AllocsPerRun(20, func() { Scan(body, scanDepth) })
	recording := testing.AllocsPerRun(20, func() {
		for i, p := range recordPaths {
			recs[i] = Record{Path: p, Members: bufs[i][:0]}
		}
		ScanRecording(body, scanDepth, recs)
	})
	if recording > plainScan {
		t.Errorf("ScanRecording allocates %v times, Scan %v", recording, plainScan)
	}
	if len(recs[2].Members) != 1 || string(recs[2].Members[0].Key) != "hearth/conversation" {
		t.Errorf("records: %s", show(recs[2]))
	}
}

// checkRecords: for valid JSON, what the records hold is what a decoder
// reads of those objects (each member's value, in order).
func checkRecords(t *testing.T, data []byte) {
	t.Helper()
	recs, res := scanRecords(data, 64)
	if res.Invalid || res.TooDeep || res.BadPath != nil {
		return // a bad string: the decoder alters the text
	}
	top, err := decodeAny(data)
	if err != nil {
		t.Errorf("%q: Scan finds it valid, the decoder: %v", data, err)
		return
	}
	for i, p := range recordPaths {
		want := top
		for _, k := range p {
			obj, _ := want.(map[string]any)
			want = obj[k]
		}
		obj, isObj := want.(map[string]any)
		r := recs[i]
		if r.Found > 1 || r.Full || r.Escaped || r.Repeated || recs[0].Repeated || i == 2 && recs[1].Repeated ||
			recs[0].Escaped || i == 2 && recs[1].Escaped {
			continue // the decoder's reading is not one of these records
		}
		if isObj != (r.Found == 1) {
			t.Errorf("%q: record %v found %d, the decoder reads %T", data, p, r.Found, want)
			continue
		}
		if !isObj {
			continue
		}
		if len(obj) != len(r.Members) {
			t.Errorf("%q: record %v has %d members, the decoder %d", data, p, len(r.Members), len(obj))
		}
		for _, m := range r.Members {
			v, err := decodeAny(m.Value)
			if err != nil {
				t.Errorf("%q: record %v member %s: value %q: %v", data, p, m.Key, m.Value, err)
				continue
			}
			if fmt.Sprint(v) != fmt.Sprint(obj[string(m.Key)]) {
				t.Errorf("%q: record %v member %s = %v, the decoder %v", data, p, m.Key, v, obj[string(m.Key)])
			}
		}
	}
}

// decodeAny decodes JSON text as encoding/json does into an any, with
// numbers kept as written (1E700 is valid JSON, no float64).
func decodeAny(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}
