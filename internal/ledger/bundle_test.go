package ledger

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"
)

func TestExportVerifyBundle(t *testing.T) {
	ctx := context.Background()
	l, _ := newTestLedger(t)
	appendN(t, l, 10)
	b1 := exportBundle(t, l, SinceLastExport)
	rep, err := VerifyBundle(bytes.NewReader(b1), ExpectKey(l.PublicKey()))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Entries != 10 || rep.CheckpointSize != 10 || rep.InclusionProofs != 10 || rep.ConsistencyFrom != 0 ||
		rep.Origin != "hearth/test-a" || rep.PublicKey != l.PublicKey() {
		t.Fatalf("first bundle report = %+v", rep)
	}

	appendN(t, l, 7)
	b2 := exportBundle(t, l, SinceLastExport)
	rep, err = VerifyBundle(bytes.NewReader(b2), ExpectKey(l.PublicKey()))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Entries != 17 || rep.InclusionProofs != 17 || rep.ConsistencyFrom != 10 {
		t.Fatalf("second bundle report = %+v", rep)
	}
	var bun bundle
	if err := json.Unmarshal(b2, &bun); err != nil {
		t.Fatal(err)
	}
	if bun.Consistency.OldCheckpoint == "" {
		t.Fatal("second bundle lacks the checkpoint of the first export")
	}
	// The entries in the bundle are the stored bytes, exactly.
	tail, err := l.Tail(ctx, 17)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range tail {
		if bun.Entries[i] != string(e.Raw) {
			t.Fatalf("bundle entry %d differs from the stored bytes", i+1)
		}
	}

	// An explicit size proves consistency from there.
	rep, err = VerifyBundle(bytes.NewReader(exportBundle(t, l, 3)))
	if err != nil || rep.ConsistencyFrom != 3 {
		t.Fatalf("since 3: %+v, %v", rep, err)
	}
	if err := l.Export(ctx, &bytes.Buffer{}, 18); err == nil {
		t.Fatal("export from a size past the ledger succeeded")
	}
}

func TestInclusionSample(t *testing.T) {
	for _, n := range []int64{0, 1, 7, InclusionAll, InclusionAll + 1, 1_000_000, 1_234_567} {
		seqs := inclusionSeqs(n)
		if n == 0 {
			if len(seqs) != 0 {
				t.Errorf("n=0: %d seqs", len(seqs))
			}
			continue
		}
		if n <= InclusionAll && int64(len(seqs)) != n {
			t.Errorf("n=%d: %d seqs, want all", n, len(seqs))
		}
		if len(seqs) > InclusionAll+1 || seqs[0] != 1 || seqs[len(seqs)-1] != n {
			t.Errorf("n=%d: %d seqs from %d to %d", n, len(seqs), seqs[0], seqs[len(seqs)-1])
		}
		for i := 1; i < len(seqs); i++ {
			if seqs[i] <= seqs[i-1] {
				t.Fatalf("n=%d: seqs not ascending at %d", n, i)
			}
		}
	}
}

// mutateBundle decodes b, applies f, and re-encodes it.
func mutateBundle(t *testing.T, b []byte, f func(*bundle)) []byte {
	t.Helper()
	var bun bundle
	if err := json.Unmarshal(b, &bun); err != nil {
		t.Fatal(err)
	}
	f(&bun)
	out, err := json.Marshal(bun)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// rewriteEntry re-canonicalizes entry i (0-based) after edit changes its
// decoded fields.
func rewriteEntry(t *testing.T, bun *bundle, i int, edit func(map[string]any)) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(bun.Entries[i]), &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	c, err := Canonical(m)
	if err != nil {
		t.Fatal(err)
	}
	bun.Entries[i] = string(c)
}

func TestVerifyBundleTamper(t *testing.T) {
	l, _ := newTestLedger(t)
	appendN(t, l, 6)
	if _, err := l.Checkpoint(context.Background()); err != nil {
		t.Fatal(err)
	}
	appendN(t, l, 4)
	valid := exportBundle(t, l, 6)
	if _, err := VerifyBundle(bytes.NewReader(valid)); err != nil {
		t.Fatalf("untampered bundle: %v", err)
	}
	otherSkey, otherVkey := testKey(t, "other")
	otherSigner, err := note.NewSigner(otherSkey)
	if err != nil {
		t.Fatal(err)
	}
	resign := func(bun *bundle, text string) {
		signed, err := note.Sign(&note.Note{Text: text}, otherSigner)
		if err != nil {
			t.Fatal(err)
		}
		bun.Checkpoint = string(signed)
	}
	checkpointText := func(bun *bundle) string {
		return bun.Checkpoint[:strings.Index(bun.Checkpoint, "\n\n")+1]
	}

	cases := []struct {
		name   string
		mutate func(*bundle)
		opts   []VerifyOption
		want   string
	}{
		{"flip a byte in an entry", func(b *bundle) {
			e := []byte(b.Entries[4])
			i := bytes.Index(e, []byte(`"input_sha256":"`)) + len(`"input_sha256":"`)
			e[i] ^= 0x01
			b.Entries[4] = string(e)
		}, nil, "entry seq 5: inclusion proof does not lead to the checkpoint root"},
		{"flip a byte that breaks canonical form", func(b *bundle) {
			b.Entries[4] = strings.Replace(b.Entries[4], `{"data":{`, `{"data": {`, 1)
		}, nil, "entry 5: not in canonical form"},
		{"break prev link", func(b *bundle) {
			rewriteEntry(t, b, 6, func(m map[string]any) { m["prev"] = strings.Repeat("ab", 32) })
		}, nil, "entry seq 7: prev hash mismatch"},
		{"drop the tail", func(b *bundle) {
			b.Entries = b.Entries[:9]
		}, nil, "bundle truncated: checkpoint size 10 but 9 entries"},
		{"drop the tail and its proof", func(b *bundle) {
			b.Entries = b.Entries[:9]
			b.Inclusion = b.Inclusion[:9]
		}, nil, "bundle truncated: checkpoint size 10 but 9 entries"},
		{"add an entry past the checkpoint", func(b *bundle) {
			b.Entries = append(b.Entries, b.Entries[9])
		}, nil, "bundle has 11 entries but checkpoint size 10"},
		{"reorder two entries", func(b *bundle) {
			b.Entries[4], b.Entries[5] = b.Entries[5], b.Entries[4]
		}, nil, "entry 5 out of order: seq 6"},
		{"drop a middle entry", func(b *bundle) {
			b.Entries = append(b.Entries[:3:3], b.Entries[4:]...)
		}, nil, "bundle truncated: checkpoint size 10 but 9 entries"},
		{"rewrite history from seq 5 and re-chain", func(b *bundle) {
			prev := ""
			for i := 4; i < len(b.Entries); i++ {
				rewriteEntry(t, b, i, func(m map[string]any) {
					if prev != "" {
						m["prev"] = prev
					} else {
						m["kind"] = "reset"
					}
				})
				e, err := ParseEntry([]byte(b.Entries[i]))
				if err != nil {
					t.Fatal(err)
				}
				prev = e.Hash()
			}
		}, nil, "entry seq 5: inclusion proof does not lead to the checkpoint root"},
		{"swap the key", func(b *bundle) {
			b.PublicKey = otherVkey
		}, nil, "checkpoint signature: not signed by bundled key"},
		{"swap the key and the signature", func(b *bundle) {
			b.PublicKey = otherVkey
			resign(b, strings.Replace(checkpointText(b), "hearth/test-a", "hearth/test-other", 1))
		}, []VerifyOption{ExpectKey(l.PublicKey())}, "public key does not match expected"},
		{"edit the checkpoint size", func(b *bundle) {
			b.Checkpoint = strings.Replace(b.Checkpoint, "\n10\n", "\n9\n", 1)
		}, nil, "checkpoint signature: invalid"},
		{"edit the checkpoint root", func(b *bundle) {
			c := []byte(b.Checkpoint)
			c[len("hearth/test-a\n10\n")+3] ^= 0x01
			b.Checkpoint = string(c)
		}, nil, "checkpoint signature: invalid"},
		{"edit the signature", func(b *bundle) {
			i := strings.LastIndex(b.Checkpoint, " ") + 1
			sig, err := base64.StdEncoding.DecodeString(strings.TrimSuffix(b.Checkpoint[i:], "\n"))
			if err != nil {
				t.Fatal(err)
			}
			sig[10] ^= 0x01
			b.Checkpoint = b.Checkpoint[:i] + base64.StdEncoding.EncodeToString(sig) + "\n"
		}, nil, "checkpoint signature: invalid"},
		{"respell the public key", func(b *bundle) {
			b.PublicKey = strings.ToUpper(b.PublicKey[:len("hearth/test-a+aa45a932")]) + b.PublicKey[len("hearth/test-a+aa45a932"):]
		}, nil, "public key: "},
		{"strip the signature", func(b *bundle) {
			b.Checkpoint = checkpointText(b)
		}, nil, "checkpoint: signed note: malformed note"},
		{"re-sign a truncated checkpoint with a foreign key", func(b *bundle) {
			resign(b, checkpointText(b))
		}, nil, "checkpoint signature: not signed by bundled key"},
		{"tamper an inclusion proof", func(b *bundle) {
			b.Inclusion[2].Proof[0][0] ^= 0x01
		}, nil, "entry seq 3: inclusion proof does not lead to the checkpoint root"},
		{"drop an inclusion proof", func(b *bundle) {
			b.Inclusion = append(b.Inclusion[:2:2], b.Inclusion[3:]...)
		}, nil, "inclusion: 9 proofs, want 10"},
		{"tamper the consistency proof", func(b *bundle) {
			b.Consistency.Proof[0][5] ^= 0x01
		}, nil, "consistency: proof from size 6 to 10 does not verify"},
		{"claim another old size", func(b *bundle) {
			b.Consistency.OldSize = 5
		}, nil, "consistency: proof from size 5 to 10 does not verify"},
		{"swap the old checkpoint", func(b *bundle) {
			b.Consistency.OldCheckpoint = b.Checkpoint
		}, nil, "consistency: old checkpoint is for size 10"},
		{"wrong format", func(b *bundle) {
			b.Format = "hearth-ledger-bundle/2"
		}, nil, `bundle format "hearth-ledger-bundle/2"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tampered := mutateBundle(t, valid, c.mutate)
			_, err := VerifyBundle(bytes.NewReader(tampered), c.opts...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("VerifyBundle = %v, want an error containing %q", err, c.want)
			}
		})
	}

	// Swapping key and signature is caught only against an expected key.
	swapped := mutateBundle(t, valid, func(b *bundle) {
		b.PublicKey = otherVkey
		resign(b, strings.Replace(checkpointText(b), "hearth/test-a", "hearth/test-other", 1))
		b.Consistency = bundleConsistency{}
	})
	if _, err := VerifyBundle(bytes.NewReader(swapped)); err != nil {
		t.Fatalf("re-signed bundle without an expected key: %v", err)
	}
	for _, bad := range []string{``, `{}`, `{"format":"hearth-ledger-bundle/1","extra":1}`, string(valid) + "{}"} {
		if _, err := VerifyBundle(strings.NewReader(bad)); err == nil {
			t.Errorf("VerifyBundle(%.40q) succeeded", bad)
		}
	}
}

// TestVerifyBundleEveryByte flips, deletes and truncates at every byte of a
// small bundle: none may verify unless the entries, checkpoint and key it
// carries are still exactly the original ones.
func TestVerifyBundleEveryByte(t *testing.T) {
	l, _ := newTestLedger(t)
	appendN(t, l, 2)
	exportBundle(t, l, 0)
	appendN(t, l, 2)
	valid := exportBundle(t, l, SinceLastExport)
	ref := bundleContent(t, valid)
	check := func(what string, data []byte) {
		if _, err := VerifyBundle(bytes.NewReader(data)); err == nil && bundleContent(t, data) != ref {
			t.Fatalf("%s: a changed bundle verified:\n%s", what, data)
		}
	}
	for i := range valid {
		for _, bit := range []byte{0x01, 0x20, 0x80} {
			m := bytes.Clone(valid)
			m[i] ^= bit
			check("flip", m)
		}
		check("delete", append(bytes.Clone(valid[:i]), valid[i+1:]...))
		if _, err := VerifyBundle(bytes.NewReader(valid[:i])); err == nil && i < len(valid)-1 {
			t.Fatalf("bundle truncated to %d bytes verified", i)
		}
	}
}

// bundleContent returns what a bundle attests to, or "" when it does not
// decode: its key, checkpoint and entries.
func bundleContent(t testing.TB, data []byte) string {
	var bun bundle
	if json.Unmarshal(data, &bun) != nil {
		return ""
	}
	return bun.PublicKey + "\x00" + bun.Checkpoint + "\x00" + strings.Join(bun.Entries, "\x00")
}

// TestExportSampledInclusion exports a ledger just past InclusionAll, whose
// bundle carries a sample of inclusion proofs.
func TestExportSampledInclusion(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("builds 100,001 entries: minutes under -race, skipped with -short")
	}
	ctx := context.Background()
	db := openTestDB(t)
	skey, vkey := testKey(t, "a")
	l, err := Open(db, skey, WithClock(testClock()))
	if err != nil {
		t.Fatal(err)
	}
	const n = InclusionAll + 1
	if err := bulkAppend(ctx, db, testClock(), n, benchData); err != nil {
		t.Fatal(err)
	}
	rep, err := VerifyBundle(bytes.NewReader(exportBundle(t, l, 0)), ExpectKey(vkey))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Entries != n || rep.InclusionProofs != (n+1)/2 {
		t.Fatalf("report = %+v, want %d entries and %d proofs", rep, n, (n+1)/2)
	}
}
