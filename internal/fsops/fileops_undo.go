package fsops

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// The undo of a file operation is the operation that reverses it, with a
// receipt of its own (op undo) so it can be undone in turn (a Redo on the
// Changes page): a move moves back, a copy goes to the bin, a trash comes
// back from the bin, a mkdir removes the folder if it is still empty; a
// restore goes to the bin again and an rmdir makes the folder again. An
// item changed or moved since the operation is left alone and named.

// undoAction undoes the file-operation receipt r for the conversation
// route (or, with op set, for the operator).
func (e *Engine) undoAction(ctx context.Context, route string, r receipt, op operatorUndo) (UndoResult, error) {
	cur, err := e.loadReceipt(ctx, route, r.id)
	if err != nil {
		return UndoResult{}, err
	}
	conflict := func(path, reason, msg string) error {
		return &ConflictError{Path: path, Reason: reason, Replacement: -1, ReceiptID: cur.id, Message: msg}
	}
	by, err := e.undoneNow(ctx, cur)
	switch {
	case err != nil:
		return UndoResult{}, err
	case by != "":
		return UndoResult{}, conflict(cur.path, ReasonAlreadyUndone, fmt.Sprintf("receipt %s was already undone by %s", cur.id, by))
	case cur.state != "committed":
		return UndoResult{}, conflict(cur.path, ReasonIncomplete, fmt.Sprintf("receipt %s is %s: it never completed, so there is nothing to undo", cur.id, cur.state))
	}
	p := plan{route: cur.route, op: "undo", undoes: cur.id, operator: op.name, batch: op.batch}
	// still checks the item is as the operation left it at path.
	still := func(path string) error {
		fp, _, _, err := fingerprint(path)
		if errors.Is(err, fs.ErrNotExist) {
			return conflict(path, ReasonChanged, "it is no longer there (moved, renamed or removed since); it was left alone")
		}
		if err != nil {
			return err
		}
		if fp != cur.post.String {
			return conflict(path, ReasonChanged, "it changed since; it was left alone")
		}
		return nil
	}
	var res ItemResult
	switch cur.action {
	case ActionMove:
		if err := still(cur.path); err != nil {
			return UndoResult{}, err
		}
		if _, err := os.Lstat(cur.fromPath); err == nil {
			return UndoResult{}, conflict(cur.fromPath, ReasonExists, "something else is at its old place now; it was left where it is")
		}
		p.action, p.src, p.dst = ActionMove, cur.path, cur.fromPath
		res, err = e.carry(ctx, p)
		if err == nil && cur.replacedBin != "" {
			// The file the move replaced comes back from the bin.
			if rerr := restoreFromTrash(cur.replacedBin, cur.path); rerr != nil {
				res.Error = "moved back, but the file it had replaced stays in the " + binName() + ": " + rerr.Error()
			}
		}
	case ActionCopy, ActionRestore:
		if err := still(cur.path); err != nil {
			return UndoResult{}, err
		}
		p.action, p.dst = ActionTrash, cur.path
		res, err = e.trash(ctx, p)
		if err == nil && cur.replacedBin != "" {
			if rerr := restoreFromTrash(cur.replacedBin, cur.path); rerr != nil {
				res.Error = "the copy is in the " + binName() + ", but the file it had replaced stays there too: " + rerr.Error()
			}
		}
	case ActionTrash:
		p.action, p.dst, p.bin = ActionRestore, cur.path, cur.binPath
		res, err = e.restore(ctx, p, cur.pre.String)
	case ActionMkdir:
		info, serr := os.Lstat(cur.path)
		if serr != nil || !info.IsDir() {
			return UndoResult{}, conflict(cur.path, ReasonChanged, "the folder is no longer there; nothing to remove")
		}
		p.action, p.dst, p.src = ActionRmdir, cur.path, cur.fromPath
		res, err = e.rmdir(ctx, p)
	case ActionRmdir:
		if _, serr := os.Lstat(cur.path); serr == nil {
			return UndoResult{}, conflict(cur.path, ReasonExists, "something is at its place now")
		}
		p.action, p.dst = ActionMkdir, cur.path
		res, err = e.mkdir(ctx, p)
	default:
		return UndoResult{}, fmt.Errorf("receipt %s: unknown file operation %q", cur.id, cur.action)
	}
	if err != nil {
		var ce *ConflictError
		if errors.As(err, &ce) && ce.ReceiptID == "" {
			ce.ReceiptID = cur.id
		}
		return UndoResult{}, err
	}
	out := UndoResult{UndoneReceiptID: cur.id, MutationResult: MutationResult{Path: res.Path, ReceiptID: res.ReceiptID, Created: res.Type != "" && (p.action == ActionMove || p.action == ActionRestore || p.action == ActionMkdir), Deleted: p.action == ActionTrash || p.action == ActionRmdir, Warning: res.Error}}
	if res.SHA256 != "" {
		out.SHA256 = &res.SHA256
	}
	return out, nil
}
