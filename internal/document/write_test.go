package document

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func cellsOf(t *testing.T, s string) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestSetCellsKeepsTheRest(t *testing.T) {
	out, changes, err := SetCells(fixture(t, "sample.xlsx"), "Budget", cellsOf(t, `{"B3": 300, "C1": "Note", "B5": "=B4*2", "A6:B7": [["x", 1.5], [true, null]]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 6 || changes[0].Cell != "A6" { // B7 was empty and stays so
		t.Errorf("changes %+v", changes)
	}
	res, err := (&Reader{}).Read(context.Background(), "out.xlsx", out, Options{Sheet: "Budget", Formulas: true})
	if err != nil {
		t.Fatal(err)
	}
	wantIn(t, res.Text, "| 1 | Item | Amount | Note |", "| 3 | Food | 300 |", "| 4 | Total | =SUM(B2:B3)", "| 5 |  | =B4*2", "| 6 | x | 1.5 |", "| 7 | TRUE |")
	if len(res.Sheets) != 2 {
		t.Errorf("sheets %+v", res.Sheets)
	}
	notes, _ := (&Reader{}).Read(context.Background(), "out.xlsx", out, Options{Sheet: "Notes"})
	wantIn(t, notes.Text, "Acme invoice 2041 paid")
}

func TestSetCellsNewSheetAndNewFile(t *testing.T) {
	out, _, err := SetCells(nil, "Totals", cellsOf(t, `{"A1": "Sum", "B1": "=1+2"}`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := (&Reader{}).Read(context.Background(), "new.xlsx", out, Options{Formulas: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Sheets) != 1 || res.Sheets[0].Name != "Totals" {
		t.Fatalf("sheets %+v", res.Sheets)
	}
	out, _, err = SetCells(out, "More", cellsOf(t, `{"A1": 1}`))
	if err != nil {
		t.Fatal(err)
	}
	res, _ = (&Reader{}).Read(context.Background(), "new.xlsx", out, Options{})
	if len(res.Sheets) != 2 {
		t.Fatalf("sheets %+v", res.Sheets)
	}
}

func TestSetCellsBadInput(t *testing.T) {
	for in, field := range map[string]string{
		`{}`:                  "cells",
		`{"B": 1}`:            "cells.B",
		`{"A1:B1": [1, 2]}`:   "cells.A1:B1",
		`{"A1:B1": [[1]]}`:    "cells.A1:B1[0]",
		`{"A1": [[1]]}`:       "cells.A1",
		`{"A1": {"x": 1}}`:    "cells.A1",
		`{"A1:Z1000": [[1]]}`: "cells.A1:Z1000",
	} {
		_, _, err := SetCells(fixture(t, "sample.xlsx"), "", cellsOf(t, in))
		if codeOf(err) != "field:"+field {
			t.Errorf("%s: %v (want field %s)", in, err, field)
		}
	}
}

func TestSetCellsRefusesMacros(t *testing.T) {
	data := zipOf(t, map[string][]byte{"xl/workbook.xml": []byte("<workbook/>"), "xl/vbaProject.bin": []byte("x")})
	if _, _, err := SetCells(data, "", cellsOf(t, `{"A1": 1}`)); codeOf(err) != CodeMacros {
		t.Fatalf("macros: %v", err)
	}
}

const sampleMarkdown = `# Garden report

This year the **tomatoes** did *well*, and the _beans_ too.

## Tasks

- Water the beds
- Fix the fence
  - Buy nails

1. Order seeds
2. Plant them

| Plant | Rows |
| --- | --- |
| Tomato | 4 |
| Bean \| pole | 2 |

Last words.
`

func TestDocxFromMarkdownReadsBack(t *testing.T) {
	data, err := DocxFromMarkdown(sampleMarkdown)
	if err != nil {
		t.Fatal(err)
	}
	res, err := (&Reader{}).Read(context.Background(), "out.docx", data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "# Garden report\n\nThis year the **tomatoes** did *well*, and the *beans* too.\n\n## Tasks\n\n- Water the beds\n- Fix the fence\n  - Buy nails\n\n1. Order seeds\n2. Plant them\n\n| **Plant** | **Rows** |\n| --- | --- |\n| Tomato | 4 |\n| Bean \\| pole | 2 |\n\nLast words.\n"
	if res.Text != want {
		t.Fatalf("read back:\n%s\nwant:\n%s", res.Text, want)
	}
	again, _ := DocxFromMarkdown(sampleMarkdown)
	if string(again) != string(data) {
		t.Error("the same Markdown made different bytes")
	}
}

// TestDocxOpensInLibreOffice has LibreOffice convert the written document
// to text: the file is one a real program opens.
func TestDocxOpensInLibreOffice(t *testing.T) {
	soffice, err := exec.LookPath("soffice")
	if err != nil {
		t.Skip("LibreOffice (soffice) is not installed")
	}
	dir := t.TempDir()
	data, err := DocxFromMarkdown(sampleMarkdown)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "report.docx"), data, 0o644)
	cmd := exec.Command(soffice, "--headless", "-env:UserInstallation=file://"+filepath.Join(dir, "profile"), "--convert-to", "txt:Text", "--outdir", dir, filepath.Join(dir, "report.docx"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("soffice: %v\n%s", err, out)
	}
	txt, err := os.ReadFile(filepath.Join(dir, "report.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"Garden report", "tomatoes", "Order seeds", "Tomato", "Last words."} {
		if !strings.Contains(string(txt), w) {
			t.Errorf("LibreOffice's text lacks %q:\n%s", w, txt)
		}
	}
}
