package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/hearth-dev/hearth/internal/atomicfile"
	"github.com/hearth-dev/hearth/web/session"
)

// SaveSessions writes the panel's live sessions to path (private to the
// user), for the Hearth that runs after an update: the browser stays
// signed in across the hand-over. The file holds each session's cookie
// hash and CSRF token, never a cookie, and is removed by the next Hearth
// as it reads it (RestoreSessions).
func (p *Panel) SaveSessions(path string) error {
	b, err := json.Marshal(p.sessions.Export())
	if err != nil {
		return err
	}
	err = atomicfile.Replacer{Private: true}.WriteWith(path, 0o600, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
	if err != nil {
		return fmt.Errorf("keep the panel's sessions for the next Hearth: %w", err)
	}
	return nil
}

// RestoreSessions takes the sessions an earlier Hearth saved at path (an
// update's hand-over) and removes the file, so they are taken once; n is
// how many. No file is no error.
func (p *Panel) RestoreSessions(path string) (n int, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read the sessions handed over: %w", err)
	}
	rmErr := os.Remove(path)
	var saved []session.Saved
	if err := json.Unmarshal(b, &saved); err != nil {
		return 0, errors.Join(fmt.Errorf("read the sessions handed over: %w", err), rmErr)
	}
	p.sessions.Import(saved)
	return len(saved), rmErr
}
