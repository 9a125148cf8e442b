package fsops

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/hearth-dev/hearth/internal/primitive"
)

// target is the Target of write, patch and undo: the real path of the
// file the call would change, and what the allowlist of ordinary writes
// needs of it, so that governance can tell an ordinary write from one
// that makes a program start by itself or is not ordinary
// (internal/risk) after symlinks and junctions are resolved. A path fs
// would refuse, or a receipt this conversation cannot see, gives no
// path: the call is refused when it runs, with the reason.
func (e *Engine) target(ctx context.Context, route string, raw json.RawMessage) (primitive.Target, error) {
	var in struct {
		Path       string   `json:"path"`
		ReceiptID  string   `json:"receipt_id"`
		ReceiptIDs []string `json:"receipt_ids"`
		Data       *string  `json:"data"`
		Encoding   string   `json:"encoding"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return primitive.Target{}, fmt.Errorf("decode input: %w", err)
	}
	paths := []string{in.Path}
	if in.ReceiptID != "" || len(in.ReceiptIDs) > 0 {
		ids := in.ReceiptIDs
		if in.ReceiptID != "" {
			ids = append([]string{in.ReceiptID}, ids...)
		}
		if len(ids) > MaxUndoIDs+1 {
			return primitive.Target{}, nil // refused when it runs
		}
		paths = paths[:0]
		cond, arg := primitive.RouteMatch("route", route)
		for _, id := range ids {
			var p string
			err := e.DB.R.QueryRowContext(ctx, `SELECT path FROM fs_receipts WHERE id = ? AND `+cond, id, arg).Scan(&p)
			if errors.Is(err, sql.ErrNoRows) {
				return primitive.Target{}, nil
			}
			if err != nil {
				return primitive.Target{}, fmt.Errorf("read the path of receipt %s: %w", id, err)
			}
			paths = append(paths, p)
		}
	}
	var head []byte
	if in.Data != nil {
		head = headOf(*in.Data, in.Encoding)
	}
	var t primitive.Target
	for _, p := range paths {
		real, err := e.Roots.Resolve(p)
		if errors.Is(err, ErrContainment) {
			continue // refused when it runs; the others are still checked
		}
		if err != nil {
			return primitive.Target{}, err
		}
		if !slices.Contains(t.Paths, real) {
			t.Paths = append(t.Paths, real)
			t.Files = append(t.Files, e.facts(real, head))
		}
	}
	return t, nil
}
