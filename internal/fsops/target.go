package fsops

import (
	"context"
	"encoding/base64"
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
	err := e.addTarget(&t, in.Path, func(real string) leaves {
		l := leaves{head: headOf(in.Data, in.Encoding)}
		if risk.NeedsPackageCheck(real) {
			data := []byte(in.Data)
			if in.Encoding == EncodingBase64 {
				var err error
				if data, err = base64.StdEncoding.DecodeString(in.Data); err != nil {
					data = nil // refused when it runs
				}
			}
			l.macros = data != nil && risk.PackageMacrosBytes(data)
		}
		return l
	})
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
	err := e.addTarget(&t, in.Path, func(real string) leaves { return patched(real, in.Replacements) })
	return t, err
}

// patched is what patching the file at real with reps would leave, or
// nothing when the patch cannot apply now (it fails when it runs, or the
// file changed by then and the check when the file is opened sees the
// content it really leaves).
func patched(real string, reps []Replacement) leaves {
	f, err := openRead(real)
	if err != nil {
		return leaves{}
	}
	defer f.Close()
	info, err := itemView{}.opened(f)
	if err != nil || !info.Mode().IsRegular() || info.Size() > MaxInMemory {
		return leaves{}
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxInMemory+1))
	if err != nil || len(data) > MaxInMemory {
		return leaves{}
	}
	out, _, err := applyPatch(data, reps)
	if err != nil {
		return leaves{}
	}
	return leavesBytes(real, out)
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
		var restored leaves
		if r.existed {
			if restored, err = e.prior(ctx, r); err != nil {
				return primitive.Target{}, err
			}
		}
		if err := e.addTarget(&t, r.path, func(string) leaves { return restored }); err != nil {
			return primitive.Target{}, err
		}
	}
	t.Paths = listedOnce(t.Paths)
	return t, nil
}

// prior is what the allowlist needs of the content receipt r's
// operation replaced, which an undo of r puts back.
func (e *Engine) prior(ctx context.Context, r receipt) (leaves, error) {
	src, err := e.priorReader(ctx, r)
	if err != nil {
		return leaves{}, err
	}
	defer src.Close()
	var l leaves
	if risk.NeedsPackageCheck(r.path) {
		l.macros = packageMacrosOf(src)
	}
	b := make([]byte, risk.HeadSize)
	n, err := io.ReadFull(src, b)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return leaves{}, fmt.Errorf("read the undo copy of receipt %s: %w", r.id, err)
	}
	l.head = b[:n]
	return l, nil
}

// addTarget adds the file at path to t, with left of its real path as
// what the call leaves there. Every file the call
// writes counts, even one path twice (an undo of several receipts of one
// file writes each content in turn).
func (e *Engine) addTarget(t *primitive.Target, path string, left func(real string) leaves) error {
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
	t.Files = append(t.Files, e.facts(real, left(real)))
	return nil
}

// head is the start of data the allowlist looks at.
func head(data []byte) []byte { return data[:min(len(data), risk.HeadSize)] }
