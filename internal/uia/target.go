package uia

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/risk"
)

// target is ui.action's Target: the application its scope (hwnd or
// process_id) belongs to, so that governance asks once per application
// per conversation, and whether typing there runs programs (a console,
// the Run dialog in Explorer), which always asks. A call scoped to the
// whole desktop names no application and asks on its own.
func (s *Service) target(_ context.Context, _ string, raw json.RawMessage) (primitive.Target, error) {
	var in Input
	if err := json.Unmarshal(raw, &in); err != nil {
		return primitive.Target{}, fmt.Errorf("decode input: %w", err)
	}
	pid := in.ProcessID
	if in.HWND != 0 {
		p, err := windowProcess(in.HWND)
		if err != nil {
			// A window that cannot be told is asked about on its own.
			return primitive.Target{}, nil
		}
		pid = p
	}
	if pid == 0 {
		return primitive.Target{}, nil
	}
	image, err := processImage(pid)
	if err != nil || image == "" {
		return primitive.Target{}, nil
	}
	app := strings.ToLower(filepath.Base(strings.ReplaceAll(image, `\`, "/")))
	return primitive.Target{App: app, Console: risk.IsConsoleApp(app)}, nil
}
