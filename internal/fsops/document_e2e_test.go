package fsops_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// TestDocumentsOverMCP drives the document operations through the real
// server with a real MCP client: a workbook read as text, a formula set
// and read back, undo restoring the file byte for byte, a Word document
// written from Markdown, a PDF's pages, a search inside documents, and the
// plain-words errors.
func TestDocumentsOverMCP(t *testing.T) {
	in := hearthtest.Start(t, nil)
	c := hearthtest.Connect(t, in.URL, "fs")
	dir := filepath.Join(in.Root, "papers")
	os.MkdirAll(dir, 0o755)
	for _, n := range []string{"sample.xlsx", "sample.pdf", "sample.doc"} {
		data, err := os.ReadFile(filepath.Join("..", "document", "testdata", n))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, n), data, 0o644)
	}
	book := filepath.Join(dir, "sample.xlsx")
	before, _ := os.ReadFile(book)

	r := c.Final("fs", map[string]any{"operation": "read", "path": book})
	if r.State() != "completed" || r.Get("result.format") != "xlsx" || r.Get("result.sheets.1.name") != "Notes" ||
		!strings.Contains(r.Get("result.data").(string), "| 2 | Rent | 900 |") {
		t.Fatalf("read workbook: %s", r.Raw)
	}
	sum := r.Get("result.sha256")
	r = c.Final("fs", map[string]any{"operation": "xlsx_set", "path": book, "sheet": "Budget", "cells": map[string]any{"B3": 300, "C4": "=B4*2"}, "expected_sha256": sum})
	if r.State() != "completed" || r.Get("result.changed.0.cell") != "B3" {
		t.Fatalf("xlsx_set: %s", r.Raw)
	}
	receipt := r.Get("result.receipt_id")
	r = c.Final("fs", map[string]any{"operation": "read", "path": book, "range": "A4:C4", "formulas": true})
	if got, _ := r.Get("result.data").(string); !strings.Contains(got, "=SUM(B2:B3)") || !strings.Contains(got, "=B4*2") {
		t.Fatalf("the formulas after xlsx_set: %s", r.Raw)
	}
	r = c.Final("fs", map[string]any{"operation": "undo", "receipt_id": receipt})
	if r.State() != "completed" {
		t.Fatalf("undo: %s", r.Raw)
	}
	if after, _ := os.ReadFile(book); !bytes.Equal(before, after) {
		t.Fatal("undo did not restore the workbook byte for byte")
	}

	letter := filepath.Join(dir, "letter.docx")
	r = c.Final("fs", map[string]any{"operation": "docx_write", "path": letter, "markdown": "# Dear Ann\n\n| Item | Price |\n| --- | --- |\n| Rake | 12.50 |\n", "expected_sha256": nil})
	if r.State() != "completed" {
		t.Fatalf("docx_write: %s", r.Raw)
	}
	r = c.Final("fs", map[string]any{"operation": "read", "path": letter})
	if r.Get("result.data") != "# Dear Ann\n\n| **Item** | **Price** |\n| --- | --- |\n| Rake | 12.50 |\n" {
		t.Fatalf("read the letter: %s", r.Raw)
	}

	// The PDF engine's first start compiles PDFium (seconds, minutes on
	// a loaded machine): started here, so the call's wait is the read's.
	if err := in.App.FS.Documents.Warm(); err != nil {
		t.Fatal(err)
	}
	r = c.Final("fs", map[string]any{"operation": "read", "path": filepath.Join(dir, "sample.pdf"), "pages": "2"})
	if r.Get("result.format") != "pdf" || r.Get("result.pages") != float64(2) || !strings.Contains(r.Get("result.data").(string), "--- page 2 ---\nSecond page") {
		t.Fatalf("read a PDF page: %s", r.Raw)
	}
	r = c.Final("fs", map[string]any{"operation": "search", "path": dir, "query": "Acme", "documents": true})
	if r.State() != "completed" || r.Get("result.matches.0.kind") != "document" {
		t.Fatalf("search documents: %s", r.Raw)
	}

	r = c.Final("fs", map[string]any{"operation": "read", "path": book, "sheet": "Nope"})
	if r.State() != "failed" || !strings.Contains(r.Get("error.message").(string), `field "sheet"`) {
		t.Fatalf("a missing sheet: %s", r.Raw)
	}
	r = c.Final("fs", map[string]any{"operation": "read", "path": filepath.Join(dir, "sample.doc")})
	if r.Get("error.code") != "old_format" || !strings.Contains(r.Get("error.message").(string), "open it and save it as .docx") {
		t.Fatalf("a .doc: %s", r.Raw)
	}
	r = c.Final("fs", map[string]any{"operation": "xlsx_set", "path": filepath.Join(dir, "m.xlsm"), "cells": map[string]any{"A1": 1}})
	if r.Get("error.code") != "macros" {
		t.Fatalf("an .xlsm: %s", r.Raw)
	}
}
