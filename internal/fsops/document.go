package fsops

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hearth-dev/hearth/internal/document"
	"github.com/hearth-dev/hearth/internal/primitive"
)

// DocumentPart is what fs.read adds when the file is a document (PDF,
// Word, Excel, PowerPoint, OpenDocument): Data is then the document's
// text (internal/document says its shape), Offset and Length count bytes
// of that text, and EOF says the whole requested part was given. More
// says how to read on when it was not.
type DocumentPart struct {
	Format    string           `json:"format"`
	TextSize  int              `json:"text_size"`
	Pages     int              `json:"pages,omitempty"`
	PagesRead string           `json:"pages_read,omitempty"`
	NoText    []int            `json:"pages_without_text,omitempty"`
	Sheets    []document.Sheet `json:"sheets,omitempty"`
	Images    []string         `json:"images,omitempty"`
	More      string           `json:"more,omitempty"`
}

// isDocument reports whether fs.read answers abs's content as a
// document's text (an older Office format answers why it cannot).
func isDocument(abs string) bool {
	return document.Detect(abs) != "" || document.Legacy(abs) != nil
}

// notADocument refuses the document options on any other file.
func notADocument(abs string, in ReadInput) error {
	field := ""
	switch {
	case in.Pages != "":
		field = "pages"
	case in.Sheet != "":
		field = "sheet"
	case in.Range != "":
		field = "range"
	case in.Formulas:
		field = "formulas"
	}
	if field == "" {
		return nil
	}
	if isDocument(abs) {
		return &InputError{Field: field, Message: "is for a document's text, not its raw bytes: leave out encoding base64"}
	}
	return &InputError{Field: field, Message: fmt.Sprintf("is for documents (PDF, Word, Excel, PowerPoint, OpenDocument); %s is not one", abs)}
}

// readDocument answers a document's text: the reader produces at most
// offset+limit bytes of it (and says how to read on), and the answer is
// the limit's bytes from offset, cut at a character.
func (e *Engine) readDocument(ctx context.Context, abs string, f *os.File, info fs.FileInfo, in ReadInput, limit int) (ReadResult, error) {
	if err := document.Legacy(abs); err != nil {
		return ReadResult{}, err
	}
	if info.Size() > document.MaxFileSize {
		return ReadResult{}, &document.Error{Code: document.CodeTooLarge, Message: fmt.Sprintf("%s is %d MB, more than the %d MB Hearth reads as a document; read its raw bytes with encoding base64", abs, info.Size()>>20, document.MaxFileSize>>20)}
	}
	data, err := io.ReadAll(io.LimitReader(f, document.MaxFileSize+1))
	if err != nil {
		return ReadResult{}, fmt.Errorf("read %s: %w", abs, err)
	}
	need := in.Offset + int64(limit) + 1
	doc, err := e.Documents.Read(ctx, abs, data, document.Options{Pages: in.Pages, Sheet: in.Sheet, Range: in.Range, Formulas: in.Formulas, Need: int(min(need, document.MaxText))})
	if err != nil {
		return ReadResult{}, err
	}
	text := doc.Text
	res := ReadResult{Path: abs, Offset: in.Offset, Size: int64(len(data)), Encoding: EncodingUTF8, MTime: info.ModTime().UTC(),
		DocumentPart: &DocumentPart{Format: doc.Format, TextSize: len(text), Pages: doc.Pages, PagesRead: doc.PagesRead,
			NoText: doc.NoText, Sheets: doc.Sheets, Images: doc.Images}}
	if len(data) <= MaxHashSize {
		res.SHA256 = hashBytes(data)
	}
	var part []byte
	if in.Offset < int64(len(text)) {
		part = []byte(text[in.Offset:min(int64(len(text)), in.Offset+int64(limit))])
		if in.Offset+int64(len(part)) < int64(len(text)) {
			part = trimPartialRune(part)
		}
	}
	res.Data, res.Length = string(part), len(part)
	next := in.Offset + int64(len(part))
	res.EOF = doc.Complete && next >= int64(len(text))
	switch {
	case res.EOF:
	case next < int64(len(text)) && doc.More != "":
		rest, _ := strings.CutPrefix(doc.More, "read on with ")
		res.More = "read on with offset " + strconv.FormatInt(next, 10) + ", or " + rest
	case next < int64(len(text)):
		res.More = "read on with offset " + strconv.FormatInt(next, 10)
	default:
		res.More = doc.More
	}
	return res, nil
}

// XlsxSetInput is the input of xlsx_set: cells of one sheet of a workbook
// (document.SetCells says what a cell takes).
type XlsxSetInput struct {
	Path           string                     `json:"path"`
	Sheet          string                     `json:"sheet,omitempty"`
	Cells          map[string]json.RawMessage `json:"cells"`
	ExpectedSHA256 Expect                     `json:"expected_sha256,omitzero"`
}

// XlsxSetResult is the output of xlsx_set: the receipt, and each cell
// that changed, before and after.
type XlsxSetResult struct {
	MutationResult
	Sheet   string                `json:"sheet"`
	Changed []document.CellChange `json:"changed"`
}

// DocxWriteInput is the input of docx_write: a whole new Word document
// from Markdown.
type DocxWriteInput struct {
	Path           string `json:"path"`
	Markdown       string `json:"markdown"`
	ExpectedSHA256 Expect `json:"expected_sha256,omitzero"`
}

// checkOfficePath refuses what xlsx_set and docx_write never write: a
// macro-enabled file, or a file of another kind than the operation's.
func checkOfficePath(abs, ext, op string) error {
	if document.MacroEnabled(abs) {
		return &document.Error{Code: document.CodeMacros, Message: fmt.Sprintf("%s is a macro-enabled file, which Hearth never writes; use a %s file", abs, ext)}
	}
	if !strings.EqualFold(filepath.Ext(abs), ext) {
		return &InputError{Field: "path", Message: fmt.Sprintf("%s writes %s files; %s is not one", op, ext, abs)}
	}
	return nil
}

// officePrecheck refuses, before any permit is asked, a macro-enabled
// file, which xlsx_set and docx_write never write (a governance of such
// a file would ask first). A name of another kind is refused when the
// call runs (checkOfficePath).
func officePrecheck(ext, op string) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		var in struct {
			Path string `json:"path"`
		}
		if json.Unmarshal(raw, &in) != nil || !document.MacroEnabled(in.Path) {
			return nil
		}
		return mapErr(op, checkOfficePath(in.Path, ext, op))
	}
}

// XlsxSet sets cells of a workbook (creating it, or the sheet, when
// missing) through the same receipt-backed atomic replace as write, so
// undo restores the file byte for byte.
func (e *Engine) XlsxSet(ctx context.Context, route string, in XlsxSetInput) (XlsxSetResult, error) {
	abs, err := e.Roots.Resolve(in.Path)
	if err != nil {
		return XlsxSetResult{}, err
	}
	if err := checkOfficePath(abs, ".xlsx", "xlsx_set"); err != nil {
		return XlsxSetResult{}, err
	}
	out := XlsxSetResult{Sheet: in.Sheet}
	// Its receipt says patch: it edits part of the file and keeps the
	// rest, as a patch does (the Changes page says "edited").
	res, err := e.mutate(ctx, mutation{route: route, op: "patch", path: abs, expect: in.ExpectedSHA256, mkdir: true,
		change: func(s snapshot) ([]byte, error) {
			var data []byte
			if s.exists {
				if s.data == nil && s.size > 0 {
					return nil, fmt.Errorf("xlsx_set %s (%d bytes, at most %d): %w", abs, s.size, MaxInMemory, ErrTooLarge)
				}
				data = s.data
				if data == nil {
					data = []byte{}
				}
			}
			b, changed, err := document.SetCells(data, in.Sheet, in.Cells)
			out.Changed = changed
			return b, err
		}})
	out.MutationResult = res
	if out.Changed == nil {
		out.Changed = []document.CellChange{}
	}
	return out, err
}

// DocxWrite writes a new Word document made from Markdown, replacing the
// file if it exists (expected_sha256 guards that), with a receipt.
func (e *Engine) DocxWrite(ctx context.Context, route string, in DocxWriteInput) (WriteResult, error) {
	abs, err := e.Roots.Resolve(in.Path)
	if err != nil {
		return WriteResult{}, err
	}
	if err := checkOfficePath(abs, ".docx", "docx_write"); err != nil {
		return WriteResult{}, err
	}
	data, err := document.DocxFromMarkdown(in.Markdown)
	if err != nil {
		return WriteResult{}, err
	}
	res, err := e.mutate(ctx, mutation{route: route, op: "write", path: abs, expect: in.ExpectedSHA256, mkdir: true,
		change: func(snapshot) ([]byte, error) { return data, nil }})
	return WriteResult{res}, err
}

// docHead is the start of every file xlsx_set and docx_write write (a
// zip's first local header), for governance's view of the content.
const docHead = "PK\x03\x04"

// xlsxSetTarget is xlsx_set's Target: the workbook, judged by what it
// holds now (the cells change, the rest is kept, macros or not; a
// workbook with macros is refused when the call runs).
func (e *Engine) xlsxSetTarget(_ context.Context, _ string, raw json.RawMessage) (primitive.Target, error) {
	var in struct {
		Path string `json:"path"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return primitive.Target{}, fmt.Errorf("decode input: %w", err)
	}
	var t primitive.Target
	err := e.addTarget(&t, in.Path, func(real string) leaves {
		if _, err := os.Lstat(real); err == nil {
			l := fileLeaves(real, real)
			l.head = []byte(docHead)
			return l
		}
		return leaves{head: []byte(docHead)}
	})
	return t, err
}

// docxWriteTarget is docx_write's Target: the document the Markdown
// makes.
func (e *Engine) docxWriteTarget(_ context.Context, _ string, raw json.RawMessage) (primitive.Target, error) {
	var in struct {
		Path     string `json:"path"`
		Markdown string `json:"markdown"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return primitive.Target{}, fmt.Errorf("decode input: %w", err)
	}
	var t primitive.Target
	err := e.addTarget(&t, in.Path, func(real string) leaves {
		data, err := document.DocxFromMarkdown(in.Markdown)
		if err != nil {
			return leaves{head: []byte(docHead)} // refused when it runs
		}
		return leavesBytes(real, data)
	})
	return t, err
}
