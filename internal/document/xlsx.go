package document

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/xuri/excelize/v2"
)

// FieldError is a read option the document cannot answer (a sheet it does
// not have, a range that is not A1 notation): Field names the option.
type FieldError struct {
	Field, Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

// excelizeOptions bound what excelize unpacks: the whole workbook, and
// the worksheet or string table it keeps in memory (a larger one goes to
// a temporary file, which excelize removes on Close).
func excelizeOptions() excelize.Options {
	return excelize.Options{UnzipSizeLimit: MaxTotalSize, UnzipXMLSizeLimit: MaxPartSize}
}

// openWorkbook opens a workbook under the bounds, first checking its
// parts with the same zip bounds every reader uses (excelize reads the
// sizes the zip claims).
func openWorkbook(data []byte) (*excelize.File, error) {
	p, err := openParts(data)
	if err != nil {
		return nil, err
	}
	var total uint64
	for _, f := range p.zr.File {
		total += f.UncompressedSize64
		if f.UncompressedSize64 > MaxPartSize || total > MaxTotalSize {
			return nil, tooLarge("the workbook")
		}
		// The claimed sizes can lie; each part is read once, bounded.
		rc, err := p.open(strings.TrimPrefix(f.Name, "/"))
		if err != nil {
			return nil, err
		}
		_, err = bytes.NewBuffer(nil).ReadFrom(rc)
		rc.Close()
		if err != nil {
			return nil, err
		}
	}
	if !p.has("xl/workbook.xml") {
		return nil, &Error{Code: CodeDamaged, Message: "the file has no Excel workbook inside (xl/workbook.xml is missing)"}
	}
	if err := checkDepth(context.Background(), p, "xl/workbook.xml"); err != nil {
		return nil, err
	}
	return excelize.OpenReader(bytes.NewReader(data), excelizeOptions())
}

// checkDepth walks a part only for the nesting bound (excelize decodes
// into structures whose own limit is far deeper).
func checkDepth(ctx context.Context, p *parts, name string) error {
	return p.walk(ctx, name, nil, nil, nil)
}

// readXlsx lists the sheets and gives one sheet's cells (opt.Sheet, or
// the first) in opt.Range, or all its used cells, as a Markdown table
// headed by column letters and row numbers, so a cell can be named back
// to fs.xlsx_set.
func readXlsx(ctx context.Context, data []byte, opt Options) (*Result, error) {
	f, err := openWorkbook(data)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	res := &Result{Complete: true}
	names := f.GetSheetList()
	for _, n := range names {
		dim, _ := f.GetSheetDimension(n)
		res.Sheets = append(res.Sheets, Sheet{Name: n, Dimension: dim})
	}
	if len(names) == 0 {
		return res, nil
	}
	sheet := opt.Sheet
	if sheet == "" {
		sheet = names[0]
	} else if idx, _ := f.GetSheetIndex(sheet); idx < 0 {
		return nil, &FieldError{Field: "sheet", Message: fmt.Sprintf("the workbook has no sheet %q; its sheets are %s", sheet, strings.Join(quoted(names), ", "))}
	}
	area, err := parseRange(opt.Range)
	if err != nil {
		return nil, err
	}
	rows, err := f.Rows(sheet)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	buf := textBuf{limit: opt.need()}
	var table [][]string
	maxCol := 0
	visited := 0
	lastRow := 0
	stopped := 0 // the first row not read when the read stopped early
	for r := 1; rows.Next(); r++ {
		if r%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if area.r2 > 0 && r > area.r2 {
			break
		}
		cols, err := rows.Columns()
		if err != nil {
			return nil, err
		}
		visited += max(len(cols), 1)
		if r < area.r1 {
			continue
		}
		if visited > MaxCells || buf.Len() > buf.limit {
			stopped = r
			break
		}
		lo, hi := area.c1, len(cols)
		if area.c2 > 0 {
			hi = min(hi, area.c2)
		}
		var cells []string
		for c := lo; c <= hi; c++ {
			v := ""
			if c-1 < len(cols) {
				v = cols[c-1]
			}
			if opt.Formulas {
				name, _ := excelize.CoordinatesToCellName(c, r)
				if fm, _ := f.GetCellFormula(sheet, name); fm != "" {
					v = "=" + fm + " → " + v
				}
			}
			cells = append(cells, v)
		}
		for len(cells) > 0 && cells[len(cells)-1] == "" {
			cells = cells[:len(cells)-1]
		}
		if len(cells) == 0 {
			continue
		}
		maxCol = max(maxCol, lo+len(cells)-1)
		row := append([]string{strconv.Itoa(r)}, cells...)
		table = append(table, row)
		lastRow = r
		buf.WriteString(strings.Join(row, " "))
	}
	if err := rows.Error(); err != nil {
		return nil, err
	}
	var out strings.Builder
	dim := ""
	for _, s := range res.Sheets {
		if s.Name == sheet {
			dim = s.Dimension
		}
	}
	fmt.Fprintf(&out, "## Sheet %s", sheet)
	if dim != "" {
		fmt.Fprintf(&out, " (%s)", dim)
	}
	out.WriteString("\n\n")
	if len(table) == 0 {
		out.WriteString("(no values")
		if opt.Range != "" {
			out.WriteString(" in " + opt.Range)
		}
		out.WriteString(")\n")
	} else {
		header := []string{""}
		for c := area.c1; c <= maxCol; c++ {
			n, _ := excelize.ColumnNumberToName(c)
			header = append(header, n)
		}
		out.WriteString(markdownTable(append([][]string{header}, table...)) + "\n")
	}
	res.Text = out.String()
	if stopped > 0 {
		res.Complete = false
		endCol := "XFD"
		if area.c2 > 0 {
			endCol, _ = excelize.ColumnNumberToName(area.c2)
		} else if maxCol > 0 {
			endCol, _ = excelize.ColumnNumberToName(maxCol)
		}
		startCol, _ := excelize.ColumnNumberToName(area.c1)
		end := ""
		if area.r2 > 0 {
			end = strconv.Itoa(area.r2)
		} else if _, r2, ok := dimensionEnd(dim); ok {
			end = strconv.Itoa(r2)
		}
		res.More = fmt.Sprintf("read on with sheet %q and range %s%d:%s%s", sheet, startCol, stopped, endCol, end)
		if end == "" {
			res.More = fmt.Sprintf("read on with sheet %q and range %s%d:%s%d", sheet, startCol, stopped, endCol, stopped+max(lastRow-area.r1, 100))
		}
	}
	return res, nil
}

func quoted(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

// area is a parsed range: 1-based, 0 for an open end.
type area struct{ c1, r1, c2, r2 int }

// parseRange reads A1 notation: "B2", "A1:C10", "A:C" (whole columns) or
// "3:7" (whole rows).
func parseRange(s string) (area, error) {
	a := area{c1: 1, r1: 1}
	if s == "" {
		return a, nil
	}
	bad := &FieldError{Field: "range", Message: fmt.Sprintf("%q is not a range in A1 notation (like B2, A1:C10, A:C or 3:7)", s)}
	from, to, two := strings.Cut(strings.ToUpper(strings.ReplaceAll(s, "$", "")), ":")
	if !two {
		to = from
	}
	c1, r1, ok1 := cellRef(from)
	c2, r2, ok2 := cellRef(to)
	if !ok1 || !ok2 || (c1 == 0) != (c2 == 0) || (r1 == 0) != (r2 == 0) || (c1 == 0 && r1 == 0) {
		return a, bad
	}
	if c1 > 0 {
		a.c1, a.c2 = min(c1, c2), max(c1, c2)
	}
	if r1 > 0 {
		a.r1, a.r2 = min(r1, r2), max(r1, r2)
	}
	return a, nil
}

// cellRef splits "B12" into column 2 and row 12; "B" or "12" leave the
// other 0.
func cellRef(s string) (col, row int, ok bool) {
	i := 0
	for i < len(s) && s[i] >= 'A' && s[i] <= 'Z' {
		i++
	}
	if i > 3 || (i == 0 && len(s) == 0) {
		return 0, 0, false
	}
	if i > 0 {
		n, err := excelize.ColumnNameToNumber(s[:i])
		if err != nil {
			return 0, 0, false
		}
		col = n
	}
	if i < len(s) {
		n, err := strconv.Atoi(s[i:])
		if err != nil || n < 1 || n > excelize.TotalRows {
			return 0, 0, false
		}
		row = n
	}
	return col, row, true
}

// dimensionEnd is the last column and row of a sheet's dimension ("A1:K9").
func dimensionEnd(dim string) (col, row int, ok bool) {
	_, end, two := strings.Cut(dim, ":")
	if !two {
		end = dim
	}
	c, r, ok := cellRef(end)
	return c, r, ok && c > 0 && r > 0
}
