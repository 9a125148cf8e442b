package document

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// The benchmarks of docs/BENCHMARKS.md: the text of a 100-page PDF (with
// a warm engine, and the engine's cold start beside it), a 10,000-row
// sheet and a 50-page Word document. The documents are made at the start:
// the Word document by DocxFromMarkdown, the workbook by excelize, the PDF
// by LibreOffice from the Word document (skipped without soffice).

// longMarkdown is about pages pages of text: headings, paragraphs, a list
// and a table on each.
func longMarkdown(pages int) string {
	var b strings.Builder
	para := strings.Repeat("The garden invoice lists rakes, watering cans and seeds for the spring order. ", 6)
	for p := 1; p <= pages; p++ {
		fmt.Fprintf(&b, "# Part %d\n\n%s\n\n%s\n\n- first item of part %d\n- second item\n\n| Item | Price |\n| --- | --- |\n| Rake | %d.50 |\n\n%s\n\n", p, para, para, p, p, para)
	}
	return b.String()
}

func benchDocx(b *testing.B) []byte {
	data, err := DocxFromMarkdown(longMarkdown(50))
	if err != nil {
		b.Fatal(err)
	}
	return data
}

func BenchmarkDocx50Pages(b *testing.B) {
	data := benchDocx(b)
	r := &Reader{}
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		res, err := r.Read(context.Background(), "long.docx", data, Options{})
		if err != nil || !res.Complete {
			b.Fatal(err)
		}
	}
}

func BenchmarkXlsx10000Rows(b *testing.B) {
	f := excelize.NewFile()
	sw, err := f.NewStreamWriter("Sheet1")
	if err != nil {
		b.Fatal(err)
	}
	for r := 1; r <= 10000; r++ {
		cell, _ := excelize.CoordinatesToCellName(1, r)
		sw.SetRow(cell, []any{fmt.Sprintf("item %d", r), r, float64(r) * 1.5, "Acme", r%7 == 0})
	}
	sw.Flush()
	buf, err := f.WriteToBuffer()
	if err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	r := &Reader{}
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		res, err := r.Read(context.Background(), "big.xlsx", data, Options{})
		if err != nil || !res.Complete || !strings.Contains(res.Text, "| 10000 | item 10000 |") {
			b.Fatalf("%v complete %v", err, res != nil && res.Complete)
		}
	}
}

// pdf100 converts a Word document of 210 parts to a PDF of
// at least 100 pages with LibreOffice.
func pdf100(b *testing.B) []byte {
	soffice, err := exec.LookPath("soffice")
	if err != nil {
		b.Skip("LibreOffice (soffice) is not installed")
	}
	dir := b.TempDir()
	data, err := DocxFromMarkdown(longMarkdown(210))
	if err != nil {
		b.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "long.docx"), data, 0o644)
	cmd := exec.Command(soffice, "--headless", "-env:UserInstallation=file://"+filepath.Join(dir, "profile"), "--convert-to", "pdf", "--outdir", dir, filepath.Join(dir, "long.docx"))
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("soffice: %v\n%s", err, out)
	}
	pdf, err := os.ReadFile(filepath.Join(dir, "long.pdf"))
	if err != nil {
		b.Fatal(err)
	}
	return pdf
}

func BenchmarkPDF100PagesWarm(b *testing.B) {
	data := pdf100(b)
	r := &Reader{CacheDir: b.TempDir()}
	defer r.Close()
	if err := r.Warm(); err != nil {
		b.Fatal(err)
	}
	res, err := r.Read(context.Background(), "long.pdf", data, Options{Pages: "1-100"})
	if err != nil {
		b.Fatal(err)
	}
	if res.Pages < 100 {
		b.Fatalf("the PDF has %d pages", res.Pages)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		res, err := r.Read(context.Background(), "long.pdf", data, Options{Pages: "1-100"})
		if err != nil || !res.Complete || res.PagesRead != "1-100" {
			b.Fatalf("%v %+v", err, res)
		}
	}
}

// BenchmarkPDFColdStart is the engine's start: compiling PDFium with no
// cache (the first PDF after installing), and from the compilation cache
// on disk (the first PDF after a restart).
func BenchmarkPDFColdStart(b *testing.B) {
	b.Run("no-cache", func(b *testing.B) {
		for b.Loop() {
			r := &Reader{CacheDir: b.TempDir()}
			if err := r.Warm(); err != nil {
				b.Fatal(err)
			}
			r.Close()
		}
	})
	b.Run("disk-cache", func(b *testing.B) {
		dir := b.TempDir()
		first := &Reader{CacheDir: dir}
		if err := first.Warm(); err != nil {
			b.Fatal(err)
		}
		first.Close()
		for b.Loop() {
			r := &Reader{CacheDir: dir}
			if err := r.Warm(); err != nil {
				b.Fatal(err)
			}
			r.Close()
		}
	})
}
