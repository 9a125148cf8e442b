package document

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/xuri/excelize/v2"
)

// MaxSetCells is the most cells one SetCells call changes.
const MaxSetCells = 10000

// CellChange is one cell SetCells changed: its value (or formula, with
// its leading "=") before and after.
type CellChange struct {
	Cell   string `json:"cell"`
	Before string `json:"before"`
	After  string `json:"after"`
}

// SetCells sets cells of one sheet of a workbook and returns the new file:
// data is the workbook (nil for a new one), sheet the sheet (the first
// when empty; created when missing), cells maps a cell ("B2") to a value
// (a number, text, true/false, null to clear it, or text starting with "="
// for a formula) or a range ("A1:C2") to rows of values. Everything else
// in the workbook (formatting, other sheets, charts) is kept by excelize;
// Excel and LibreOffice recompute the formulas when they open it.
func SetCells(data []byte, sheet string, cells map[string]json.RawMessage) ([]byte, []CellChange, error) {
	if len(cells) == 0 {
		return nil, nil, &FieldError{Field: "cells", Message: `give at least one cell, like {"B2": 99, "C3": "=SUM(B1:B2)"}`}
	}
	var f *excelize.File
	if data == nil {
		f = excelize.NewFile()
		if sheet != "" && sheet != "Sheet1" {
			if err := f.SetSheetName("Sheet1", sheet); err != nil {
				return nil, nil, &FieldError{Field: "sheet", Message: err.Error()}
			}
		}
	} else {
		p, err := openParts(data)
		if err != nil {
			return nil, nil, damaged("the workbook.xlsx", err)
		}
		if p.has("xl/vbaProject.bin") {
			return nil, nil, &Error{Code: CodeMacros, Message: "the workbook contains macros, and Hearth never writes a macro-enabled file"}
		}
		if f, err = openWorkbook(data); err != nil {
			return nil, nil, damaged("the workbook.xlsx", err)
		}
	}
	defer f.Close()
	if sheet == "" {
		sheet = f.GetSheetList()[0]
	}
	if idx, _ := f.GetSheetIndex(sheet); idx < 0 {
		if _, err := f.NewSheet(sheet); err != nil {
			return nil, nil, &FieldError{Field: "sheet", Message: fmt.Sprintf("%q cannot be a sheet name: %v", sheet, err)}
		}
	}
	keys := make([]string, 0, len(cells))
	for k := range cells {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var changes []CellChange
	n := 0
	for _, k := range keys {
		targets, values, err := cellValues(k, cells[k])
		if err != nil {
			return nil, nil, err
		}
		n += len(targets)
		if n > MaxSetCells {
			return nil, nil, &FieldError{Field: "cells", Message: fmt.Sprintf("at most %d cells a call; send the rest in another call", MaxSetCells)}
		}
		for i, cell := range targets {
			before := cellShown(f, sheet, cell)
			if err := setCell(f, sheet, cell, values[i]); err != nil {
				return nil, nil, &FieldError{Field: "cells." + k, Message: err.Error()}
			}
			if after := cellShown(f, sheet, cell); after != before {
				changes = append(changes, CellChange{Cell: cell, Before: before, After: after})
			}
		}
	}
	full := true
	if err := f.SetCalcProps(&excelize.CalcPropsOptions{FullCalcOnLoad: &full}); err != nil {
		return nil, nil, err
	}
	buf, err := f.WriteToBuffer()
	if err != nil {
		return nil, nil, err
	}
	return buf.Bytes(), changes, nil
}

// cellShown is a cell as the Changes page shows it: its formula, or its
// value.
func cellShown(f *excelize.File, sheet, cell string) string {
	if fm, _ := f.GetCellFormula(sheet, cell); fm != "" {
		return "=" + fm
	}
	v, _ := f.GetCellValue(sheet, cell)
	return v
}

// cellValues expands one key of cells: a cell and its value, or a range
// and its rows.
func cellValues(key string, raw json.RawMessage) ([]string, []any, error) {
	field := "cells." + key
	a, err := parseRange(key)
	if err != nil || a.c2 == 0 || a.r2 == 0 {
		return nil, nil, &FieldError{Field: field, Message: "is not a cell or range in A1 notation (like B2 or A1:C3)"}
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, nil, &FieldError{Field: field, Message: "is not a JSON value"}
	}
	if a.c1 == a.c2 && a.r1 == a.r2 {
		if _, isRows := v.([]any); isRows {
			return nil, nil, &FieldError{Field: field, Message: "one cell takes one value; a range (like A1:C2) takes rows"}
		}
		name, _ := excelize.CoordinatesToCellName(a.c1, a.r1)
		return []string{name}, []any{v}, nil
	}
	rows, ok := v.([]any)
	width, height := a.c2-a.c1+1, a.r2-a.r1+1
	if !ok || len(rows) != height {
		return nil, nil, &FieldError{Field: field, Message: fmt.Sprintf("a range of %d rows takes an array of %d rows, each an array of %d values", height, height, width)}
	}
	if width*height > MaxSetCells {
		return nil, nil, &FieldError{Field: field, Message: fmt.Sprintf("at most %d cells a call", MaxSetCells)}
	}
	var names []string
	var vals []any
	for i, r := range rows {
		row, ok := r.([]any)
		if !ok || len(row) != width {
			return nil, nil, &FieldError{Field: fmt.Sprintf("%s[%d]", field, i), Message: fmt.Sprintf("must be an array of %d values", width)}
		}
		for j, c := range row {
			name, _ := excelize.CoordinatesToCellName(a.c1+j, a.r1+i)
			names = append(names, name)
			vals = append(vals, c)
		}
	}
	return names, vals, nil
}

func setCell(f *excelize.File, sheet, cell string, v any) error {
	switch x := v.(type) {
	case nil:
		if err := f.SetCellFormula(sheet, cell, ""); err != nil {
			return err
		}
		return f.SetCellValue(sheet, cell, nil)
	case string:
		if formula, ok := strings.CutPrefix(x, "="); ok && formula != "" {
			return f.SetCellFormula(sheet, cell, formula)
		}
		if err := f.SetCellFormula(sheet, cell, ""); err != nil {
			return err
		}
		return f.SetCellStr(sheet, cell, x)
	case float64:
		if err := f.SetCellFormula(sheet, cell, ""); err != nil {
			return err
		}
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return f.SetCellInt(sheet, cell, int64(x))
		}
		return f.SetCellFloat(sheet, cell, x, -1, 64)
	case bool:
		if err := f.SetCellFormula(sheet, cell, ""); err != nil {
			return err
		}
		return f.SetCellBool(sheet, cell, x)
	}
	return fmt.Errorf("a cell takes a number, text, true/false, null or a formula (text starting with =)")
}
