package document

import (
	"context"
	"encoding/xml"
	"fmt"
	"path"
	"strconv"
	"strings"
)

// OpenDocument text and spreadsheets keep their content in content.xml,
// read here with the same walker and bounds as Word's XML.

// odfStyles reads content.xml's automatic styles: which text styles are
// bold or italic, and which list styles count (numbered lists).
func odfStyles(ctx context.Context, p *parts) (map[string]runFormat, map[string]bool, error) {
	formats := map[string]runFormat{}
	numbered := map[string]bool{}
	var name, list string
	err := p.walk(ctx, "content.xml", func(w *walker, t xml.StartElement) error {
		switch t.Name.Local {
		case "body":
			return errStop
		case "style":
			name = attr(t, "name")
		case "text-properties":
			if w.in("style") && name != "" {
				f := formats[name]
				if attr(t, "font-weight") == "bold" {
					f.bold = true
				}
				if attr(t, "font-style") == "italic" {
					f.italic = true
				}
				formats[name] = f
			}
		case "list-style":
			list = attr(t, "name")
		case "list-level-style-number":
			if w.in("list-style") && attr(t, "level") == "1" {
				numbered[list] = true
			}
		}
		return nil
	}, nil, nil)
	if err == errStop {
		err = nil
	}
	return formats, numbered, err
}

// readOdt turns an OpenDocument text into Markdown, as readDocx does.
func readOdt(ctx context.Context, data []byte, opt Options) (*Result, error) {
	p, err := openParts(data)
	if err != nil {
		return nil, err
	}
	if !p.has("content.xml") {
		return nil, &Error{Code: CodeDamaged, Message: "the file has no OpenDocument content inside (content.xml is missing)"}
	}
	formats, numbered, err := odfStyles(ctx, p)
	if err != nil {
		return nil, err
	}
	md := &markdown{buf: textBuf{limit: opt.need()}}
	var (
		para   paragraph
		spans  []runFormat
		lists  []string // the style of each open list
		images []string
		inBody bool
	)
	cur := func() runFormat {
		if len(spans) == 0 {
			return runFormat{}
		}
		return spans[len(spans)-1]
	}
	err = p.walk(ctx, "content.xml", func(w *walker, t xml.StartElement) error {
		switch t.Name.Local {
		case "body":
			inBody = true
		case "h":
			para = paragraph{heading: 1}
			if n, err := strconv.Atoi(attr(t, "outline-level")); err == nil {
				para.heading = min(max(n, 1), 6)
			}
		case "p":
			if !w.in("h") {
				para = paragraph{}
				if len(lists) > 0 && w.in("list-item") {
					para.list, para.level = true, min(len(lists)-1, 8)
					para.numID = lists[0]
					para.ordered = numbered[lists[0]]
				}
			}
		case "span":
			f := cur()
			g := formats[attr(t, "style-name")]
			spans = append(spans, runFormat{bold: f.bold || g.bold, italic: f.italic || g.italic})
		case "list":
			style := attr(t, "style-name")
			if style == "" && len(lists) > 0 {
				style = lists[len(lists)-1]
			}
			lists = append(lists, style)
		case "tab":
			para.add("\t", cur())
		case "s":
			para.add(" ", cur())
		case "line-break":
			para.add("\n", cur())
		case "image":
			if href := attrNS(t, "xlink", "href"); href != "" && !strings.HasPrefix(href, "http") {
				images = append(images, path.Base(href))
				para.add("![image]("+path.Base(href)+")", runFormat{})
			}
		case "table":
			if inBody {
				md.startTable()
			}
		case "table-row":
			md.startRow()
		case "table-cell":
			md.startCell()
		}
		return nil
	}, func(w *walker, t xml.EndElement) error {
		switch t.Name.Local {
		case "span":
			if len(spans) > 0 {
				spans = spans[:len(spans)-1]
			}
		case "list":
			if len(lists) > 0 {
				lists = lists[:len(lists)-1]
			}
		case "h", "p":
			if inBody && (t.Name.Local == "h" || !w.in("h")) {
				md.paragraph(para)
				para = paragraph{}
			}
		case "table-cell":
			md.endCell()
		case "table-row":
			md.endRow()
		case "table":
			md.endTable()
		}
		if md.buf.full() {
			return errStop
		}
		return nil
	}, func(w *walker, b []byte) error {
		if inBody && (w.in("p") || w.in("h")) {
			para.add(string(b), cur())
		}
		return nil
	})
	if err != nil && err != errStop {
		return nil, err
	}
	return &Result{Text: md.String(), Complete: err == nil, Images: images}, nil
}

// readOds gives an OpenDocument spreadsheet's sheets and one sheet's cells
// as readXlsx does. Repeated rows and cells (how OpenDocument writes empty
// space) are counted, not expanded, past the last value.
func readOds(ctx context.Context, data []byte, opt Options) (*Result, error) {
	p, err := openParts(data)
	if err != nil {
		return nil, err
	}
	if !p.has("content.xml") {
		return nil, &Error{Code: CodeDamaged, Message: "the file has no OpenDocument content inside (content.xml is missing)"}
	}
	a, err := parseRange(opt.Range)
	if err != nil {
		return nil, err
	}
	res := &Result{Complete: true}
	type cell struct {
		text, formula string
	}
	var (
		sheet      string
		want       string
		row, col   int
		rowRepeat  int
		cells      []cell
		cur        cell
		cellRepeat int
		table      [][]string
		maxCol     int
		visited    int
		buf        = textBuf{limit: opt.need()}
		stopped    int
	)
	want = opt.Sheet
	err = p.walk(ctx, "content.xml", func(w *walker, t xml.StartElement) error {
		switch t.Name.Local {
		case "table":
			if w.in("spreadsheet") && !w.in("table-cell") {
				sheet, row = attr(t, "name"), 0
				res.Sheets = append(res.Sheets, Sheet{Name: sheet})
				if want == "" {
					want = sheet
				}
			}
		case "table-row":
			rowRepeat = repeat(attr(t, "number-rows-repeated"))
			cells, col = nil, 0
		case "table-cell", "covered-table-cell":
			cellRepeat = repeat(attr(t, "number-columns-repeated"))
			cur = cell{formula: strings.TrimPrefix(attr(t, "formula"), "of:")}
		}
		return nil
	}, func(w *walker, t xml.EndElement) error {
		switch t.Name.Local {
		case "p":
			if w.in("table-cell") {
				cur.text += "\n"
			}
		case "table-cell", "covered-table-cell":
			cur.text = strings.TrimSuffix(cur.text, "\n")
			if cur.text == "" && cur.formula == "" {
				col += cellRepeat
				return nil
			}
			for range min(cellRepeat, MaxCells) {
				if col >= maxColumns {
					break
				}
				for len(cells) < col {
					cells = append(cells, cell{})
				}
				cells = append(cells, cur)
				col++
			}
		case "table-row":
			visited += max(col, 1)
			if visited > MaxCells {
				return errStop
			}
			first := row + 1
			row += rowRepeat
			if sheet != want || len(cells) == 0 {
				return nil
			}
			for r := first; r <= row && r < first+MaxCells/max(len(cells), 1); r++ {
				if r < a.r1 || (a.r2 > 0 && r > a.r2) {
					continue
				}
				if buf.full() {
					stopped = r
					return errStop
				}
				var vals []string
				hi := len(cells)
				if a.c2 > 0 {
					hi = min(hi, a.c2)
				}
				for c := a.c1; c <= hi; c++ {
					v := cells[c-1].text
					if opt.Formulas && cells[c-1].formula != "" {
						v = cells[c-1].formula + " → " + v
					}
					vals = append(vals, v)
				}
				for len(vals) > 0 && vals[len(vals)-1] == "" {
					vals = vals[:len(vals)-1]
				}
				if len(vals) == 0 {
					continue
				}
				maxCol = max(maxCol, a.c1+len(vals)-1)
				line := append([]string{strconv.Itoa(r)}, vals...)
				table = append(table, line)
				buf.WriteString(strings.Join(line, " "))
			}
		}
		return nil
	}, func(w *walker, b []byte) error {
		if w.in("table-cell") && w.in("p") {
			cur.text += string(b)
		}
		return nil
	})
	if err != nil && err != errStop {
		return nil, err
	}
	found := false
	for _, s := range res.Sheets {
		found = found || s.Name == want
	}
	if opt.Sheet != "" && !found {
		var names []string
		for _, s := range res.Sheets {
			names = append(names, s.Name)
		}
		return nil, &FieldError{Field: "sheet", Message: fmt.Sprintf("the spreadsheet has no sheet %q; its sheets are %s", opt.Sheet, strings.Join(quoted(names), ", "))}
	}
	var out strings.Builder
	fmt.Fprintf(&out, "## Sheet %s\n\n", want)
	if len(table) == 0 {
		out.WriteString("(no values)\n")
	} else {
		header := []string{""}
		for c := a.c1; c <= maxCol; c++ {
			header = append(header, columnName(c))
		}
		out.WriteString(markdownTable(append([][]string{header}, table...)) + "\n")
	}
	res.Text = out.String()
	if err == errStop {
		res.Complete = false
		if stopped > 0 {
			res.More = fmt.Sprintf("read on with sheet %q and range %s%d:%s%d", want, columnName(a.c1), stopped, columnName(max(maxCol, a.c1)), stopped+1000)
		}
	}
	return res, nil
}

// maxColumns is the most columns a sheet has (Excel's and Calc's limit).
const maxColumns = 16384

func repeat(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 1
	}
	return min(n, 1<<20)
}

// columnName is a 1-based column number in letters (1 is A, 27 is AA).
func columnName(n int) string {
	var b []byte
	for n > 0 {
		n--
		b = append([]byte{byte('A' + n%26)}, b...)
		n /= 26
	}
	return string(b)
}
