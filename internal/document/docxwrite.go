package document

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// MaxMarkdown is the longest Markdown DocxFromMarkdown takes.
const MaxMarkdown = 4 << 20

// DocxFromMarkdown makes a new Word document from Markdown: headings (#
// to ######), paragraphs, bulleted (-, *, +) and numbered (1.) lists
// nested by two spaces, tables (| a | b | with a |---| line), and **bold**
// and *italic* text. Anything else is kept as plain text. The package is
// the smallest Word and LibreOffice open: the document, its styles and
// its numbering, no macros.
func DocxFromMarkdown(md string) ([]byte, error) {
	if len(md) > MaxMarkdown {
		return nil, &FieldError{Field: "markdown", Message: fmt.Sprintf("is %d bytes; at most %d", len(md), MaxMarkdown)}
	}
	w := &docxWriter{}
	w.blocks(strings.Split(strings.ReplaceAll(md, "\r\n", "\n"), "\n"))
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	// A fixed time, so the same Markdown makes the same bytes.
	stamp := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, part := range []struct{ name, body string }{
		{"[Content_Types].xml", docxContentTypes},
		{"_rels/.rels", docxRootRels},
		{"word/_rels/document.xml.rels", docxDocRels},
		{"word/styles.xml", docxStyles()},
		{"word/numbering.xml", w.numbering()},
		{"word/document.xml", docxHead + w.body.String() + docxTail},
	} {
		fw, err := zw.CreateHeader(&zip.FileHeader{Name: part.name, Method: zip.Deflate, Modified: stamp})
		if err != nil {
			return nil, err
		}
		if _, err := fw.Write([]byte(part.body)); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

type docxWriter struct {
	body bytes.Buffer
	// ordered counts the numbered lists: each gets its own w:num so
	// that its numbering starts at 1.
	ordered int
}

func (w *docxWriter) blocks(lines []string) {
	var para []string
	flush := func() {
		if len(para) > 0 {
			w.paragraph("", "", 0, strings.Join(para, " "))
			para = nil
		}
	}
	// listNum is the numbering of the numbered list being written ("" when
	// none): a numbered item after anything but a list item starts a new
	// list, which counts from 1 again.
	listNum := ""
	for i := 0; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], " \t")
		trimmed := strings.TrimLeft(line, " ")
		indent := min((len(line)-len(trimmed))/2, 8)
		if text, ok := bullet(trimmed); ok {
			flush()
			w.paragraph("ListParagraph", "1", indent, text)
			continue
		}
		if text, ok := numbered(trimmed); ok {
			flush()
			if listNum == "" {
				w.ordered++
				listNum = strconv.Itoa(w.ordered + 1)
			}
			w.paragraph("ListParagraph", listNum, indent, text)
			continue
		}
		if trimmed == "" {
			flush()
			continue
		}
		listNum = ""
		switch {
		case headingLevel(trimmed) > 0:
			flush()
			n := headingLevel(trimmed)
			w.paragraph("Heading"+strconv.Itoa(n), "", 0, strings.TrimSpace(trimmed[n:]))
		case strings.HasPrefix(trimmed, "|") && i+1 < len(lines) && tableRule(lines[i+1]):
			flush()
			rows := [][]string{tableCells(trimmed)}
			i += 2
			for ; i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), "|"); i++ {
				rows = append(rows, tableCells(strings.TrimSpace(lines[i])))
			}
			i--
			w.table(rows)
		default:
			para = append(para, trimmed)
		}
	}
	flush()
}

func headingLevel(s string) int {
	n := 0
	for n < len(s) && s[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || n == len(s) || s[n] != ' ' {
		return 0
	}
	return n
}

func bullet(s string) (string, bool) {
	for _, m := range []string{"- ", "* ", "+ "} {
		if t, ok := strings.CutPrefix(s, m); ok {
			return t, true
		}
	}
	return "", false
}

func numbered(s string) (string, bool) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 || i+1 >= len(s) || (s[i] != '.' && s[i] != ')') || s[i+1] != ' ' {
		return "", false
	}
	return s[i+2:], true
}

func tableRule(s string) bool {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "|") || !strings.Contains(s, "-") {
		return false
	}
	return strings.Trim(s, "|-: ") == ""
}

func tableCells(s string) []string {
	s = strings.TrimSuffix(strings.TrimPrefix(s, "|"), "|")
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s) && s[i+1] == '|':
			cur.WriteByte('|')
			i++
		case s[i] == '|':
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(s[i])
		}
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

func (w *docxWriter) paragraph(style, numID string, level int, text string) {
	w.body.WriteString("<w:p>")
	if style != "" || numID != "" {
		w.body.WriteString("<w:pPr>")
		if style != "" {
			fmt.Fprintf(&w.body, `<w:pStyle w:val="%s"/>`, style)
		}
		if numID != "" {
			fmt.Fprintf(&w.body, `<w:numPr><w:ilvl w:val="%d"/><w:numId w:val="%s"/></w:numPr>`, level, numID)
		}
		w.body.WriteString("</w:pPr>")
	}
	w.runs(text)
	w.body.WriteString("</w:p>")
}

// runs writes text with **bold**, *italic* (or _italic_) and ***both***
// as runs; a marker that is never closed is kept as text.
func (w *docxWriter) runs(text string) {
	bold, italic := false, false
	var cur strings.Builder
	emit := func() {
		if cur.Len() == 0 {
			return
		}
		w.body.WriteString("<w:r>")
		if bold || italic {
			w.body.WriteString("<w:rPr>")
			if bold {
				w.body.WriteString("<w:b/>")
			}
			if italic {
				w.body.WriteString("<w:i/>")
			}
			w.body.WriteString("</w:rPr>")
		}
		w.body.WriteString(`<w:t xml:space="preserve">`)
		xml.EscapeText(&w.body, []byte(cur.String()))
		w.body.WriteString("</w:t></w:r>")
		cur.Reset()
	}
	for i := 0; i < len(text); {
		switch {
		case strings.HasPrefix(text[i:], "**") && (bold || strings.Contains(text[i+2:], "**")):
			emit()
			bold = !bold
			i += 2
		case (text[i] == '*' || text[i] == '_') && (italic || strings.IndexByte(text[i+1:], text[i]) >= 0) && (text[i] == '*' || i == 0 || text[i-1] == ' ' || italic):
			emit()
			italic = !italic
			i++
		default:
			cur.WriteByte(text[i])
			i++
		}
	}
	emit()
}

func (w *docxWriter) table(rows [][]string) {
	cols := 0
	for _, r := range rows {
		cols = max(cols, len(r))
	}
	w.body.WriteString(`<w:tbl><w:tblPr><w:tblStyle w:val="TableGrid"/><w:tblW w:w="5000" w:type="pct"/></w:tblPr><w:tblGrid>`)
	for range cols {
		fmt.Fprintf(&w.body, `<w:gridCol w:w="%d"/>`, 9000/max(cols, 1))
	}
	w.body.WriteString("</w:tblGrid>")
	for i, r := range rows {
		w.body.WriteString("<w:tr>")
		for c := range cols {
			text := ""
			if c < len(r) {
				text = r[c]
			}
			w.body.WriteString("<w:tc><w:p>")
			if i == 0 && text != "" && !strings.HasPrefix(text, "**") {
				text = "**" + text + "**"
			}
			w.runs(text)
			w.body.WriteString("</w:p></w:tc>")
		}
		w.body.WriteString("</w:tr>")
	}
	w.body.WriteString("</w:tbl>")
}

// numbering has the bullet list (numId 1) and one numbered list per
// numbered list of the document (numIds 2 and up), each starting at 1.
func (w *docxWriter) numbering() string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n" + `<w:numbering xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">`)
	for id, format := range []string{"bullet", "decimal"} {
		fmt.Fprintf(&b, `<w:abstractNum w:abstractNumId="%d">`, id)
		for l := range 9 {
			text := "•"
			if format == "decimal" {
				text = "%" + strconv.Itoa(l+1) + "."
			}
			fmt.Fprintf(&b, `<w:lvl w:ilvl="%d"><w:start w:val="1"/><w:numFmt w:val="%s"/><w:lvlText w:val="%s"/><w:lvlJc w:val="left"/><w:pPr><w:ind w:left="%d" w:hanging="360"/></w:pPr></w:lvl>`, l, format, text, 720*(l+1))
		}
		b.WriteString("</w:abstractNum>")
	}
	b.WriteString(`<w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num>`)
	for n := range w.ordered {
		fmt.Fprintf(&b, `<w:num w:numId="%d"><w:abstractNumId w:val="1"/><w:lvlOverride w:ilvl="0"><w:startOverride w:val="1"/></w:lvlOverride></w:num>`, n+2)
	}
	b.WriteString("</w:numbering>")
	return b.String()
}

const docxContentTypes = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/><Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/><Override PartName="/word/numbering.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.numbering+xml"/></Types>`

const docxRootRels = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`

const docxDocRels = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/numbering" Target="numbering.xml"/></Relationships>`

const docxHead = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><w:body>`

const docxTail = `<w:sectPr><w:pgSz w:w="11906" w:h="16838"/><w:pgMar w:top="1440" w:right="1440" w:bottom="1440" w:left="1440" w:header="708" w:footer="708" w:gutter="0"/></w:sectPr></w:body></w:document>`

// docxStyles are the styles the writer uses: Normal, Heading1 to 6 (named
// "heading N", as Word and LibreOffice know them), ListParagraph and
// TableGrid.
func docxStyles() string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:styles xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:docDefaults><w:rPrDefault><w:rPr><w:rFonts w:ascii="Calibri" w:hAnsi="Calibri" w:cs="Calibri"/><w:sz w:val="22"/></w:rPr></w:rPrDefault><w:pPrDefault><w:pPr><w:spacing w:after="120"/></w:pPr></w:pPrDefault></w:docDefaults><w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/></w:style>`)
	for n, size := range []int{32, 28, 26, 24, 22, 22} {
		fmt.Fprintf(&b, `<w:style w:type="paragraph" w:styleId="Heading%d"><w:name w:val="heading %d"/><w:basedOn w:val="Normal"/><w:next w:val="Normal"/><w:pPr><w:keepNext/><w:spacing w:before="240" w:after="120"/><w:outlineLvl w:val="%d"/></w:pPr><w:rPr><w:b/><w:sz w:val="%d"/></w:rPr></w:style>`, n+1, n+1, n, size)
	}
	b.WriteString(`<w:style w:type="paragraph" w:styleId="ListParagraph"><w:name w:val="List Paragraph"/><w:basedOn w:val="Normal"/><w:pPr><w:spacing w:after="0"/></w:pPr></w:style><w:style w:type="table" w:styleId="TableGrid"><w:name w:val="Table Grid"/><w:tblPr><w:tblBorders><w:top w:val="single" w:sz="4" w:space="0" w:color="auto"/><w:left w:val="single" w:sz="4" w:space="0" w:color="auto"/><w:bottom w:val="single" w:sz="4" w:space="0" w:color="auto"/><w:right w:val="single" w:sz="4" w:space="0" w:color="auto"/><w:insideH w:val="single" w:sz="4" w:space="0" w:color="auto"/><w:insideV w:val="single" w:sz="4" w:space="0" w:color="auto"/></w:tblBorders></w:tblPr></w:style></w:styles>`)
	return b.String()
}
