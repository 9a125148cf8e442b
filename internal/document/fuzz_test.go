package document

import (
	"context"
	"errors"
	"testing"
)

// Each reader is fuzzed from its LibreOffice fixture: whatever the bytes,
// a read answers text or an error in Hearth's words (*Error or
// *FieldError), never a panic, a hang or a raw library error.

func fuzzReader(f *testing.F, name string, r *Reader) {
	f.Add(fixture(f, name))
	f.Add([]byte{})
	f.Add([]byte("PK\x03\x04"))
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := r.Read(context.Background(), name, data, Options{Need: 4096})
		if err != nil {
			var de *Error
			var fe *FieldError
			if !errors.As(err, &de) && !errors.As(err, &fe) {
				t.Fatalf("%s: not in Hearth's words: %T %v", name, err, err)
			}
			return
		}
		if res.Format != Detect(name) {
			t.Fatalf("format %q", res.Format)
		}
	})
}

func FuzzDocx(f *testing.F) { fuzzReader(f, "sample.docx", &Reader{}) }
func FuzzPptx(f *testing.F) { fuzzReader(f, "sample.pptx", &Reader{}) }
func FuzzXlsx(f *testing.F) { fuzzReader(f, "sample.xlsx", &Reader{}) }
func FuzzOdt(f *testing.F)  { fuzzReader(f, "sample.odt", &Reader{}) }
func FuzzOds(f *testing.F)  { fuzzReader(f, "sample.ods", &Reader{}) }

func FuzzPDF(f *testing.F) {
	r := &Reader{CacheDir: testCache}
	f.Cleanup(func() { r.Close() })
	// Started before fuzzing: the first compile takes seconds, which the
	// fuzzer would take for a hang.
	if err := r.Warm(); err != nil {
		f.Fatal(err)
	}
	f.Add(fixture(f, "scanned.pdf"))
	fuzzReader(f, "sample.pdf", r)
}
