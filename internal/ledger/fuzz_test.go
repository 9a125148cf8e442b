package ledger

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// fuzzBundles builds the seed bundles, byte-for-byte the same on every run
// (deterministic key and clock): an empty ledger, a first export of three
// entries, and a second export of nine entries proving consistency from a
// signed checkpoint at five.
func fuzzBundles(t testing.TB) [][]byte {
	empty, _ := newTestLedger(t)
	small, _ := newTestLedger(t)
	appendN(t, small, 3)
	grown, _ := newTestLedger(t)
	appendN(t, grown, 5)
	exportBundle(t, grown, 0)
	appendN(t, grown, 4)
	return [][]byte{
		exportBundle(t, empty, SinceLastExport),
		exportBundle(t, small, SinceLastExport),
		exportBundle(t, grown, SinceLastExport),
	}
}

func fuzzSeedPath(i int) string {
	return filepath.Join("testdata", "fuzz", "FuzzVerifyBundle", fmt.Sprintf("seed-%d", i))
}

// fuzzSeedFile is the go test fuzz corpus encoding of one []byte input.
func fuzzSeedFile(b []byte) []byte {
	return fmt.Appendf(nil, "go test fuzz v1\n[]byte(%q)\n", b)
}

// TestFuzzSeedCorpus checks that the committed seed corpus is what
// fuzzBundles builds now, so FuzzVerifyBundle's reference content matches
// its seeds. HEARTH_UPDATE_FUZZ_SEEDS=1 rewrites the corpus.
func TestFuzzSeedCorpus(t *testing.T) {
	update := os.Getenv("HEARTH_UPDATE_FUZZ_SEEDS") == "1"
	for i, b := range fuzzBundles(t) {
		if _, err := VerifyBundle(bytes.NewReader(b)); err != nil {
			t.Fatalf("seed %d does not verify: %v", i, err)
		}
		want := fuzzSeedFile(b)
		if update {
			if err := os.MkdirAll(filepath.Dir(fuzzSeedPath(i)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(fuzzSeedPath(i), want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(fuzzSeedPath(i))
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s is stale or missing (%v); rerun with HEARTH_UPDATE_FUZZ_SEEDS=1", fuzzSeedPath(i), err)
		}
	}
}

// FuzzVerifyBundle mutates valid bundles: VerifyBundle must never panic,
// and must never accept a bundle whose key, checkpoint or entries differ
// from those of a seed.
func FuzzVerifyBundle(f *testing.F) {
	refs := make(map[string]bool)
	for _, b := range fuzzBundles(f) {
		f.Add(b)
		refs[bundleContent(f, b)] = true
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := VerifyBundle(bytes.NewReader(data)); err == nil && !refs[bundleContent(t, data)] {
			t.Fatalf("a changed bundle verified:\n%s", data)
		}
	})
}

// FuzzCheckCanonical holds checkCanonical, the fast check verification
// uses, to Canonical: an input passes exactly when Canonical accepts it
// and returns it unchanged.
func FuzzCheckCanonical(f *testing.F) {
	for _, s := range []string{
		`{"data":{"a":[1,-2,0.5,1e+21,"x\n\u0001"]},"kind":"intent","prev":"00","seq":1,"ts":"t"}`,
		`{"b":1,"a":2}`, `{"a":1,"a":2}`, `{"a" :1}`, `[1.0,-0,1E5,1e-07]`, `"\u00e9\/\u001F"`,
		"\"\xff\"", `"é"`, `{"\u0001":1,"\"":2}`, `{"\"":2,"\u0001":1}`, `{"":{"":[[]]}}`, `01`, `-`, `1.`, `true `,
		`123456789012345678901234567890`, `1e400`, `"\ud800"`, `{}`, `[]`, `null`, `"\b\t\n\f\r"`, `"\u0008"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := checkCanonical(data)
		c, cerr := Canonical(json.RawMessage(data))
		want := cerr == nil && bytes.Equal(c, data)
		if (err == nil) != want {
			t.Fatalf("checkCanonical(%q) = %v; Canonical = %q, %v", data, err, c, cerr)
		}
	})
}
