// Package document turns the documents people keep (PDF, Word, Excel,
// PowerPoint, OpenDocument) into text a model can read, and writes the two
// kinds a model may change: a workbook's cells and a new Word document from
// Markdown.
//
// Every reader is bounded the same way, because the files come from
// anywhere: the file's size, each zipped part's uncompressed size and their
// total (a zip bomb), the depth of XML nesting, the time a read may take
// (a PDF that loops) and the text produced (a 2,000-page PDF or a
// 1,000,000-cell sheet answers its first part and says how to read on).
// A damaged or hostile file answers an *Error in Hearth's words.
package document

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// Formats, as fs.read's format field names them.
const (
	PDF  = "pdf"
	DOCX = "docx"
	XLSX = "xlsx"
	PPTX = "pptx"
	ODT  = "odt"
	ODS  = "ods"
)

// Bounds of every read.
const (
	// MaxFileSize is the largest document read.
	MaxFileSize = 100 << 20
	// MaxPartSize is the largest uncompressed part of a zipped document
	// (one XML file, one sheet).
	MaxPartSize = 64 << 20
	// MaxTotalSize is the most uncompressed bytes read from one zipped
	// document, all parts together.
	MaxTotalSize = 256 << 20
	// MaxDepth is the deepest XML nesting read.
	MaxDepth = 256
	// MaxTime is the longest one read may take.
	MaxTime = 30 * time.Second
	// MaxText is the most text one read produces, whatever the caller
	// asks: the rest is read on with pages, range or offset.
	MaxText = 4 << 20
	// MaxPages is the most PDF pages one read extracts.
	MaxPages = 500
	// MaxCells is the most workbook cells one read visits.
	MaxCells = 1_000_000
)

// Error is a document Hearth cannot read (or write), in Hearth's words:
// Code is stable for callers, Message is for the person, Err is the
// library's own detail when there is one.
type Error struct {
	Code    string
	Message string
	Err     error
}

func (e *Error) Error() string { return e.Message }
func (e *Error) Unwrap() error { return e.Err }

// Error codes.
const (
	CodeLegacy    = "old_format"
	CodeEncrypted = "encrypted"
	CodeDamaged   = "damaged"
	CodeTooLarge  = "too_large"
	CodeTimeout   = "too_slow"
	CodeMacros    = "macros"
	CodeNotFound  = "not_found"
)

func damaged(name string, err error) error {
	var de *Error
	var fe *FieldError
	if errors.As(err, &de) || errors.As(err, &fe) {
		return err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &Error{Code: CodeTimeout, Message: fmt.Sprintf("reading %s took longer than %s, so Hearth stopped; read a smaller part (pages or range)", filepath.Base(name), MaxTime), Err: err}
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	return &Error{Code: CodeDamaged, Message: fmt.Sprintf("%s looks damaged: Hearth could not read it as %s", filepath.Base(name), formatWord(Detect(name))), Err: err}
}

func formatWord(f string) string {
	switch f {
	case PDF:
		return "a PDF"
	case DOCX:
		return "a Word document"
	case XLSX:
		return "an Excel workbook"
	case PPTX:
		return "a PowerPoint presentation"
	case ODT, ODS:
		return "an OpenDocument file"
	}
	return "a document"
}

// Detect is the format of a file by its name, or "" when it is not a
// document Hearth reads as text.
func Detect(name string) string {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".pdf":
		return PDF
	case ".docx":
		return DOCX
	case ".xlsx":
		return XLSX
	case ".pptx":
		return PPTX
	case ".odt":
		return ODT
	case ".ods":
		return ODS
	}
	return ""
}

// Legacy reports whether name is an older Office format Hearth cannot
// read, with the error that says what to do.
func Legacy(name string) error {
	var newer string
	switch strings.ToLower(filepath.Ext(name)) {
	case ".doc":
		newer = ".docx"
	case ".xls":
		newer = ".xlsx"
	case ".ppt":
		newer = ".pptx"
	default:
		return nil
	}
	return &Error{Code: CodeLegacy, Message: fmt.Sprintf("%s is in an older format Hearth cannot read; open it and save it as %s", filepath.Base(name), newer)}
}

// MacroEnabled reports whether name is a macro-enabled Office file, which
// Hearth never writes.
func MacroEnabled(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".docm", ".dotm", ".xlsm", ".xltm", ".xlam", ".pptm", ".potm", ".ppsm", ".ppam":
		return true
	}
	return false
}

// Options selects the part of a document to read.
type Options struct {
	// Pages is a PDF page range ("3", "2-5", "10-"), 1-based.
	Pages string
	// Sheet and Range select a workbook's cells (A1 notation).
	Sheet, Range string
	// Formulas shows each formula beside its value.
	Formulas bool
	// Need is how much text the caller will use (offset + limit): a
	// reader stops once it has produced more, and says how to read on.
	// 0 or above MaxText is MaxText.
	Need int
}

func (o Options) need() int {
	if o.Need <= 0 || o.Need > MaxText {
		return MaxText
	}
	return o.Need
}

// Result is a document's text and what it is.
type Result struct {
	Format string
	// Text is Markdown for Word, PowerPoint and OpenDocument text, a
	// Markdown table per sheet for workbooks, and per-page text under
	// "--- page N ---" lines for PDF.
	Text string
	// Complete is false when the reader stopped early (Need, MaxText,
	// MaxPages, MaxCells); More then says how to read on.
	Complete bool
	More     string
	// Pages is a PDF's page count, or a presentation's slide count;
	// PagesRead the range this read covers; NoText the pages that have
	// no text layer (scanned pictures: Hearth does not read them).
	Pages     int
	PagesRead string
	NoText    []int
	// Sheets are a workbook's sheets.
	Sheets []Sheet
	// Images are the names of the pictures a document embeds.
	Images []string
}

// Sheet is one sheet of a workbook: its name and the range its cells use.
type Sheet struct {
	Name      string `json:"name"`
	Dimension string `json:"dimension"`
}

// Reader reads documents. Its zero value works; CacheDir (a folder under
// Hearth's data folder) lets the PDF engine's compiled code survive a
// restart. A Reader keeps one PDF engine warm once a PDF was read: Close
// releases it.
type Reader struct {
	CacheDir string
	pdf      pdfEngine
}

// Close releases the PDF engine, if one was started.
func (r *Reader) Close() error { return r.pdf.close() }

// Read reads a document's text. name gives the format (its extension);
// data is the whole file.
func (r *Reader) Read(ctx context.Context, name string, data []byte, opt Options) (res *Result, err error) {
	if err := Legacy(name); err != nil {
		return nil, err
	}
	if len(data) > MaxFileSize {
		return nil, &Error{Code: CodeTooLarge, Message: fmt.Sprintf("%s is %d MB, more than the %d MB Hearth reads as a document; read its raw bytes with encoding base64", filepath.Base(name), len(data)>>20, MaxFileSize>>20)}
	}
	if Detect(name) == PDF {
		// The engine's start (compiling PDFium, seconds; less with the
		// cache) is Hearth's own work, not the file's: it does not count
		// against the read's time.
		if _, err := r.pdfPool(); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, MaxTime)
	defer cancel()
	// A library that panics on a hostile file answers as a damaged file
	// does: it must not take Hearth down.
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, damaged(name, fmt.Errorf("panic: %v", p))
		}
	}()
	switch f := Detect(name); f {
	case PDF:
		res, err = r.readPDF(ctx, data, opt)
	case DOCX:
		res, err = readDocx(ctx, data, opt)
	case PPTX:
		res, err = readPptx(ctx, data, opt)
	case XLSX:
		res, err = readXlsx(ctx, data, opt)
	case ODT:
		res, err = readOdt(ctx, data, opt)
	case ODS:
		res, err = readOds(ctx, data, opt)
	default:
		return nil, fmt.Errorf("document: %s is not a document Hearth reads", name)
	}
	if err != nil {
		return nil, damaged(name, err)
	}
	res.Format = Detect(name)
	return res, nil
}

// textBuf collects a reader's text up to a bound.
type textBuf struct {
	bytes.Buffer
	limit int
}

func (t *textBuf) full() bool { return t.Len() > t.limit }
