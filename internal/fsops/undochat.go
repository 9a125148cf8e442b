package fsops

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/hearth-dev/hearth/internal/atomicfile"
	"github.com/hearth-dev/hearth/internal/primitive"
)

// FileOutcome is what an undo or redo did to one file.
type FileOutcome struct {
	Path    string `json:"path"`
	Outcome string `json:"outcome"`
	// Why says, for changed and failed, why it was left alone; for
	// changed, ChangedBy and ChangedAt say what changed it when Hearth
	// knows (another chat's receipt), else ChangedBy is "".
	Why       string    `json:"why,omitempty"`
	ChangedBy string    `json:"changed_by,omitempty"`
	ChangedAt time.Time `json:"changed_at,omitzero"`
	ReceiptID string    `json:"receipt_id,omitempty"`
	Attempts  int       `json:"attempts,omitempty"`
}

// UndoReport is what one operator undo or redo did: Batch names its
// receipts (a Redo takes it).
type UndoReport struct {
	Batch string        `json:"batch"`
	Files []FileOutcome `json:"files"`
}

// Count is how many files ended with outcome o.
func (r UndoReport) Count(o string) int {
	n := 0
	for _, f := range r.Files {
		if f.Outcome == o {
			n++
		}
	}
	return n
}

// UndoChat puts every file the conversation key (ChatKey) changed back to
// its state before the conversation's first kept change to it, for the
// operator. A file is touched only if it is as the chat (or the
// operator's last redo) left it; otherwise it is reported changed, with
// what changed it when another chat's receipt says. A file the chat
// created is moved to the trash (Replacer.Remove). Each file is replaced
// atomically on its own, under its path lock, and gets an undo receipt
// in one new batch, so Redo can bring all back.
func (e *Engine) UndoChat(ctx context.Context, operator, key string) (UndoReport, error) {
	if strings.TrimSpace(operator) == "" {
		return UndoReport{}, &InputError{Field: "operator", Message: "the operator's name is required"}
	}
	cs, err := e.ChatChanges(ctx, key)
	if err != nil {
		return UndoReport{}, err
	}
	rep := UndoReport{Batch: primitive.NewID("undo"), Files: []FileOutcome{}}
	// The chat's changes are undone newest first, one unit at a time: a
	// file's content changes together (back to before the first), each
	// file operation on its own (a move moves back, and so on), so a
	// folder made and then filled is emptied before it is removed, and a
	// file written then moved is moved back before it is put back.
	type unit struct {
		last  int // index in cs of its newest change
		path  string
		chain []ChatChange
	}
	var units []*unit
	byPath := map[string]*unit{}
	for i, c := range cs {
		switch {
		case c.Operator != "":
			continue
		case c.Action != "":
			if c.Op == "undo" {
				continue // the chat's own undo of a file operation
			}
			units = append(units, &unit{last: i, chain: []ChatChange{c}})
			continue
		}
		u, ok := byPath[c.Path]
		if !ok {
			u = &unit{path: c.Path}
			byPath[c.Path] = u
			units = append(units, u)
		}
		u.chain = append(u.chain, c)
		u.last = i
	}
	slices.SortStableFunc(units, func(a, b *unit) int { return b.last - a.last })
	for _, u := range units {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		if u.path == "" {
			rep.Files = append(rep.Files, e.undoActionFor(ctx, operator, key, rep.Batch, u.chain[0]))
			continue
		}
		rep.Files = append(rep.Files, e.undoFile(ctx, operator, key, rep.Batch, u.chain))
	}
	return rep, nil
}

// undoActionFor is UndoChat (or the undo of one change) for one file
// operation of the chat: its reversal (undoAction) as the operator's.
func (e *Engine) undoActionFor(ctx context.Context, operator, key, batch string, c ChatChange) FileOutcome {
	out := FileOutcome{Path: c.Path}
	if c.Action == ActionMove {
		out.Path = c.From
	}
	r, err := e.loadReceipt(ctx, key, c.ID)
	if err != nil {
		out.Outcome, out.Why = OutcomeFailed, plainFailure(err)
		return out
	}
	res, err := e.undoAction(ctx, key, r, operatorUndo{name: operator, batch: batch})
	var ce *ConflictError
	if errors.As(err, &ce) && ce.Reason != ReasonAlreadyUndone {
		out.Outcome, out.Why = OutcomeChanged, actionConflictWords(c, ce)
		return out
	}
	removed := c.Action == ActionCopy || c.Action == ActionMkdir || c.Action == ActionRestore
	return e.outcome(ctx, key, out, res.MutationResult, err, removed)
}

// actionConflictWords says why a file operation was not undone.
func actionConflictWords(c ChatChange, ce *ConflictError) string {
	switch {
	case ce.Reason == ReasonExists:
		return "something else is at its old place now (" + ce.Path + "); it was left where it is"
	case c.Action == ActionMkdir:
		return "the folder is no longer empty; it was left alone"
	case c.Action == ActionTrash:
		return ce.Message
	}
	return "it was changed or moved after this chat's change (" + ce.Path + "); it was left alone"
}

// UndoCallBatch undoes, for the operator, every item of one call of the
// conversation key that did several at once (ChatChange.CallBatch), newest
// first, in a batch of its own; an item changed since is left alone and
// named.
func (e *Engine) UndoCallBatch(ctx context.Context, operator, key, callBatch string) (UndoReport, error) {
	if strings.TrimSpace(operator) == "" {
		return UndoReport{}, &InputError{Field: "operator", Message: "the operator's name is required"}
	}
	cs, err := e.ChatChanges(ctx, key)
	if err != nil {
		return UndoReport{}, err
	}
	rep := UndoReport{Batch: primitive.NewID("undo"), Files: []FileOutcome{}}
	for i := len(cs) - 1; i >= 0; i-- {
		c := cs[i]
		if c.CallBatch != callBatch || c.Operator != "" || c.Action == "" {
			continue
		}
		rep.Files = append(rep.Files, e.undoActionFor(ctx, operator, key, rep.Batch, c))
	}
	if len(rep.Files) == 0 {
		return UndoReport{}, fmt.Errorf("batch %s: %w", callBatch, ErrReceiptNotFound)
	}
	return rep, nil
}

// undoFile is UndoChat for one file: chain is the chat's changes to it,
// oldest first.
func (e *Engine) undoFile(ctx context.Context, operator, key, batch string, chain []ChatChange) FileOutcome {
	first := chain[0]
	out := FileOutcome{Path: first.Path}
	abs, err := e.Roots.Resolve(first.Path)
	if err != nil {
		out.Outcome, out.Why = OutcomeFailed, "it is no longer in a folder Hearth may change"
		return out
	}
	ids := make([]string, 0, len(chain))
	for _, c := range chain {
		ids = append(ids, c.ID)
	}
	res, err := e.mutate(ctx, mutation{route: e.routeOf(ctx, first.ID), op: "undo", path: abs, undoes: first.ID,
		operator: operator, batch: batch, alsoUndone: ids[1:],
		check: func(s snapshot) error {
			if s.exists == first.Existed && (!s.exists || s.sha == first.Pre) {
				return errUnchanged
			}
			want, err := e.leftBy(ctx, key, abs, chain[len(chain)-1])
			if err != nil {
				return err
			}
			if s.exists != (want != "") || s.exists && s.sha != want {
				return &ConflictError{Path: abs, Reason: ReasonChanged, Replacement: -1, Message: "changed since"}
			}
			return nil
		},
		removeFile: !first.Existed,
		changeReader: func(snapshot) (io.ReadCloser, error) {
			r, err := e.loadReceipt(ctx, key, first.ID)
			if err != nil {
				return nil, err
			}
			return e.priorReader(ctx, r)
		}})
	return e.outcome(ctx, key, out, res, err, !first.Existed)
}

// errUnchanged is undoFile finding the file already as it was.
var errUnchanged = errors.New("already as before")

// leftBy is the SHA-256 ("" for no file) path has when nobody changed it
// since the chat: the post of the newest receipt on it in the chat's
// scope (the chat's last change, or the operator's redo after it).
func (e *Engine) leftBy(ctx context.Context, key, path string, last ChatChange) (string, error) {
	cond, arg := primitive.RouteMatch("route", key)
	var post string
	err := e.DB.R.QueryRowContext(ctx, `SELECT COALESCE(post_sha256, '') FROM fs_receipts
		WHERE path = ? AND `+cond+` AND state = 'committed' ORDER BY created_at DESC, rowid DESC LIMIT 1`, path, arg).Scan(&post)
	if errors.Is(err, sql.ErrNoRows) {
		return last.Post, nil
	}
	if err != nil {
		return "", fmt.Errorf("read what the chat left in %s: %w", path, err)
	}
	return post, nil
}

// routeOf is the route receipt id was made for.
func (e *Engine) routeOf(ctx context.Context, id string) string {
	var r string
	if err := e.DB.R.QueryRowContext(ctx, `SELECT route FROM fs_receipts WHERE id = ?`, id).Scan(&r); err != nil {
		return ""
	}
	return r
}

// outcome turns one mutation's result into the file's outcome.
func (e *Engine) outcome(ctx context.Context, key string, out FileOutcome, res MutationResult, err error, removed bool) FileOutcome {
	var ce *ConflictError
	switch {
	case err == nil:
		out.Outcome, out.ReceiptID, out.Attempts = OutcomeRestored, res.ReceiptID, res.ReplaceAttempts
		if removed {
			out.Outcome = OutcomeTrashed
		}
	case errors.Is(err, errUnchanged):
		out.Outcome = OutcomeUnchanged
	case errors.As(err, &ce) && ce.Reason == ReasonAlreadyUndone:
		out.Outcome, out.Why = OutcomeUnchanged, "already undone"
	case errors.As(err, &ce):
		out.Outcome, out.Why = OutcomeChanged, "it changed after this chat's change"
		out.ChangedBy, out.ChangedAt = e.changedBy(ctx, key, out.Path)
		if out.ChangedBy == "" {
			out.Why = "it changed outside Hearth after this chat's change (by you or another program)"
		}
	default:
		out.Outcome, out.Why, out.Attempts = OutcomeFailed, plainFailure(err), res.ReplaceAttempts
	}
	return out
}

// changedBy names what changed path after the chat when a receipt says:
// "another chat" (a receipt of another route, the newest on the path).
func (e *Engine) changedBy(ctx context.Context, key, path string) (string, time.Time) {
	var route string
	var at int64
	err := e.DB.R.QueryRowContext(ctx, `SELECT route, created_at FROM fs_receipts
		WHERE path = ? AND state = 'committed' ORDER BY created_at DESC, rowid DESC LIMIT 1`, path).Scan(&route, &at)
	if err != nil || ChatKey(route) == key {
		return "", time.Time{}
	}
	return route, time.UnixMilli(at)
}

// plainFailure says in a few words why a file could not be put back.
func plainFailure(err error) string {
	switch {
	case atomicfile.IsTransient(err):
		return "another program kept it open (Hearth tried several times); close that program and try again"
	case errors.Is(err, ErrReceiptNotFound), errors.Is(err, ErrReceiptExpired):
		return "its earlier content is no longer kept"
	case errors.Is(err, os.ErrPermission):
		return "Hearth may not write it (permission denied)"
	}
	return "it could not be written: " + err.Error()
}

// UndoChange undoes one change of the conversation key for the operator,
// as the conversation's own undo would (it is left alone when the file
// changed since), in a batch of its own.
func (e *Engine) UndoChange(ctx context.Context, operator, key, id string) (UndoReport, error) {
	if strings.TrimSpace(operator) == "" {
		return UndoReport{}, &InputError{Field: "operator", Message: "the operator's name is required"}
	}
	r, err := e.loadReceipt(ctx, key, id)
	if err != nil {
		return UndoReport{}, err
	}
	rep := UndoReport{Batch: primitive.NewID("undo")}
	if r.action != "" {
		c := ChatChange{ID: id, Path: r.path, Action: r.action, From: r.fromPath}
		rep.Files = []FileOutcome{e.undoActionFor(ctx, operator, key, rep.Batch, c)}
		return rep, nil
	}
	res, err := e.undoOne(ctx, key, id, operatorUndo{name: operator, batch: rep.Batch})
	if errors.Is(err, ErrReceiptNotFound) || errors.Is(err, ErrReceiptExpired) {
		return UndoReport{}, err
	}
	rep.Files = []FileOutcome{e.outcome(ctx, key, FileOutcome{Path: r.path}, res.MutationResult, err, !r.existed)}
	return rep, nil
}

// Redo undoes the operator's batch (an Undo all, one undone change, or a
// Redo) of the conversation key: each file it put back gets the content it
// replaced, unless it changed since. The redo is a batch of its own.
func (e *Engine) Redo(ctx context.Context, operator, key, batch string) (UndoReport, error) {
	if strings.TrimSpace(operator) == "" {
		return UndoReport{}, &InputError{Field: "operator", Message: "the operator's name is required"}
	}
	cond, arg := primitive.RouteMatch("route", key)
	rows, err := e.DB.R.QueryContext(ctx, `SELECT id, path, existed_before FROM fs_receipts
		WHERE batch = ? AND `+cond+` AND state = 'committed' AND operator IS NOT NULL ORDER BY created_at DESC, rowid DESC`, batch, arg)
	if err != nil {
		return UndoReport{}, fmt.Errorf("list the receipts of %s: %w", batch, err)
	}
	type item struct {
		id, path string
		existed  bool
	}
	var items []item
	for rows.Next() {
		var it item
		if err := rows.Scan(&it.id, &it.path, &it.existed); err != nil {
			rows.Close()
			return UndoReport{}, fmt.Errorf("list the receipts of %s: %w", batch, err)
		}
		items = append(items, it)
	}
	rows.Close()
	if len(items) == 0 {
		return UndoReport{}, fmt.Errorf("batch %s: %w", batch, ErrReceiptNotFound)
	}
	rep := UndoReport{Batch: primitive.NewID("undo"), Files: []FileOutcome{}}
	for _, it := range items {
		res, err := e.undoOne(ctx, key, it.id, operatorUndo{name: operator, batch: rep.Batch})
		rep.Files = append(rep.Files, e.outcome(ctx, key, FileOutcome{Path: it.path}, res.MutationResult, err, !it.existed))
	}
	return rep, nil
}

// Batch is one operator undo or redo of a conversation, newest first.
type Batch struct {
	ID       string
	Operator string
	At       time.Time
	Files    int
	// Live counts its receipts not undone since: a Redo has something to
	// bring back.
	Live int
	// Redo: the batch is itself a Redo (it undid the operator's undo).
	Redo bool
	// Trashed counts its receipts that removed a file (one the chat had
	// created, moved to the trash) rather than putting content back.
	Trashed int
}

// Batches lists the operator's undos and redos of the conversation key,
// newest first.
func (e *Engine) Batches(ctx context.Context, key string) ([]Batch, error) {
	cond, arg := primitive.RouteMatch("route", key)
	rows, err := e.DB.R.QueryContext(ctx, `SELECT batch, MIN(operator), MAX(created_at), COUNT(*), SUM(undone_by IS NULL),
		  MAX(EXISTS (SELECT 1 FROM fs_receipts u WHERE u.id = r.undoes AND u.operator IS NOT NULL)), SUM(post_sha256 IS NULL)
		FROM fs_receipts r WHERE `+cond+` AND batch IS NOT NULL AND state = 'committed' GROUP BY batch ORDER BY MAX(created_at) DESC LIMIT 50`, arg)
	if err != nil {
		return nil, fmt.Errorf("list the operator's undos: %w", err)
	}
	defer rows.Close()
	var out []Batch
	for rows.Next() {
		var b Batch
		var at int64
		if err := rows.Scan(&b.ID, &b.Operator, &at, &b.Files, &b.Live, &b.Redo, &b.Trashed); err != nil {
			return nil, fmt.Errorf("list the operator's undos: %w", err)
		}
		b.At = time.UnixMilli(at)
		out = append(out, b)
	}
	return out, rows.Err()
}
