package document

import (
	"context"
	"strings"
)

// Comparable is the text of an Office or OpenDocument file for showing
// what a change did to it (the Changes page diffs it, not the bytes):
// Word's Markdown, or every sheet of a workbook with its formulas. ok is
// false for anything else (PDF included: Hearth does not write PDFs) or a
// file it cannot read; no file at all (nil) is the empty text.
func Comparable(ctx context.Context, name string, data []byte) (text string, ok bool) {
	switch Detect(name) {
	case DOCX, PPTX, ODT, XLSX, ODS:
	default:
		return "", false
	}
	if data == nil {
		return "", true
	}
	var r Reader
	res, err := r.Read(ctx, name, data, Options{Formulas: true})
	if err != nil {
		return "", false
	}
	var b strings.Builder
	b.WriteString(res.Text)
	for _, s := range res.Sheets[min(1, len(res.Sheets)):] {
		more, err := r.Read(ctx, name, data, Options{Sheet: s.Name, Formulas: true})
		if err != nil {
			return "", false
		}
		b.WriteString("\n" + more.Text)
	}
	return b.String(), true
}
