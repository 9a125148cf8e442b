package ledger

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"strings"
	"sync"
	"testing"

	"golang.org/x/mod/sumdb/tlog"
)

func TestCanonical(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{ "b" : 1, "a" : [true, false, null] }`, `{"a":[true,false,null],"b":1}`},
		{`{"é":1,"z":2,"A":3,"":4}`, `{"":4,"A":3,"z":2,"é":1}`},
		{`"<a & b>\u2028\u0001\t\"\\/"`, `"<a & b>` + "\u2028" + `\u0001\t\"\\/"`},
		{`[1.0, -0, 0.0, -0.0, 1e21, 1.5e-7, 0.1, 100, 1e2, 123456789012345678901234567890]`,
			`[1,0,0,0,1e+21,1.5e-7,0.1,100,100,123456789012345678901234567890]`},
		{`{"x":{"d":{},"c":[]}}`, `{"x":{"c":[],"d":{}}}`},
		{"\"\xff\"", "\"\ufffd\""},
	}
	for _, c := range cases {
		got, err := Canonical(json.RawMessage(c.in))
		if err != nil {
			t.Errorf("Canonical(%s): %v", c.in, err)
			continue
		}
		if string(got) != c.want {
			t.Errorf("Canonical(%s) = %s, want %s", c.in, got, c.want)
		}
		again, err := Canonical(json.RawMessage(got))
		if err != nil || string(again) != string(got) {
			t.Errorf("Canonical is not idempotent on %s: %s, %v", got, again, err)
		}
	}
	for _, bad := range []string{`{"a":1} x`, `{"a":}`, `1e400`, ``} {
		if got, err := Canonical(json.RawMessage(bad)); err == nil {
			t.Errorf("Canonical(%q) = %s, want an error", bad, got)
		}
	}
	got, err := Canonical(struct {
		B string `json:"b"`
		A int    `json:"a"`
	}{"<&>", 7})
	if err != nil || string(got) != `{"a":7,"b":"<&>"}` {
		t.Errorf("Canonical(struct) = %s, %v", got, err)
	}
}

func TestAppendAndVerify(t *testing.T) {
	ctx := context.Background()
	l, db := newTestLedger(t)

	e1, err := l.Append(ctx, KindIntent, map[string]any{"primitive": "fs.write", "input_sha256": sha256Hex(1)})
	if err != nil {
		t.Fatal(err)
	}
	if e1.Seq != 1 || e1.Prev != GenesisPrev || e1.Kind != KindIntent {
		t.Fatalf("first entry = %+v", e1)
	}
	want := `{"data":{"input_sha256":"` + sha256Hex(1) + `","primitive":"fs.write"},"kind":"intent","prev":"` +
		GenesisPrev + `","seq":1,"ts":"2026-01-02T03:04:05.001Z"}`
	if string(e1.Raw) != want {
		t.Fatalf("entry bytes\n got %s\nwant %s", e1.Raw, want)
	}
	e2, err := l.Append(ctx, KindOutcome, nil)
	if err != nil {
		t.Fatal(err)
	}
	if e2.Seq != 2 || e2.Prev != e1.Hash() || string(e2.Data) != "{}" {
		t.Fatalf("second entry = %+v, want prev %s", e2, e1.Hash())
	}
	parsed, err := ParseEntry(e2.Raw)
	if err != nil || parsed.Seq != 2 || !parsed.Time.Equal(e2.Time) || parsed.Prev != e2.Prev {
		t.Fatalf("ParseEntry = %+v, %v", parsed, err)
	}
	appendN(t, l, 11)

	cp1, err := l.Checkpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(cp1), "hearth/test-a\n13\n") {
		t.Fatalf("checkpoint text:\n%s", cp1)
	}
	cp2, err := l.Checkpoint(ctx)
	if err != nil || string(cp2) != string(cp1) {
		t.Fatalf("second checkpoint of an unchanged ledger = %q, %v", cp2, err)
	}
	rep, err := VerifyDB(ctx, db, ExpectKey(l.PublicKey()))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Entries != 13 || rep.CheckpointSize != 13 || rep.Checkpoints != 1 || rep.Unsigned != 0 ||
		rep.Origin != "hearth/test-a" || rep.PublicKey != l.PublicKey() {
		t.Fatalf("report = %+v", rep)
	}

	// The checkpoint root is the tree hash tlog computes from stored hashes.
	var root tlog.Hash
	err = db.InTx(ctx, func(tx *sql.Tx) error {
		root, err = tlog.TreeHash(13, hashReader{ctx, tx})
		return err
	})
	if err != nil || root.String() != rep.RootHash {
		t.Fatalf("tlog.TreeHash = %s, %v; report root %s", root, err, rep.RootHash)
	}

	appendN(t, l, 3)
	rep, err = VerifyDB(ctx, db)
	if err != nil || rep.Entries != 16 || rep.Unsigned != 3 {
		t.Fatalf("after more appends: %+v, %v", rep, err)
	}
	tail, err := l.Tail(ctx, 2)
	if err != nil || len(tail) != 2 || tail[0].Seq != 15 || tail[1].Seq != 16 {
		t.Fatalf("Tail(2) = %+v, %v", tail, err)
	}
	if n, err := l.Size(ctx); err != nil || n != 16 {
		t.Fatalf("Size = %d, %v", n, err)
	}
}

func TestVerifyEmpty(t *testing.T) {
	ctx := context.Background()
	l, db := newTestLedger(t)
	if _, err := VerifyDB(ctx, db); err != nil {
		t.Fatalf("empty ledger without checkpoint: %v", err)
	}
	if _, err := VerifyDB(ctx, db, ExpectKey(l.PublicKey())); err == nil {
		t.Fatal("ExpectKey with no checkpoint verified")
	}
	b := exportBundle(t, l, 0)
	rep, err := VerifyBundle(strings.NewReader(string(b)), ExpectKey(l.PublicKey()))
	if err != nil || rep.Entries != 0 || rep.CheckpointSize != 0 {
		t.Fatalf("empty bundle: %+v, %v", rep, err)
	}
}

func TestAppendTxRollback(t *testing.T) {
	ctx := context.Background()
	l, db := newTestLedger(t)
	appendN(t, l, 2)
	boom := errors.New("caller's state change failed")
	err := db.InTx(ctx, func(tx *sql.Tx) error {
		if _, err := l.AppendTx(ctx, tx, KindIntent, map[string]any{"n": 1}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("InTx = %v", err)
	}
	e, err := l.Append(ctx, KindOutcome, map[string]any{"n": 2})
	if err != nil || e.Seq != 3 {
		t.Fatalf("append after rollback: seq %d, %v", e.Seq, err)
	}
	if _, err := l.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := VerifyDB(ctx, db); err != nil {
		t.Fatal(err)
	}
}

func TestAppendRefusesForbiddenKeys(t *testing.T) {
	ctx := context.Background()
	l, db := newTestLedger(t)
	cases := []struct {
		data any
		key  string
	}{
		{map[string]any{"openai/session": "sess_123"}, "openai/session"},
		{map[string]any{"meta": map[string]any{"openai/subject": "v1/abc"}}, "openai/subject"},
		{map[string]any{"list": []any{1, map[string]any{"openai/organization": "org"}}}, "openai/organization"},
		{map[string]any{"API_KEY": "sk-live"}, "API_KEY"},
		{map[string]any{"key": "x"}, "key"},
		{map[string]any{"secret": "x"}, "secret"},
		{map[string]any{"Token": "x"}, "Token"},
		{json.RawMessage(`{"a":{"password":"hunter2"}}`), "password"},
	}
	for _, c := range cases {
		_, err := l.Append(ctx, KindPolicyChange, c.data)
		if !errors.Is(err, ErrForbiddenKey) || !strings.Contains(err.Error(), `"`+c.key+`"`) {
			t.Errorf("Append(%v) = %v, want ErrForbiddenKey naming %q", c.data, err, c.key)
		}
	}
	for _, bad := range []struct {
		kind string
		data any
	}{
		{"", nil}, {"Intent", nil}, {"intent!", nil}, {KindIntent, []int{1}}, {KindIntent, "str"},
		{KindIntent, json.RawMessage(`{"a":1} {}`)},
	} {
		if _, err := l.Append(ctx, bad.kind, bad.data); err == nil {
			t.Errorf("Append(%q, %v) succeeded", bad.kind, bad.data)
		}
	}
	if n, err := l.Size(ctx); err != nil || n != 0 {
		t.Fatalf("refused appends left %d entries (%v)", n, err)
	}
	if _, err := l.Append(ctx, KindTunnelKeySet, map[string]any{"key_sha256": sha256Hex(9), "route_sha256": sha256Hex(8)}); err != nil {
		t.Fatalf("digest keys refused: %v", err)
	}

	// None of the refused values reached the database or an export.
	bundle := exportBundle(t, l, 0)
	var files [][]byte
	for _, f := range []string{db.Path, db.Path + "-wal"} {
		b, err := os.ReadFile(f)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		files = append(files, b)
	}
	for _, secret := range []string{"sess_123", "v1/abc", "sk-live", "hunter2"} {
		for i, b := range append(files, bundle) {
			if bytes.Contains(b, []byte(secret)) {
				t.Errorf("%q found in %s", secret, []string{"database", "WAL", "bundle"}[i])
			}
		}
	}
}

func TestConcurrentAppend(t *testing.T) {
	ctx := context.Background()
	l, db := newTestLedger(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				if _, err := l.Append(ctx, KindIntent, map[string]any{"g": g, "i": i}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if _, err := l.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	rep, err := VerifyDB(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Entries != 1600 || rep.CheckpointSize != 1600 {
		t.Fatalf("report = %+v", rep)
	}
	seen := make(map[[2]int]bool)
	tail, err := l.Tail(ctx, 2000)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range tail {
		if e.Seq != int64(i+1) {
			t.Fatalf("entry %d has seq %d", i+1, e.Seq)
		}
		var d struct{ G, I int }
		if err := json.Unmarshal(e.Data, &d); err != nil {
			t.Fatal(err)
		}
		seen[[2]int{d.G, d.I}] = true
	}
	if len(seen) != 1600 {
		t.Fatalf("%d distinct appends recorded, want 1600", len(seen))
	}
}
