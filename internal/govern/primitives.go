package govern

import (
	"context"
	"path/filepath"
	"runtime"
)

func isAbsPath(p string) bool {
	return filepath.IsAbs(p) || runtime.GOOS == "windows" && len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/')
}

// ReconcileAs closes, for the model, the open UNKNOWN outcome commandID
// of conversation route after it re-read the state (task.reconcile, which
// internal/control builds: a reconcile also releases the work the
// UNKNOWN held). Only the observation's length is journaled.
func (g *Governor) ReconcileAs(ctx context.Context, route, commandID, observed string) error {
	return g.reconcile(ctx, route, commandID, "model", observed)
}
