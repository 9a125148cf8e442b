package fsops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/risk"
)

// The Targets of write, patch and undo: the real path of each file the
// call would change, and what the allowlist of ordinary writes needs of
// it (the start of the content the file would have after the call), so
// that governance can tell an ordinary write from one that makes a
// program start by itself or is not ordinary (internal/risk) after
// symlinks and junctions are resolved. A path fs would refuse, or a
// receipt this conversation cannot see, gives no path: the call is
// refused when it runs, with the reason.

// writeTarget is write's Target: the start of its data.
func (e *Engine) writeTarget(_ context.Context, _ string, raw json.RawMessage) (primitive.Target, error) {
	var in struct {
		Path     string `json:"path"`
		Data     string `json:"data"`
		Encoding string `json:"encoding"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return primitive.Target{}, fmt.Errorf("decode input: %w", err)
	}
	var t primitive.Target
	err := e.addTarget(&t, in.Path, func(string) []byte { return headOf(in.Data, in.Encoding) })
	return t, err
}

// patchTarget is patch's Target: the start of the content the patch
// would leave, computed from the file as it is now, so a patch that makes
// a file start as a program is seen as one at admission, as a write of
// that content is.
func (e *Engine) patchTarget(_ context.Context, _ string, raw json.RawMessage) (primitive.Target, error) {
	var in struct {
		Path         string        `json:"path"`
		Replacements []Replacement `json:"replacements"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return primitive.Target{}, fmt.Errorf("decode input: %w", err)
	}
	var t primitive.Target
	err := e.addTarget(&t, in.Path, func(real string) []byte { return patchedHead(real, in.Replacements) })
	return t, err
}

// patchedHead is the start of the content patching the file at real
// with reps would leave, or nil when the patch cannot apply now (it
// fails when it runs, or the file changed by then and the check when the
// file is opened sees the content it really leaves).
func patchedHead(real string, reps []Replacement) []byte {
	f, err := openRead(real)
	if err != nil {
		return nil
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() || info.Size() > MaxInMemory {
		return nil
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxInMemory+1))
	if err != nil || len(data) > MaxInMemory {
		return nil
	}
	out, _, err := applyPatch(data, reps)
	if err != nil {
		return nil
	}
	return head(out)
}

// undoTarget is undo's Target: each receipt's file, with the start of
// the content the undo would put back (none when it removes the file),
// so an undo that brings a program back asks as a write of it would.
func (e *Engine) undoTarget(ctx context.Context, route string, raw json.RawMessage) (primitive.Target, error) {
	var in UndoInput
	if err := json.Unmarshal(raw, &in); err != nil {
		return primitive.Target{}, fmt.Errorf("decode input: %w", err)
	}
	ids := in.ReceiptIDs
	if in.ReceiptID != "" {
		ids = append([]string{in.ReceiptID}, ids...)
	}
	if len(ids) > MaxUndoIDs+1 {
		return primitive.Target{}, nil // refused when it runs
	}
	var t primitive.Target
	for _, id := range ids {
		r, err := e.loadReceipt(ctx, route, id)
		if errors.Is(err, ErrReceiptNotFound) || errors.Is(err, ErrReceiptExpired) {
			return primitive.Target{}, nil // refused when it runs
		}
		if err != nil {
			return primitive.Target{}, err
		}
		if r.action != "" {
			e.undoActionTarget(&t, r)
			continue
		}
		var restored []byte
		if r.existed {
			if restored, err = e.priorHead(ctx, r); err != nil {
				return primitive.Target{}, err
			}
		}
		if err := e.addTarget(&t, r.path, func(string) []byte { return restored }); err != nil {
			return primitive.Target{}, err
		}
	}
	return t, nil
}

// priorHead is the start of the content receipt r's operation replaced,
// which an undo of r puts back.
func (e *Engine) priorHead(ctx context.Context, r receipt) ([]byte, error) {
	src, err := e.priorReader(ctx, r)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	b := make([]byte, risk.HeadSize)
	n, err := io.ReadFull(src, b)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, fmt.Errorf("read the undo copy of receipt %s: %w", r.id, err)
	}
	return b[:n], nil
}

// addTarget adds the file at path to t, with newHead of its real path as
// the start of the content the call leaves there. Every file the call
// writes counts, even one path twice (an undo of several receipts of one
// file writes each content in turn).
func (e *Engine) addTarget(t *primitive.Target, path string, newHead func(real string) []byte) error {
	real, err := e.Roots.Resolve(path)
	if errors.Is(err, ErrContainment) {
		return nil // refused when it runs; the others are still checked
	}
	if err != nil {
		return err
	}
	if !slices.Contains(t.Paths, real) {
		t.Paths = append(t.Paths, real)
	}
	t.Files = append(t.Files, e.facts(real, newHead(real)))
	return nil
}

// head is the start of data the allowlist looks at.
func head(data []byte) []byte { return data[:min(len(data), risk.HeadSize)] }
