package document

import (
	"context"
	"encoding/xml"
	"path"
	"strconv"
	"strings"
)

// readDocx turns word/document.xml into Markdown: headings (by the
// paragraph's style, as styles.xml names it, or its outline level),
// bulleted and numbered lists (numbering.xml says which), tables, bold and
// italic runs, and the names of the pictures it shows.
func readDocx(ctx context.Context, data []byte, opt Options) (*Result, error) {
	p, err := openParts(data)
	if err != nil {
		return nil, err
	}
	if !p.has("word/document.xml") {
		return nil, &Error{Code: CodeDamaged, Message: "the file has no Word document inside (word/document.xml is missing)"}
	}
	headings, err := docxHeadings(ctx, p)
	if err != nil {
		return nil, err
	}
	ordered, err := docxNumbering(ctx, p)
	if err != nil {
		return nil, err
	}
	rels, err := p.rels(ctx, "word/document.xml")
	if err != nil {
		return nil, err
	}
	md := &markdown{buf: textBuf{limit: opt.need()}}
	var (
		para    paragraph
		run     runFormat
		inRPr   bool
		images  []string
		seenImg = map[string]bool{}
	)
	addImage := func(id string) {
		if t, ok := rels[id]; ok && !seenImg[t] {
			seenImg[t] = true
			images = append(images, path.Base(t))
			para.add("![image]("+path.Base(t)+")", runFormat{})
		}
	}
	err = p.walk(ctx, "word/document.xml", func(w *walker, t xml.StartElement) error {
		switch t.Name.Local {
		case "p":
			para = paragraph{}
		case "pStyle":
			if w.in("pPr") {
				para.heading = headings[attr(t, "val")]
			}
		case "outlineLvl":
			if w.in("pPr") && para.heading == 0 {
				if n, err := strconv.Atoi(attr(t, "val")); err == nil && n >= 0 && n < 6 {
					para.heading = n + 1
				}
			}
		case "ilvl":
			if w.in("numPr") {
				para.level, _ = strconv.Atoi(attr(t, "val"))
				para.level = min(max(para.level, 0), 8)
			}
		case "numId":
			if w.in("numPr") {
				para.numID = attr(t, "val")
				para.list = para.numID != "0"
			}
		case "r":
			run = runFormat{}
		case "rPr":
			inRPr = !w.in("pPr")
		case "b":
			if inRPr {
				run.bold = on(attr(t, "val"))
			}
		case "i":
			if inRPr {
				run.italic = on(attr(t, "val"))
			}
		case "tab":
			if w.in("r") {
				para.add("\t", run)
			}
		case "br", "cr":
			if w.in("r") {
				para.add("\n", run)
			}
		case "blip":
			addImage(attrNS(t, "r", "embed"))
		case "imagedata":
			addImage(attrNS(t, "r", "id"))
		case "tbl":
			md.startTable()
		case "tr":
			md.startRow()
		case "tc":
			md.startCell()
		}
		return nil
	}, func(w *walker, t xml.EndElement) error {
		switch t.Name.Local {
		case "rPr":
			inRPr = false
		case "p":
			if para.list {
				para.ordered = ordered[para.numID+"/"+strconv.Itoa(para.level)]
			}
			md.paragraph(para)
		case "tc":
			md.endCell()
		case "tr":
			md.endRow()
		case "tbl":
			md.endTable()
		}
		if md.buf.full() {
			return errStop
		}
		return nil
	}, func(w *walker, b []byte) error {
		// w:t only: w:delText is deleted text, w:instrText a field's code.
		if len(w.stack) > 0 && w.stack[len(w.stack)-1] == "t" && w.in("r") {
			para.add(string(b), run)
		}
		return nil
	})
	if err != nil && err != errStop {
		return nil, err
	}
	return &Result{Text: md.String(), Complete: err == nil, Images: images}, nil
}

func on(val string) bool { return val == "" || (val != "0" && val != "false" && val != "none") }

// docxHeadings maps paragraph style ids to heading levels: styles named
// "heading N" or "Title", or with an outline level.
func docxHeadings(ctx context.Context, p *parts) (map[string]int, error) {
	out := map[string]int{"Title": 1}
	for i := 1; i <= 6; i++ {
		out["Heading"+strconv.Itoa(i)] = i
	}
	if !p.has("word/styles.xml") {
		return out, nil
	}
	var id string
	err := p.walk(ctx, "word/styles.xml", func(w *walker, t xml.StartElement) error {
		switch t.Name.Local {
		case "style":
			id = attr(t, "styleId")
		case "name":
			if w.in("style") && id != "" {
				n := strings.ToLower(attr(t, "val"))
				if n == "title" {
					out[id] = 1
				} else if lv, ok := strings.CutPrefix(n, "heading "); ok {
					if k, err := strconv.Atoi(lv); err == nil && k >= 1 && k <= 6 {
						out[id] = k
					}
				}
			}
		case "outlineLvl":
			if w.in("style") && id != "" && out[id] == 0 {
				if k, err := strconv.Atoi(attr(t, "val")); err == nil && k >= 0 && k < 6 {
					out[id] = k + 1
				}
			}
		}
		return nil
	}, nil, nil)
	return out, err
}

// docxNumbering tells numbered lists from bulleted ones: "numId/level"
// is true when that level counts (decimal, letters, roman).
func docxNumbering(ctx context.Context, p *parts) (map[string]bool, error) {
	out := map[string]bool{}
	if !p.has("word/numbering.xml") {
		return out, nil
	}
	abstract := map[string]map[int]bool{}
	nums := map[string]string{}
	var absID, numID string
	var lvl int
	err := p.walk(ctx, "word/numbering.xml", func(w *walker, t xml.StartElement) error {
		switch t.Name.Local {
		case "abstractNum":
			absID = attr(t, "abstractNumId")
			abstract[absID] = map[int]bool{}
		case "lvl":
			lvl, _ = strconv.Atoi(attr(t, "ilvl"))
		case "numFmt":
			if w.in("abstractNum") {
				f := attr(t, "val")
				abstract[absID][lvl] = f != "bullet" && f != "none" && f != ""
			}
		case "num":
			numID = attr(t, "numId")
		case "abstractNumId":
			if w.in("num") {
				nums[numID] = attr(t, "val")
			}
		}
		return nil
	}, nil, nil)
	for n, a := range nums {
		for l, ord := range abstract[a] {
			out[n+"/"+strconv.Itoa(l)] = ord
		}
	}
	return out, err
}

// runFormat is a run's bold and italic.
type runFormat struct{ bold, italic bool }

// paragraph is one paragraph being read: its kind and its text in runs.
type paragraph struct {
	heading int
	list    bool
	ordered bool
	numID   string
	level   int
	segs    []seg
}

type seg struct {
	text string
	f    runFormat
}

func (p *paragraph) add(s string, f runFormat) {
	if n := len(p.segs); n > 0 && p.segs[n-1].f == f {
		p.segs[n-1].text += s
		return
	}
	p.segs = append(p.segs, seg{s, f})
}

// text is the paragraph's Markdown: runs in ** and *, spaces kept outside
// the markers (Markdown ignores "** x**").
func (p *paragraph) text() string {
	var b strings.Builder
	for _, s := range p.segs {
		if strings.TrimSpace(s.text) == "" || s.f == (runFormat{}) {
			b.WriteString(s.text)
			continue
		}
		core := strings.TrimSpace(s.text)
		lead := s.text[:strings.Index(s.text, core)]
		trail := s.text[len(lead)+len(core):]
		mark := ""
		if s.f.bold {
			mark += "**"
		}
		if s.f.italic {
			mark += "*"
		}
		b.WriteString(lead + mark + core + reverse(mark) + trail)
	}
	return b.String()
}

func reverse(s string) string {
	r := []byte(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}

// markdown assembles blocks: paragraphs, list items and tables (a table
// inside a table is flattened into its cell).
type markdown struct {
	buf      textBuf
	tables   []*table
	lastList string // the list of the last block, "" when it was no list item
	counters map[string]int
}

type table struct {
	rows [][]string
	row  []string
	cell []string
}

func (m *markdown) String() string { return strings.TrimRight(m.buf.String(), "\n") + "\n" }

// block adds one block; consecutive items of one list (key) stay
// together, anything else is set apart by a blank line.
func (m *markdown) block(s string, list bool, key string) {
	if m.buf.Len() > 0 && !(list && m.lastList != "" && m.lastList == key) {
		m.buf.WriteString("\n")
	}
	m.buf.WriteString(s)
	m.buf.WriteString("\n")
	m.lastList = ""
	if list {
		m.lastList = key
	}
}

func (m *markdown) paragraph(p paragraph) {
	text := strings.TrimRight(p.text(), " \t\n")
	if len(m.tables) > 0 {
		t := m.tables[len(m.tables)-1]
		if text != "" {
			t.cell = append(t.cell, text)
		}
		return
	}
	if strings.TrimSpace(text) == "" {
		return
	}
	switch {
	case p.heading > 0:
		m.block(strings.Repeat("#", p.heading)+" "+strings.ReplaceAll(text, "\n", " "), false, "")
	case p.list:
		if m.counters == nil {
			m.counters = map[string]int{}
		}
		indent := strings.Repeat("  ", p.level)
		key := p.numID + "/" + strconv.Itoa(p.level)
		if m.lastList != p.numID {
			clear(m.counters)
		}
		m.counters[key]++
		marker := "- "
		if p.ordered {
			marker = strconv.Itoa(m.counters[key]) + ". "
		}
		m.block(indent+marker+strings.ReplaceAll(text, "\n", " "), true, p.numID)
	default:
		m.block(text, false, "")
	}
}

func (m *markdown) startTable() { m.tables = append(m.tables, &table{}) }
func (m *markdown) startRow() {
	if n := len(m.tables); n > 0 {
		m.tables[n-1].row = nil
	}
}
func (m *markdown) startCell() {
	if n := len(m.tables); n > 0 {
		m.tables[n-1].cell = nil
	}
}
func (m *markdown) endCell() {
	if n := len(m.tables); n > 0 {
		t := m.tables[n-1]
		t.row = append(t.row, strings.Join(t.cell, " "))
	}
}
func (m *markdown) endRow() {
	if n := len(m.tables); n > 0 {
		t := m.tables[n-1]
		t.rows = append(t.rows, t.row)
	}
}

func (m *markdown) endTable() {
	n := len(m.tables)
	if n == 0 {
		return
	}
	t := m.tables[n-1]
	m.tables = m.tables[:n-1]
	if len(m.tables) > 0 {
		// A table in a cell: its rows become the cell's text.
		outer := m.tables[len(m.tables)-1]
		for _, r := range t.rows {
			outer.cell = append(outer.cell, strings.Join(r, " / "))
		}
		return
	}
	if len(t.rows) == 0 {
		return
	}
	m.block(markdownTable(t.rows), false, "")
}

// markdownTable is rows as a Markdown table, the first row its header.
func markdownTable(rows [][]string) string {
	cols := 0
	for _, r := range rows {
		cols = max(cols, len(r))
	}
	if cols == 0 {
		return ""
	}
	var b strings.Builder
	line := func(r []string) {
		b.WriteString("|")
		for i := range cols {
			c := ""
			if i < len(r) {
				c = cellText(r[i])
			}
			b.WriteString(" " + c + " |")
		}
		b.WriteString("\n")
	}
	line(rows[0])
	b.WriteString("|" + strings.Repeat(" --- |", cols) + "\n")
	for _, r := range rows[1:] {
		line(r)
	}
	return strings.TrimRight(b.String(), "\n")
}

// cellText keeps a cell on its line of a Markdown table.
func cellText(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "\r", "")
	return strings.ReplaceAll(s, "\n", "<br>")
}
