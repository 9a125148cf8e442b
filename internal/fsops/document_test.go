package fsops

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/document"
)

// copyFixture puts one of internal/document's LibreOffice fixtures under
// the test root.
func copyFixture(t testing.TB, env testEnv, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "document", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	p := env.path("docs", name)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadDocumentAsText(t *testing.T) {
	env := newTestEngine(t)
	ctx := context.Background()
	p := copyFixture(t, env, "sample.docx")
	raw, _ := os.ReadFile(p)

	res, err := env.e.Read(ctx, ReadInput{Path: p})
	if err != nil {
		t.Fatal(err)
	}
	if res.DocumentPart == nil || res.Format != "docx" || !res.EOF || res.More != "" || res.SHA256 != hashBytes(raw) || res.Size != int64(len(raw)) {
		t.Fatalf("read %+v", res)
	}
	if !strings.HasPrefix(res.Data, "# Invoice 2041 for Acme Garden Supplies\n") || len(res.Images) != 1 {
		t.Fatalf("text %q images %v", res.Data, res.Images)
	}
	// Read on by offset: the pieces make the whole text.
	var got strings.Builder
	var off int64
	for {
		part, err := env.e.Read(ctx, ReadInput{Path: p, Offset: off, Limit: 40})
		if err != nil {
			t.Fatal(err)
		}
		got.WriteString(part.Data)
		off += int64(part.Length)
		if part.EOF {
			break
		}
		if !strings.HasPrefix(part.More, "read on with offset ") {
			t.Fatalf("more %q", part.More)
		}
	}
	if got.String() != res.Data {
		t.Fatalf("pieces %q\nwhole %q", got.String(), res.Data)
	}
	// The raw bytes are still there with base64.
	b64, err := env.e.Read(ctx, ReadInput{Path: p, Encoding: "base64", Limit: MaxReadLimit})
	if err != nil || b64.DocumentPart != nil {
		t.Fatalf("base64 %+v %v", b64.DocumentPart, err)
	}
	if dec, _ := base64.StdEncoding.DecodeString(b64.Data); string(dec) != string(raw) {
		t.Fatal("base64 read is not the file")
	}
}

func TestReadDocumentOptions(t *testing.T) {
	env := newTestEngine(t)
	ctx := context.Background()
	x := copyFixture(t, env, "sample.xlsx")
	res, err := env.e.Read(ctx, ReadInput{Path: x, Sheet: "Budget", Range: "A4:B4", Formulas: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Sheets) != 2 || !strings.Contains(res.Data, "| 4 | Total | =SUM(B2:B3) → 1150.5 |") {
		t.Fatalf("%+v\n%s", res.Sheets, res.Data)
	}
	var fe *document.FieldError
	if _, err := env.e.Read(ctx, ReadInput{Path: x, Sheet: "Nope"}); !errors.As(err, &fe) || fe.Field != "sheet" {
		t.Fatalf("missing sheet: %v", err)
	}
	pdf := copyFixture(t, env, "sample.pdf")
	res, err = env.e.Read(ctx, ReadInput{Path: pdf, Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	if res.Format != "pdf" || res.EOF || res.More != "read on with offset 20, or pages 2" || res.Pages != 2 {
		t.Fatalf("pdf: %+v %+v", res, res.DocumentPart)
	}
	// Document options on other files name the field.
	txt := env.path("plain.txt")
	writeFiles(t, map[string]string{txt: "hello"})
	for _, in := range []ReadInput{{Path: txt, Pages: "1"}, {Path: txt, Sheet: "A"}, {Path: x, Encoding: "base64", Range: "A1"}} {
		var ie *InputError
		if _, err := env.e.Read(ctx, in); !errors.As(err, &ie) || (ie.Field != "pages" && ie.Field != "sheet" && ie.Field != "range") {
			t.Errorf("Read(%+v) = %v", in, err)
		}
	}
	doc := copyFixture(t, env, "sample.doc")
	var de *document.Error
	if _, err := env.e.Read(ctx, ReadInput{Path: doc}); !errors.As(err, &de) || de.Code != document.CodeLegacy {
		t.Fatalf(".doc: %v", err)
	}
}

func TestXlsxSetAndUndo(t *testing.T) {
	env := newTestEngine(t)
	ctx := context.Background()
	p := copyFixture(t, env, "sample.xlsx")
	before, _ := os.ReadFile(p)

	res, err := env.e.XlsxSet(ctx, "chat", XlsxSetInput{Path: p, Sheet: "Budget", Cells: map[string]json.RawMessage{
		"B3": json.RawMessage(`300`), "B5": json.RawMessage(`"=B4*2"`)}, ExpectedSHA256: Expect{Set: true, SHA: hashBytes(before)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changed) != 2 || res.Changed[0] != (document.CellChange{Cell: "B3", Before: "250.5", After: "300"}) {
		t.Fatalf("changed %+v", res.Changed)
	}
	read, err := env.e.Read(ctx, ReadInput{Path: p, Formulas: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"| 3 | Food | 300 |", "| 4 | Total | =SUM(B2:B3)", "| 5 |  | =B4*2"} {
		if !strings.Contains(read.Data, w) {
			t.Errorf("after xlsx_set the sheet lacks %q:\n%s", w, read.Data)
		}
	}
	// A stale expected_sha256 is a conflict, and nothing changes.
	if _, err := env.e.XlsxSet(ctx, "chat", XlsxSetInput{Path: p, Cells: map[string]json.RawMessage{"A1": json.RawMessage(`1`)},
		ExpectedSHA256: Expect{Set: true, SHA: hashBytes(before)}}); !errors.Is(err, ErrConflict) {
		t.Fatalf("stale expected_sha256: %v", err)
	}
	if _, err := env.e.Undo(ctx, "chat", UndoInput{ReceiptID: res.ReceiptID}); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(p)
	if !bytes.Equal(before, after) {
		t.Fatal("undo did not restore the workbook byte for byte")
	}
}

func TestXlsxSetRefuses(t *testing.T) {
	env := newTestEngine(t)
	ctx := context.Background()
	cells := map[string]json.RawMessage{"A1": json.RawMessage(`1`)}
	var de *document.Error
	if _, err := env.e.XlsxSet(ctx, "chat", XlsxSetInput{Path: env.path("m.xlsm"), Cells: cells}); !errors.As(err, &de) || de.Code != document.CodeMacros {
		t.Fatalf("xlsm: %v", err)
	}
	var ie *InputError
	if _, err := env.e.XlsxSet(ctx, "chat", XlsxSetInput{Path: env.path("m.csv"), Cells: cells}); !errors.As(err, &ie) || ie.Field != "path" {
		t.Fatalf("csv: %v", err)
	}
	if _, err := os.Stat(env.path("m.xlsm")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("a refused call made a file")
	}
}

func TestDocxWriteAndUndo(t *testing.T) {
	env := newTestEngine(t)
	ctx := context.Background()
	p := env.path("out", "report.docx")
	res, err := env.e.DocxWrite(ctx, "chat", DocxWriteInput{Path: p, Markdown: "# Report\n\n- one\n- two\n", ExpectedSHA256: Expect{Set: true, Null: true}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Created {
		t.Fatalf("%+v", res)
	}
	read, err := env.e.Read(ctx, ReadInput{Path: p})
	if err != nil || read.Data != "# Report\n\n- one\n- two\n" {
		t.Fatalf("read back %q %v", read.Data, err)
	}
	old := copyFixture(t, env, "sample.docx")
	before, _ := os.ReadFile(old)
	res, err = env.e.DocxWrite(ctx, "chat", DocxWriteInput{Path: old, Markdown: "Replaced."})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.e.Undo(ctx, "chat", UndoInput{ReceiptID: res.ReceiptID}); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(old); !bytes.Equal(before, after) {
		t.Fatal("undo did not restore the document byte for byte")
	}
	var de *document.Error
	if _, err := env.e.DocxWrite(ctx, "chat", DocxWriteInput{Path: env.path("m.docm"), Markdown: "x"}); !errors.As(err, &de) || de.Code != document.CodeMacros {
		t.Fatalf("docm: %v", err)
	}
}

func TestSearchDocuments(t *testing.T) {
	env := newTestEngine(t)
	ctx := context.Background()
	for _, n := range []string{"sample.pdf", "sample.xlsx", "sample.docx", "sample.pptx", "encrypted.pdf"} {
		copyFixture(t, env, n)
	}
	dir := env.path("docs")
	// Without documents: true, documents are binary files, skipped.
	res, err := env.e.Search(ctx, SearchInput{Path: dir, Query: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Matches) != 0 {
		t.Fatalf("found without documents: %+v", res.Matches)
	}
	res, err = env.e.Search(ctx, SearchInput{Path: dir, Query: "Acme", Documents: true})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, m := range res.Matches {
		if m.Kind != "document" || !strings.Contains(m.Preview, "Acme") {
			t.Errorf("match %+v", m)
		}
		got[filepath.Base(m.Path)] = true
	}
	// The workbook's second sheet says "Acme invoice 2041 paid".
	for _, n := range []string{"sample.pdf", "sample.xlsx", "sample.docx"} {
		if !got[n] {
			t.Errorf("no match in %s: %+v", n, res.Matches)
		}
	}
	if res.Skipped["unreadable"] != 1 {
		t.Errorf("the encrypted PDF is not counted unreadable: %v", res.Skipped)
	}
}
