package fsops

import (
	"context"
	"errors"
	"fmt"

	"github.com/hearth-dev/hearth/internal/document"
	"github.com/hearth-dev/hearth/internal/primitive"
)

// The fs tool's field descriptions are shared by every operation that
// takes the field, because the advertised schema is one flat object.
var (
	fPath     = primitive.Field{Name: "path", Type: primitive.TString, Required: true, Desc: "Absolute path under a configured root (search: the directory to search)."}
	fLimit    = primitive.Field{Name: "limit", Type: primitive.TInteger, Min: primitive.Bound(1), Desc: "list: max entries; read: max bytes; search: max matches."}
	fEncoding = primitive.Field{Name: "encoding", Type: primitive.TString, Enum: []string{"utf8", "base64"}, Desc: "utf8 (default) or base64 (read output / write data)."}
	fSheet    = primitive.Field{Name: "sheet", Type: primitive.TString, Desc: "read/xlsx_set: workbook sheet."}
	fExpect   = primitive.Field{Name: "expected_sha256", Type: primitive.TString, Nullable: true, Desc: "write, patch, xlsx_set, docx_write: the file's current sha256 (hex), or null: it must not exist."}
)

// mapErr turns the engine's errors into results a model can act on.
func mapErr(op string, err error) error {
	var ce *ConflictError
	var ie *InputError
	var contain *ContainmentError
	var notOrdinary *NotOrdinaryError
	var docErr *document.Error
	var docField *document.FieldError
	switch {
	case errors.As(err, &docField):
		return primitive.Failed("invalid_input", "fs.%s: field %q: %s", op, docField.Field, docField.Message)
	case errors.As(err, &docErr):
		pe := primitive.Failed(docErr.Code, "fs.%s: %s", op, docErr.Message)
		if docErr.Err != nil {
			pe = pe.WithDetails(map[string]any{"error": docErr.Err.Error()})
		}
		return pe
	case errors.As(err, &ce):
		return (&primitive.Error{State: primitive.StateConflict, Code: ce.Reason, Message: "fs." + op + ": " + ce.Message}).WithDetails(map[string]any{
			"path": ce.Path, "reason": ce.Reason, "expected_sha256": ce.Expected, "current_sha256": ce.Actual,
			"replacement": ce.Replacement, "matches": ce.Matches, "receipt_id": ce.ReceiptID})
	case errors.As(err, &ie):
		return primitive.Failed("invalid_input", "fs.%s: field %q: %s", op, ie.Field, ie.Message)
	case errors.As(err, &contain):
		return primitive.Blocked("outside_roots", "fs.%s: %v", op, err).WithDetails(map[string]any{"rule": string(contain.Rule), "path": contain.Path})
	case errors.As(err, &notOrdinary):
		return primitive.Blocked("not_ordinary", "fs.%s: %s", op, notOrdinarySentence(notOrdinary)).
			WithDetails(map[string]any{"path": notOrdinary.Path, "admitted": notOrdinary.Admitted, "reason": string(notOrdinary.Why)})
	case errors.Is(err, ErrOperatorChange):
		return primitive.Blocked("operator_change", "fs.%s: %v", op, err)
	case errors.Is(err, ErrReceiptExpired):
		return primitive.Failed("expired", "fs.%s: %v", op, err)
	case errors.Is(err, ErrReceiptNotFound):
		return primitive.Failed("not_found", "fs.%s: %v", op, err)
	case errors.Is(err, ErrTooLarge):
		return primitive.Failed("too_large", "fs.%s: %v", op, err)
	}
	return systemError(op, err)
}

// notOrdinarySentence says in Hearth's words why a write admitted as
// ordinary was refused when it opened its file.
func notOrdinarySentence(e *NotOrdinaryError) string {
	if e.Why != "" {
		return fmt.Sprintf("nothing was written: when Hearth opened %s it was no longer an ordinary file (it would %s), so it needs the operator's approval; send the call again to ask", e.Path, e.Why.Said())
	}
	return fmt.Sprintf("nothing was written: when Hearth opened %s, the path no longer led where it did when the call was admitted (a link changed); send the call again to have it checked", e.Path)
}

func run[I any, O any](op string, f func(context.Context, *primitive.Call, I) (O, error)) func(context.Context, *primitive.Call, I) (any, error) {
	return func(ctx context.Context, call *primitive.Call, in I) (any, error) {
		out, err := f(ctx, call, in)
		if err != nil {
			return nil, mapErr(op, err)
		}
		return out, nil
	}
}

// Specs returns the fs tool's primitives.
func (e *Engine) Specs() []*primitive.Spec {
	route := func(c *primitive.Call) string { return c.Route }
	return []*primitive.Spec{
		{Tool: "fs", Operation: "list", Risk: primitive.RiskRead, Summary: "directory entries (name, type, size, mtime).",
			Fields: []primitive.Field{fPath, fLimit},
			Run:    primitive.Typed(run("list", func(ctx context.Context, _ *primitive.Call, in ListInput) (ListResult, error) { return e.List(ctx, in) }))},
		{Tool: "fs", Operation: "read", Risk: primitive.RiskRead, Summary: "file content from offset (bounded), documents (PDF, Office) as text; reports size, eof and the file's sha256.",
			Fields: []primitive.Field{fPath,
				{Name: "offset", Type: primitive.TInteger, Min: primitive.Bound(0), Desc: "read: byte offset (default 0)."}, fLimit, fEncoding,
				{Name: "pages", Type: primitive.TString, Desc: "read: PDF pages (2-5)."}, fSheet,
				{Name: "range", Type: primitive.TString, Desc: "read: cells (A1:C20)."},
				{Name: "formulas", Type: primitive.TBoolean, Desc: "read: show formulas."}},
			Run: primitive.Typed(run("read", func(ctx context.Context, _ *primitive.Call, in ReadInput) (ReadResult, error) { return e.Read(ctx, in) }))},
		{Tool: "fs", Operation: "search", Risk: primitive.RiskRead, Summary: "find query in names and lines of files under path, like rg: honours .gitignore/.ignore, skips hidden, binary, symlinks, files over 2 MB; sorted by path, line; skipped counts why.",
			Fields: []primitive.Field{fPath,
				{Name: "query", Type: primitive.TString, Required: true, Desc: "search: text to find (case-sensitive literal unless regex/case_insensitive)."}, fLimit,
				{Name: "max_entries", Type: primitive.TInteger, Min: primitive.Bound(1), Desc: "search: max directory entries to visit."},
				{Name: "regex", Type: primitive.TBoolean, Desc: "search: query is RE2 (Go regexp), matched per line."},
				{Name: "case_insensitive", Type: primitive.TBoolean, Desc: "search: ignore case."},
				{Name: "include", Type: primitive.TArray, Items: &primitive.Field{Type: primitive.TString}, Desc: "search: only files matching a glob (*.go, src/**/*.ts)."},
				{Name: "exclude", Type: primitive.TArray, Items: &primitive.Field{Type: primitive.TString}, Desc: "search: skip entries matching a glob."},
				{Name: "context_lines", Type: primitive.TInteger, Min: primitive.Bound(0), Max: primitive.Bound(MaxSearchContext), Desc: "search: lines before/after each hit (0-5)."},
				{Name: "respect_ignore", Type: primitive.TBoolean, Desc: "search: honour .gitignore, .ignore, .git/info/exclude (default true)."},
				{Name: "hidden", Type: primitive.TBoolean, Desc: "search: include dot files and directories."},
				{Name: "names_only", Type: primitive.TBoolean, Desc: "search: match names only, read no file."},
				{Name: "documents", Type: primitive.TBoolean, Desc: "search: also PDF/Office text."}},
			Run: primitive.Typed(run("search", func(ctx context.Context, _ *primitive.Call, in SearchInput) (SearchResult, error) {
				return e.Search(ctx, in)
			}))},
		{Tool: "fs", Operation: "stat", Risk: primitive.RiskRead, Summary: "type, size, mtime, sha256; exists:false for a missing path.",
			Fields: []primitive.Field{fPath},
			Run:    primitive.Typed(run("stat", func(ctx context.Context, _ *primitive.Call, in StatInput) (StatResult, error) { return e.Stat(ctx, in) })),
			// Stat of one path is bounded work but for hashing a large file.
			Quick: primitive.TypedQuick(func(ctx context.Context, _ *primitive.Call, in StatInput) (any, bool, error) {
				out, done, err := e.QuickStat(ctx, in)
				if err != nil {
					return nil, true, mapErr("stat", err)
				}
				return out, done, nil
			})},
		{Tool: "fs", Operation: "write", Risk: primitive.RiskWrite, Target: e.writeTarget, Summary: "replace or create a file atomically; returns receipt_id (for undo) and the new sha256.",
			Fields: []primitive.Field{fPath,
				{Name: "data", Type: primitive.TString, Required: true, Desc: "write: the whole new content (text, or base64 with encoding)."}, fEncoding, fExpect},
			Run: primitive.Typed(run("write", func(ctx context.Context, c *primitive.Call, in WriteInput) (WriteResult, error) {
				return e.Write(withChecked(withFuture(ctx, c.FutureID), c.Checked), route(c), in)
			}))},
		{Tool: "fs", Operation: "patch", Risk: primitive.RiskWrite, Target: e.patchTarget, Summary: "apply replacements in order; each old must occur exactly once (else conflict naming it); keeps CRLF and BOM.",
			Fields: []primitive.Field{fPath,
				{Name: "replacements", Type: primitive.TArray, Required: true, Min: primitive.Bound(1), Desc: "patch: [{old, new}], applied in order.",
					Items: &primitive.Field{Type: primitive.TObject, Fields: []primitive.Field{
						{Name: "old", Type: primitive.TString, Required: true, Desc: "Exact text that must occur once."},
						{Name: "new", Type: primitive.TString, Required: true, Desc: "Replacement text."}}}},
				fExpect},
			Run: primitive.Typed(run("patch", func(ctx context.Context, c *primitive.Call, in PatchInput) (PatchResult, error) {
				return e.Patch(withChecked(withFuture(ctx, c.FutureID), c.Checked), route(c), in)
			}))},
		{Tool: "fs", Operation: "xlsx_set", Risk: primitive.RiskWrite, Target: e.xlsxSetTarget, Summary: "set cells of one .xlsx sheet (values, =formulas); keeps the rest.",
			Fields: []primitive.Field{fPath, fSheet,
				{Name: "cells", Type: primitive.TObject, Required: true, Desc: `xlsx_set: {"B2": 99, "C3": "=SUM(B1:B2)"}.`}, fExpect},
			Run: primitive.Typed(run("xlsx_set", func(ctx context.Context, c *primitive.Call, in XlsxSetInput) (XlsxSetResult, error) {
				return e.XlsxSet(withChecked(withFuture(ctx, c.FutureID), c.Checked), route(c), in)
			}))},
		{Tool: "fs", Operation: "docx_write", Risk: primitive.RiskWrite, Target: e.docxWriteTarget, Summary: "write a new .docx from Markdown.",
			Fields: []primitive.Field{fPath, {Name: "markdown", Type: primitive.TString, Required: true, Desc: "docx_write: the document."}, fExpect},
			Run: primitive.Typed(run("docx_write", func(ctx context.Context, c *primitive.Call, in DocxWriteInput) (WriteResult, error) {
				return e.DocxWrite(withChecked(withFuture(ctx, c.FutureID), c.Checked), route(c), in)
			}))},
		{Tool: "fs", Operation: "undo", Risk: primitive.RiskWrite, Target: e.undoTarget, Summary: "restore the content before this conversation's receipts; conflicts if a file changed since.",
			Fields: []primitive.Field{{Name: "receipt_id", Type: primitive.TString, Desc: "undo: receipt id from write, patch or undo."},
				{Name: "receipt_ids", Type: primitive.TArray, Max: primitive.Bound(MaxUndoIDs), Items: &primitive.Field{Type: primitive.TString}, Desc: "undo: several ids."}},
			Run: primitive.Typed(func(ctx context.Context, c *primitive.Call, in UndoInput) (any, error) {
				ctx = withChecked(withFuture(ctx, c.FutureID), c.Checked)
				if len(in.ReceiptIDs) == 0 && in.ReceiptID != "" {
					out, err := e.Undo(ctx, route(c), in)
					if err != nil {
						return nil, mapErr("undo", err)
					}
					return out, nil
				}
				out, err := e.UndoMany(ctx, route(c), in)
				return undoManyAnswer(out, err)
			})},
		{Tool: "fs", Operation: "changes", Risk: primitive.RiskRead, Summary: "this conversation's receipts, newest first.",
			Fields: []primitive.Field{fLimit, {Name: "cursor", Type: primitive.TString, Desc: "changes: next_cursor."}},
			Run: primitive.Typed(run("changes", func(ctx context.Context, c *primitive.Call, in ChangesInput) (ChangesResult, error) {
				return e.Changes(ctx, route(c), in)
			}))},
	}
}

// undoManyAnswer is the answer of an undo of several receipts: completed,
// partial (the undone ones as the result, each conflict named in details)
// or conflict.
func undoManyAnswer(out UndoManyResult, err error) (any, error) {
	switch {
	case err == nil:
		return out, nil
	case errors.Is(err, ErrUndoPartial):
		return nil, primitive.Partial("undo_partial", "fs.undo: %d undone; %d not, because their files changed since (details.conflicts)", len(out.Undone), len(out.Conflicts)).
			WithResult(out).WithDetails(map[string]any{"conflicts": out.Conflicts})
	case errors.Is(err, ErrConflict) && len(out.Conflicts) > 1:
		return nil, (&primitive.Error{State: primitive.StateConflict, Code: ReasonChanged,
			Message: fmt.Sprintf("fs.undo: none of the %d receipts undone: each file changed since, or was undone already (details.conflicts)", len(out.Conflicts))}).
			WithDetails(map[string]any{"conflicts": out.Conflicts})
	}
	return nil, mapErr("undo", err)
}
