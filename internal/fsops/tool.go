package fsops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hearth-dev/hearth/internal/document"
	"github.com/hearth-dev/hearth/internal/primitive"
)

// The fs tool's field descriptions are shared by every operation that
// takes the field, because the advertised schema is one flat object.
var (
	fPath     = primitive.Field{Name: "path", Type: primitive.TString, Required: true, Desc: "Absolute path under a root (search: the folder)."}
	fLimit    = primitive.Field{Name: "limit", Type: primitive.TInteger, Min: primitive.Bound(1), Desc: "max entries, bytes (read) or matches (search)."}
	fEncoding = primitive.Field{Name: "encoding", Type: primitive.TString, Enum: []string{"utf8", "base64"}, Desc: "utf8 (default) or base64."}
	fSheet    = primitive.Field{Name: "sheet", Type: primitive.TString, Desc: "sheet name."}
	fExpect   = primitive.Field{Name: "expected_sha256", Type: primitive.TString, Nullable: true, Desc: "the current sha256 (hex) of the file replaced, or null: it must not exist."}
	// The file operations' fields: one item, or items.
	fFrom      = primitive.Field{Name: "from", Type: primitive.TString, Desc: "the file or folder."}
	fTo        = primitive.Field{Name: "to", Type: primitive.TString, Desc: "new path, or a folder to put it in (one that exists, ends in a separator, or is every item's to)."}
	fOverwrite = primitive.Field{Name: "overwrite", Type: primitive.TBoolean, Desc: "replace a file there (it goes to the bin)."}
	fItemPath  = primitive.Field{Name: "path", Type: primitive.TString, Desc: fPath.Desc}
)

// fItems is the items field of a file operation: its item's own fields.
func fItems(fields ...primitive.Field) primitive.Field {
	return primitive.Field{Name: "items", Type: primitive.TArray, Min: primitive.Bound(1), Max: primitive.Bound(MaxFileOpItems),
		Desc:  "move/copy/mkdir/trash: up to 1000 items, each done on its own.",
		Items: &primitive.Field{Type: primitive.TObject, Fields: fields}}
}

// bare is f without its description (an item's fields are described at
// the top level).
func bare(fs ...primitive.Field) []primitive.Field {
	out := make([]primitive.Field, len(fs))
	for i, f := range fs {
		f.Desc = ""
		out[i] = f
	}
	return out
}

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
	if e.Place != "" {
		return fmt.Sprintf("nothing was written: writing %s would now %s, so it needs the operator's approval; send the call again to ask", e.Path, e.Place)
	}
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
			Fields: []primitive.Field{fPath, fLimit,
				{Name: "sort", Type: primitive.TString, Enum: []string{"name", "size", "modified"}, Desc: "size, modified: largest, newest first."},
				{Name: "modified_after", Type: primitive.TString, Desc: "RFC 3339 or YYYY-MM-DD."},
				{Name: "modified_before", Type: primitive.TString, Desc: "RFC 3339 or YYYY-MM-DD."}},
			Run: primitive.Typed(run("list", func(ctx context.Context, _ *primitive.Call, in ListInput) (ListResult, error) { return e.List(ctx, in) }))},
		{Tool: "fs", Operation: "read", Risk: primitive.RiskRead, Summary: "file content from offset (bounded; documents as text); reports size, eof, sha256.",
			Fields: []primitive.Field{fPath,
				{Name: "offset", Type: primitive.TInteger, Min: primitive.Bound(0), Desc: "byte offset (default 0)."}, fLimit, fEncoding,
				{Name: "pages", Type: primitive.TString, Desc: "PDF pages (2-5)."}, fSheet,
				{Name: "range", Type: primitive.TString, Desc: "cells (A1:C20)."},
				{Name: "formulas", Type: primitive.TBoolean, Desc: "show formulas."}},
			Run: primitive.Typed(run("read", func(ctx context.Context, _ *primitive.Call, in ReadInput) (ReadResult, error) { return e.Read(ctx, in) }))},
		{Tool: "fs", Operation: "search", Risk: primitive.RiskRead, Summary: "find query in names and lines of files under path, like rg (honours .gitignore; skips hidden, binary, links, files over 2 MB); skipped counts why.",
			Fields: []primitive.Field{fPath,
				{Name: "query", Type: primitive.TString, Required: true, Desc: "text to find (case-sensitive literal unless regex/case_insensitive)."}, fLimit,
				{Name: "max_entries", Type: primitive.TInteger, Min: primitive.Bound(1), Desc: "max directory entries to visit."},
				{Name: "regex", Type: primitive.TBoolean, Desc: "query is RE2 (Go regexp), matched per line."},
				{Name: "case_insensitive", Type: primitive.TBoolean, Desc: "ignore case."},
				{Name: "include", Type: primitive.TArray, Items: &primitive.Field{Type: primitive.TString}, Desc: "only files matching a glob (*.go, src/**/*.ts)."},
				{Name: "exclude", Type: primitive.TArray, Items: &primitive.Field{Type: primitive.TString}, Desc: "skip entries matching a glob."},
				{Name: "context_lines", Type: primitive.TInteger, Min: primitive.Bound(0), Max: primitive.Bound(MaxSearchContext), Desc: "lines before/after each hit (0-5)."},
				{Name: "respect_ignore", Type: primitive.TBoolean, Desc: "honour .gitignore, .ignore, .git/info/exclude (default true)."},
				{Name: "hidden", Type: primitive.TBoolean, Desc: "include dot files and directories."},
				{Name: "names_only", Type: primitive.TBoolean, Desc: "match names only, read no file."},
				{Name: "documents", Type: primitive.TBoolean, Desc: "also PDF/Office text."}},
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
				{Name: "data", Type: primitive.TString, Required: true, Desc: "the whole new content (text, or base64 with encoding)."}, fEncoding, fExpect},
			Run: primitive.Typed(run("write", func(ctx context.Context, c *primitive.Call, in WriteInput) (WriteResult, error) {
				return e.Write(withChecked(withFuture(ctx, c.FutureID), c.Checked), route(c), in)
			}))},
		{Tool: "fs", Operation: "patch", Risk: primitive.RiskWrite, Target: e.patchTarget, Summary: "apply replacements in order; each old must occur exactly once; keeps CRLF and BOM.",
			Fields: []primitive.Field{fPath,
				{Name: "replacements", Type: primitive.TArray, Required: true, Min: primitive.Bound(1), Desc: "[{old, new}], applied in order.",
					Items: &primitive.Field{Type: primitive.TObject, Fields: []primitive.Field{
						{Name: "old", Type: primitive.TString, Required: true, Desc: "Exact text that must occur once."},
						{Name: "new", Type: primitive.TString, Required: true, Desc: "Replacement text."}}}},
				fExpect},
			Run: primitive.Typed(run("patch", func(ctx context.Context, c *primitive.Call, in PatchInput) (PatchResult, error) {
				return e.Patch(withChecked(withFuture(ctx, c.FutureID), c.Checked), route(c), in)
			}))},
		{Tool: "fs", Operation: "xlsx_set", Risk: primitive.RiskWrite, Target: e.xlsxSetTarget, Summary: "set cells of one .xlsx sheet (values, =formulas); keeps the rest.",
			Precheck: officePrecheck(".xlsx", "xlsx_set"),
			Fields: []primitive.Field{fPath, fSheet,
				{Name: "cells", Type: primitive.TObject, Required: true, Desc: `{"B2": 99, "C3": "=SUM(B1:B2)"}.`}, fExpect},
			Run: primitive.Typed(run("xlsx_set", func(ctx context.Context, c *primitive.Call, in XlsxSetInput) (XlsxSetResult, error) {
				return e.XlsxSet(withChecked(withFuture(ctx, c.FutureID), c.Checked), route(c), in)
			}))},
		{Tool: "fs", Operation: "docx_write", Risk: primitive.RiskWrite, Target: e.docxWriteTarget, Summary: "write a new .docx from Markdown.",
			Precheck: officePrecheck(".docx", "docx_write"),
			Fields:   []primitive.Field{fPath, {Name: "markdown", Type: primitive.TString, Required: true}, fExpect},
			Run: primitive.Typed(run("docx_write", func(ctx context.Context, c *primitive.Call, in DocxWriteInput) (WriteResult, error) {
				return e.DocxWrite(withChecked(withFuture(ctx, c.FutureID), c.Checked), route(c), in)
			}))},
		e.fileOpSpec("move", "move or rename files/folders; replaces a file only if asked.", fFrom, fTo, fOverwrite, fExpect, fItems(bare(fFrom, fTo, fOverwrite, fExpect)...)),
		e.fileOpSpec("copy", "copy files/folders; replaces a file only if asked.", fFrom, fTo, fOverwrite, fExpect, fItems(bare(fFrom, fTo, fOverwrite, fExpect)...)),
		e.fileOpSpec("mkdir", "make a folder and its parents.", fItemPath, fItems(bare(fItemPath)...)),
		e.fileOpSpec("trash", "to the Recycle Bin/trash (never deletes); says where.", fItemPath, fItems(bare(fItemPath)...)),
		{Tool: "fs", Operation: "undo", Risk: primitive.RiskWrite, Target: e.undoTarget, Summary: "restore the content before this conversation's receipts; conflicts if a file changed since.",
			Fields: []primitive.Field{{Name: "receipt_id", Type: primitive.TString, Desc: "receipt id of any change."},
				{Name: "receipt_ids", Type: primitive.TArray, Max: primitive.Bound(MaxUndoIDs), Items: &primitive.Field{Type: primitive.TString}, Desc: "several ids."}},
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
			Fields: []primitive.Field{fLimit, {Name: "cursor", Type: primitive.TString, Desc: "next_cursor."}},
			Run: primitive.Typed(run("changes", func(ctx context.Context, c *primitive.Call, in ChangesInput) (ChangesResult, error) {
				return e.Changes(ctx, route(c), in)
			}))},
	}
}

// fileOpSpec is the spec of one file operation.
func (e *Engine) fileOpSpec(action, summary string, fields ...primitive.Field) *primitive.Spec {
	return &primitive.Spec{Tool: "fs", Operation: action, Risk: primitive.RiskWrite, Summary: summary, Fields: fields,
		Target: func(ctx context.Context, route string, raw json.RawMessage) (primitive.Target, error) {
			return e.fileOpTarget(ctx, action, raw)
		},
		Run: primitive.Typed(func(ctx context.Context, c *primitive.Call, in FileOpInput) (any, error) {
			out, err := e.FileOp(withChecked(withFuture(ctx, c.FutureID), c.Checked), c.Route, action, in)
			if err != nil {
				return nil, mapErr(action, err)
			}
			return fileOpAnswer(action, out)
		})}
}

// fileOpAnswer is the answer of a file operation: its result when every
// item was done; partial with the result and each failure named; failed
// naming each failure (one item's own error when it was the only one).
func fileOpAnswer(action string, out FileOpResult) (any, error) {
	var failures []ItemResult
	for _, it := range out.Items {
		if it.Outcome != ItemDone && it.Outcome != ItemUnchanged {
			failures = append(failures, it)
		}
	}
	switch out.Status {
	case "completed":
		return out, nil
	case "partial":
		return nil, primitive.Partial("some_failed", "fs.%s: %d done; %d not (each named in details.failed): %s", action, out.Done, out.Failed, failures[0].Error).
			WithResult(out).WithDetails(map[string]any{"failed": failures})
	}
	state := primitive.StateFailed
	if len(failures) == 1 {
		switch failures[0].Outcome {
		case ItemConflict:
			state = primitive.StateConflict
		case ItemRefused:
			state = primitive.StateBlocked
		}
	}
	msg := fmt.Sprintf("fs.%s: nothing done: %s", action, failures[0].Error)
	if len(failures) > 1 {
		msg = fmt.Sprintf("fs.%s: none of the %d items done (each named in details.failed); the first: %s", action, len(failures), failures[0].Error)
	}
	return nil, (&primitive.Error{State: state, Code: failures[0].Code, Message: msg}).WithDetails(map[string]any{"failed": failures})
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
