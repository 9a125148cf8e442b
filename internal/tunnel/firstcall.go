package tunnel

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hearth-dev/hearth/internal/atomicfile"
)

// firstCallFile holds when ChatGPT's first call reached Hearth (RFC 3339),
// so that Setup's last step stays done across restarts.
const firstCallFile = "chatgpt-first-call.txt"

// NoteChatGPTCall records that a call from ChatGPT arrived (an MCP call
// carrying _meta["openai/session"], which only ChatGPT's side of the
// tunnel sends): the first one is remembered with its time, in memory and
// in the data directory. Later calls change nothing. It is cheap enough to
// call on every such call.
func (s *Supervisor) NoteChatGPTCall(at time.Time) {
	if !s.FirstChatGPTCall().IsZero() {
		return
	}
	s.mu.Lock()
	if !s.firstCall.IsZero() {
		s.mu.Unlock()
		return
	}
	s.firstCall = at
	s.mu.Unlock()
	if s.dataDir == "" {
		return
	}
	path := filepath.Join(s.dataDir, firstCallFile)
	err := atomicfile.WriteWith(path, 0o600, func(w io.Writer) error {
		_, err := io.WriteString(w, at.UTC().Format(time.RFC3339Nano)+"\n")
		return err
	})
	if err != nil {
		s.log.Warn("tunnel: remember ChatGPT's first call", "err", err)
		return
	}
	s.log.Info("tunnel: ChatGPT's first call reached Hearth")
}

// FirstChatGPTCall is when ChatGPT's first call reached Hearth (zero:
// none yet).
func (s *Supervisor) FirstChatGPTCall() time.Time {
	s.mu.Lock()
	if s.firstCallLoaded || !s.firstCall.IsZero() {
		t := s.firstCall
		s.mu.Unlock()
		return t
	}
	s.mu.Unlock()
	var t time.Time
	if s.dataDir != "" {
		b, err := readSmall(filepath.Join(s.dataDir, firstCallFile), 128)
		switch {
		case err == nil:
			if p, perr := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(b))); perr == nil {
				t = p
			} else {
				s.log.Warn("tunnel: read ChatGPT's first call", "err", perr)
			}
		case !errors.Is(err, os.ErrNotExist):
			s.log.Warn("tunnel: read ChatGPT's first call", "err", err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.firstCall.IsZero() {
		s.firstCall = t
	}
	s.firstCallLoaded = true
	return s.firstCall
}

// forgetFirstCall forgets ChatGPT's first call (the tunnel ID changed:
// ChatGPT has yet to reach Hearth through the new tunnel).
func (s *Supervisor) forgetFirstCall() {
	s.mu.Lock()
	had := !s.firstCall.IsZero()
	s.firstCall, s.firstCallLoaded = time.Time{}, true
	s.mu.Unlock()
	if s.dataDir == "" {
		return
	}
	if err := os.Remove(filepath.Join(s.dataDir, firstCallFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		s.log.Warn("tunnel: forget ChatGPT's first call", "err", err)
		return
	}
	if had {
		s.log.Info("tunnel: the tunnel ID changed; waiting for ChatGPT's first call through the new tunnel")
	}
}
