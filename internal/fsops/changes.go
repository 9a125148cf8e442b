package fsops

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hearth-dev/hearth/internal/primitive"
)

// Bounds of changes and of an undo of several receipts.
const (
	DefaultChangesLimit = 50
	MaxChangesLimit     = 200
	// MaxUndoIDs is the most receipt_ids one undo takes.
	MaxUndoIDs = 100
)

// futureKey carries the id of the call a mutation runs for, so its receipt
// can name it (and the page the approval that allowed it).
type futureKey struct{}

// withFuture returns ctx carrying the call's future id.
func withFuture(ctx context.Context, id string) context.Context {
	if id == "" {
		return ctx
	}
	return context.WithValue(ctx, futureKey{}, id)
}

func futureOf(ctx context.Context) string {
	s, _ := ctx.Value(futureKey{}).(string)
	return s
}

// ChangesInput is the input of changes.
type ChangesInput struct {
	Cursor string `json:"cursor,omitempty"`
	Limit  int    `json:"limit,omitempty"`
}

// Change is one receipt of the calling conversation, as changes lists it.
// Undoable says an undo of it can be tried: it completed, it is not
// undone now (undoneSQL), it is not the operator's own undo or redo, and
// its copy of the earlier content is kept (an undo still conflicts if the
// file changed since).
type Change struct {
	ReceiptID  string    `json:"receipt_id"`
	Path       string    `json:"path"`
	Operation  string    `json:"operation"`      // write, patch or undo; move, copy, mkdir, trash, restore or rmdir
	From       string    `json:"from,omitempty"` // move, copy: where the item was
	At         time.Time `json:"at"`
	PreSHA256  *string   `json:"pre_sha256"`  // null: the file did not exist
	PostSHA256 *string   `json:"post_sha256"` // null: the change removed it
	Undoable   bool      `json:"undoable"`
	UndoneBy   string    `json:"undone_by,omitempty"`
	Undoes     string    `json:"undoes,omitempty"`
	// ByOperator: the person undid (or redid) this on the Changes page.
	ByOperator bool `json:"by_operator,omitempty"`
}

// ChangesResult is the output of changes: newest first, NextCursor set
// when older ones remain; Expired counts this conversation's receipts
// retention removed (no longer undoable).
type ChangesResult struct {
	Changes    []Change `json:"changes"`
	NextCursor string   `json:"next_cursor,omitempty"`
	Expired    int      `json:"expired"`
}

// Changes lists route's own completed receipts (primitive.RouteMatch
// scope), newest first (receipts of one millisecond in the order they were
// made, not by their random ids), at most in.Limit (DefaultChangesLimit when 0,
// clamped to MaxChangesLimit), continuing after in.Cursor.
func (e *Engine) Changes(ctx context.Context, route string, in ChangesInput) (ChangesResult, error) {
	limit, err := bound("limit", in.Limit, DefaultChangesLimit, MaxChangesLimit)
	if err != nil {
		return ChangesResult{}, err
	}
	at, after := int64(1<<62), "~"
	if in.Cursor != "" {
		ms, id, ok := strings.Cut(in.Cursor, ".")
		n, err := strconv.ParseInt(ms, 10, 64)
		if !ok || err != nil || !validReceiptID(id) {
			return ChangesResult{}, &InputError{Field: "cursor", Message: "not a cursor from an earlier changes answer"}
		}
		at, after = n, id
	}
	cond, arg := primitive.RouteMatch("route", route)
	with, join := undoDepthSQL("r", cond)
	rows, err := e.DB.R.QueryContext(ctx, with+
		`SELECT id, path, COALESCE(action, op), created_at, pre_sha256, post_sha256, undone_by, undoes, operator IS NOT NULL,
		   prior_sha256 IS NOT NULL OR prior_file IS NOT NULL OR prior IS NOT NULL OR existed_before = 0 OR action IS NOT NULL, `+undoneSQL+`,
		   COALESCE(from_path, '')
		 FROM fs_receipts r`+join+`WHERE `+cond+` AND state = 'committed' AND (created_at < ? OR (created_at = ? AND r.rowid < COALESCE((SELECT rowid FROM fs_receipts WHERE id = ?), 1 << 62)))
		 ORDER BY created_at DESC, r.rowid DESC LIMIT ?`, arg, arg, at, at, after, limit+1)
	if err != nil {
		return ChangesResult{}, fmt.Errorf("list changes: %w", err)
	}
	defer rows.Close()
	res := ChangesResult{Changes: []Change{}}
	var lastAt int64
	for rows.Next() {
		var c Change
		var ms int64
		var pre, post, undoneBy, undoes sql.NullString
		var kept, undone bool
		if err := rows.Scan(&c.ReceiptID, &c.Path, &c.Operation, &ms, &pre, &post, &undoneBy, &undoes, &c.ByOperator, &kept, &undone, &c.From); err != nil {
			return ChangesResult{}, fmt.Errorf("list changes: %w", err)
		}
		if len(res.Changes) == limit {
			last := res.Changes[limit-1]
			res.NextCursor = strconv.FormatInt(lastAt, 10) + "." + last.ReceiptID
			break
		}
		c.At = time.UnixMilli(ms).UTC()
		c.PreSHA256, c.PostSHA256 = ptrIf(pre.Valid, pre.String), ptrIf(post.Valid, post.String)
		c.UndoneBy, c.Undoes = undoneBy.String, undoes.String
		// The operator's own undos are the operator's to undo (Undo).
		c.Undoable = kept && !undone && !c.ByOperator
		res.Changes = append(res.Changes, c)
		lastAt = ms
	}
	if err := rows.Err(); err != nil {
		return ChangesResult{}, fmt.Errorf("list changes: %w", err)
	}
	if err := e.DB.R.QueryRowContext(ctx, `SELECT COUNT(*) FROM fs_receipts_pruned WHERE `+cond, arg).Scan(&res.Expired); err != nil {
		return ChangesResult{}, fmt.Errorf("count expired changes: %w", err)
	}
	return res, nil
}

// UndoManyResult is the output of an undo of receipt_ids: each undone
// receipt's result, and each conflict (nothing written for those).
type UndoManyResult struct {
	Undone    []UndoResult     `json:"undone"`
	Conflicts []*ConflictError `json:"conflicts,omitempty"`
}

// ErrUndoPartial is wrapped by UndoMany's error when some receipts were
// undone and others conflicted; the result lists both.
var ErrUndoPartial = errors.New("some undone, some conflicted")

// UndoMany undoes several of route's receipts, newest first (so a file
// changed twice steps back through both). Every id is checked before
// anything is written: an invalid one is an InputError naming
// receipt_ids, one this conversation cannot see is ErrReceiptNotFound (as
// Undo), one the operator made on the Changes page is an
// *OperatorChangeError (as Undo), and more than MaxUndoIDs is refused. Each file is replaced
// atomically on its own; a receipt that conflicts is listed in Conflicts
// and the others still run. The error is nil when all were undone, wraps
// ErrUndoPartial when some were, and is the lone *ConflictError or
// ErrConflict when none were.
func (e *Engine) UndoMany(ctx context.Context, route string, in UndoInput) (UndoManyResult, error) {
	ids := in.ReceiptIDs
	switch {
	case in.ReceiptID != "" && len(ids) > 0:
		return UndoManyResult{}, &InputError{Field: "receipt_ids", Message: "give receipt_id or receipt_ids, not both"}
	case in.ReceiptID != "":
		ids = []string{in.ReceiptID}
	case len(ids) == 0:
		return UndoManyResult{}, &InputError{Field: "receipt_id", Message: "give receipt_id, or receipt_ids (at most 100)"}
	case len(ids) > MaxUndoIDs:
		return UndoManyResult{}, &InputError{Field: "receipt_ids", Message: fmt.Sprintf("%d ids given; at most %d per call", len(ids), MaxUndoIDs)}
	}
	type item struct {
		id string
		at int64
	}
	var items []item
	seen := map[string]bool{}
	cond, arg := primitive.RouteMatch("route", route)
	for _, id := range ids {
		if !validReceiptID(id) {
			return UndoManyResult{}, &InputError{Field: "receipt_ids", Message: fmt.Sprintf("%q is not a receipt id (rcpt_…)", id)}
		}
		if seen[id] {
			return UndoManyResult{}, &InputError{Field: "receipt_ids", Message: fmt.Sprintf("%s is given twice", id)}
		}
		seen[id] = true
		var at int64
		var operator, path sql.NullString
		err := e.DB.R.QueryRowContext(ctx, `SELECT created_at, operator, path FROM fs_receipts WHERE id = ? AND `+cond, id, arg).Scan(&at, &operator, &path)
		if errors.Is(err, sql.ErrNoRows) {
			if xerr := e.expiredReceipt(ctx, route, id); xerr != nil {
				return UndoManyResult{}, xerr
			}
			return UndoManyResult{}, fmt.Errorf("receipt %s: %w", id, ErrReceiptNotFound)
		}
		if err != nil {
			return UndoManyResult{}, fmt.Errorf("load receipt %s: %w", id, err)
		}
		if operator.Valid {
			// Refused before anything is undone.
			return UndoManyResult{}, &OperatorChangeError{ReceiptID: id, Operator: operator.String, Path: path.String}
		}
		items = append(items, item{id, at})
	}
	slices.SortStableFunc(items, func(a, b item) int {
		if c := cmp.Compare(b.at, a.at); c != 0 {
			return c
		}
		return strings.Compare(b.id, a.id)
	})
	res := UndoManyResult{Undone: []UndoResult{}}
	for _, it := range items {
		r, err := e.undoOne(ctx, route, it.id, operatorUndo{})
		var ce *ConflictError
		switch {
		case errors.As(err, &ce):
			res.Conflicts = append(res.Conflicts, ce)
			continue
		case err != nil && len(res.Undone) > 0:
			return res, fmt.Errorf("undo %s after undoing %d: %w", it.id, len(res.Undone), err)
		case err != nil:
			return res, err
		}
		res.Undone = append(res.Undone, r)
	}
	switch {
	case len(res.Conflicts) == 0:
		return res, nil
	case len(res.Undone) > 0:
		return res, fmt.Errorf("%d undone, %d conflicted: %w", len(res.Undone), len(res.Conflicts), ErrUndoPartial)
	case len(res.Conflicts) == 1:
		return res, res.Conflicts[0]
	}
	return res, fmt.Errorf("all %d conflicted: %w", len(res.Conflicts), ErrConflict)
}
