package document

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The fixtures in testdata were made by LibreOffice from the flat
// OpenDocument sources beside them (sample.fodt, sample.fods, sample.fodp,
// scanned.fodt) with soffice --headless --convert-to.

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func read(t testing.TB, r *Reader, name string, opt Options) *Result {
	t.Helper()
	res, err := r.Read(context.Background(), name, fixture(t, name), opt)
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return res
}

func wantIn(t *testing.T, text string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(text, p) {
			t.Errorf("text lacks %q:\n%s", p, text)
		}
	}
}

func codeOf(err error) string {
	var de *Error
	if errors.As(err, &de) {
		return de.Code
	}
	var fe *FieldError
	if errors.As(err, &fe) {
		return "field:" + fe.Field
	}
	return ""
}

func TestWordAsMarkdown(t *testing.T) {
	for _, name := range []string{"sample.docx", "sample.odt"} {
		res := read(t, &Reader{}, name, Options{})
		wantIn(t, res.Text,
			"# Invoice 2041 for Acme Garden Supplies\n",
			"This invoice covers the **spring order** and the *late delivery* discount.",
			"## Items\n",
			"- Rakes\n- Watering cans\n",
			"1. Pay within 30 days\n2. Quote the invoice number\n",
			"| Item | Price |\n| --- | --- |\n| Rake | 12.50 |\n| Watering can | 8.00 |",
			"Second page: total due 20.50 EUR.")
		if len(res.Images) != 1 || !res.Complete {
			t.Errorf("%s: images %v complete %v", name, res.Images, res.Complete)
		}
	}
}

func TestWordStopsAtNeed(t *testing.T) {
	res := read(t, &Reader{}, "sample.docx", Options{Need: 20})
	if res.Complete || strings.Contains(res.Text, "Second page") {
		t.Fatalf("read past what was needed (complete %v):\n%s", res.Complete, res.Text)
	}
}

func TestSlides(t *testing.T) {
	res := read(t, &Reader{}, "sample.pptx", Options{})
	wantIn(t, res.Text, "## Slide 1: Garden plan\n\nPlant tomatoes in May\nWater twice a week\n\nNotes: Mention the rain barrel.\n", "## Slide 2: Budget\n\nSeeds cost 40 EUR")
	if res.Pages != 2 {
		t.Errorf("slides %d", res.Pages)
	}
}

func TestWorkbook(t *testing.T) {
	for _, name := range []string{"sample.xlsx", "sample.ods"} {
		r := &Reader{}
		res := read(t, r, name, Options{})
		if len(res.Sheets) != 2 || res.Sheets[0].Name != "Budget" || res.Sheets[1].Name != "Notes" {
			t.Errorf("%s: sheets %+v", name, res.Sheets)
		}
		wantIn(t, res.Text, "## Sheet Budget", "|  | A | B |", "| 2 | Rent | 900 |", "| 4 | Total | 1150.5 |")
		res = read(t, r, name, Options{Sheet: "Budget", Range: "B3:B4", Formulas: true})
		wantIn(t, res.Text, "|  | B |", "| 3 | 250.5 |", "| 4 | =SUM(")
		if strings.Contains(res.Text, "Rent") {
			t.Errorf("%s: range B3:B4 shows A2:\n%s", name, res.Text)
		}
		res = read(t, r, name, Options{Sheet: "Notes"})
		wantIn(t, res.Text, "Acme invoice 2041 paid")
		if _, err := r.Read(context.Background(), name, fixture(t, name), Options{Sheet: "Nope"}); codeOf(err) != "field:sheet" || !strings.Contains(err.Error(), `"Budget"`) {
			t.Errorf("%s: missing sheet: %v", name, err)
		}
		if _, err := r.Read(context.Background(), name, fixture(t, name), Options{Range: "B2:"}); codeOf(err) != "field:range" {
			t.Errorf("%s: bad range: %v", name, err)
		}
	}
}

func TestWorkbookStopsAndSaysHowToReadOn(t *testing.T) {
	res := read(t, &Reader{}, "sample.xlsx", Options{Need: 5})
	if res.Complete || !strings.Contains(res.More, `sheet "Budget" and range A`) {
		t.Fatalf("complete %v more %q", res.Complete, res.More)
	}
}

func TestPDF(t *testing.T) {
	r := &Reader{CacheDir: testCache}
	defer r.Close()
	res := read(t, r, "sample.pdf", Options{})
	wantIn(t, res.Text, "--- page 1 ---\nInvoice 2041 for Acme Garden Supplies\n", "Rake 12.50", "--- page 2 ---\nSecond page: total due 20.50 EUR.")
	if res.Pages != 2 || res.PagesRead != "1-2" || !res.Complete {
		t.Errorf("pages %d read %q complete %v", res.Pages, res.PagesRead, res.Complete)
	}
	res = read(t, r, "sample.pdf", Options{Pages: "2"})
	if strings.Contains(res.Text, "Invoice 2041") || !strings.Contains(res.Text, "Second page") {
		t.Errorf("pages 2:\n%s", res.Text)
	}
	res = read(t, r, "sample.pdf", Options{Need: 10})
	if res.Complete || res.PagesRead != "1" || res.More != "read on with pages 2" {
		t.Errorf("need 10: complete %v read %q more %q", res.Complete, res.PagesRead, res.More)
	}
	res = read(t, r, "scanned.pdf", Options{})
	if len(res.NoText) != 1 || res.NoText[0] != 2 || !strings.Contains(res.Text, "scanned picture") {
		t.Errorf("scanned: %v\n%s", res.NoText, res.Text)
	}
	_, err := r.Read(context.Background(), "encrypted.pdf", fixture(t, "encrypted.pdf"), Options{})
	if codeOf(err) != CodeEncrypted || !strings.Contains(err.Error(), "password") {
		t.Errorf("encrypted: %v", err)
	}
	_, err = r.Read(context.Background(), "sample.pdf", fixture(t, "sample.pdf"), Options{Pages: "9"})
	if codeOf(err) != "field:pages" || !strings.Contains(err.Error(), "2 pages") {
		t.Errorf("page 9: %v", err)
	}
	_, err = r.Read(context.Background(), "x.pdf", []byte("%PDF-1.4 nothing else"), Options{})
	if codeOf(err) != CodeDamaged || !strings.Contains(err.Error(), "x.pdf looks damaged") {
		t.Errorf("damaged: %v", err)
	}
}

func TestOlderFormats(t *testing.T) {
	for name, newer := range map[string]string{"sample.doc": ".docx", "sample.xls": ".xlsx"} {
		_, err := (&Reader{}).Read(context.Background(), name, fixture(t, name), Options{})
		if codeOf(err) != CodeLegacy || !strings.Contains(err.Error(), "older format Hearth cannot read; open it and save it as "+newer) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// zipOf makes a zip of the named parts.
func zipOf(t testing.TB, parts map[string][]byte) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for n, d := range parts {
		w, err := zw.Create(n)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(d)
	}
	zw.Close()
	return b.Bytes()
}

func TestZipBombIsRefused(t *testing.T) {
	big := bytes.Repeat([]byte(" "), MaxPartSize+1)
	data := zipOf(t, map[string][]byte{"word/document.xml": big})
	if len(data) > 1<<20 {
		t.Fatalf("the bomb is %d bytes", len(data))
	}
	_, err := (&Reader{}).Read(context.Background(), "bomb.docx", data, Options{})
	if codeOf(err) != CodeTooLarge {
		t.Fatalf("bomb: %v", err)
	}
	for _, name := range []string{"bomb.xlsx", "bomb.pptx", "bomb.odt"} {
		part := map[string]string{"bomb.xlsx": "xl/workbook.xml", "bomb.pptx": "ppt/presentation.xml", "bomb.odt": "content.xml"}[name]
		_, err := (&Reader{}).Read(context.Background(), name, zipOf(t, map[string][]byte{part: big}), Options{})
		if codeOf(err) != CodeTooLarge {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestDeepNestingIsRefused(t *testing.T) {
	deep := []byte(`<w:document xmlns:w="w"><w:body>` + strings.Repeat("<w:x>", MaxDepth+10) + strings.Repeat("</w:x>", MaxDepth+10) + `</w:body></w:document>`)
	_, err := (&Reader{}).Read(context.Background(), "deep.docx", zipOf(t, map[string][]byte{"word/document.xml": deep}), Options{})
	if codeOf(err) != CodeDamaged || !strings.Contains(err.Error(), "levels deep") {
		t.Fatalf("deep: %v", err)
	}
}

func TestTooSlowSaysSo(t *testing.T) {
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	_, err := (&Reader{}).Read(ctx, "sample.docx", fixture(t, "sample.docx"), Options{})
	if codeOf(err) != CodeTimeout || !strings.Contains(err.Error(), "took longer than") {
		t.Fatalf("late: %v", err)
	}
}
