package changes

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/fsops"
)

// TestDocumentChangesShowTheirText: a workbook's xlsx_set shows the cells
// it changed and a docx_write the document's text, not "N KB before, M
// KB after".
func TestDocumentChangesShowTheirText(t *testing.T) {
	e, root := newEngine(t)
	ctx := context.Background()
	xlsx := filepath.Join(root, "budget.xlsx")
	data, err := os.ReadFile(filepath.Join("..", "..", "internal", "document", "testdata", "sample.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(xlsx, data, 0o644)
	if _, err := e.XlsxSet(ctx, "r:chat", fsops.XlsxSetInput{Path: xlsx, Sheet: "Budget", Cells: map[string]json.RawMessage{"B3": json.RawMessage(`300`)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.DocxWrite(ctx, "r:chat", fsops.DocxWriteInput{Path: filepath.Join(root, "letter.docx"), Markdown: "# Dear Ann\n\nThe rakes arrived."}); err != nil {
		t.Fatal(err)
	}
	v, err := (&Handler{FS: e}).ChatView(ctx, "r:chat", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var diffs []string
	for _, c := range v.Changes {
		var b strings.Builder
		for _, l := range c.Diff {
			b.WriteString(l.String() + "\n")
		}
		if c.Binary != "" {
			t.Errorf("%s shown as bytes: %s", c.Path, c.Binary)
		}
		diffs = append(diffs, b.String())
	}
	all := strings.Join(diffs, "\n")
	for _, w := range []string{"-| 3 | Food | 250.5 |", "+| 3 | Food | 300 |", "+# Dear Ann", "+The rakes arrived."} {
		if !strings.Contains(all, w) {
			t.Errorf("the diffs lack %q:\n%s", w, all)
		}
	}
}
