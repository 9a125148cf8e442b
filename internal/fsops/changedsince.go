package fsops

import (
	"errors"
	"io/fs"
	"os"
)

// SinceCheck tells whether files are still as changes left them, for a
// page that must not offer an undo the undo itself would refuse (undoOne
// leaves a file alone when its content is not the change's post). It
// reads at most a budget of bytes in all, so a page of a chat that
// changed many large files stays cheap: a file it has no budget left for
// counts as unchanged (the undo still checks it, and names it when it
// leaves it alone), and so does a OneDrive file not on this PC, which a
// page must not have Windows download. Files whose hash the engine's
// cache holds, and files whose size already differs, cost nothing. One
// check serves one page.
type SinceCheck struct {
	e    *Engine
	left int64
}

// NewSinceCheck returns a check that hashes at most budget bytes.
func (e *Engine) NewSinceCheck(budget int64) *SinceCheck {
	return &SinceCheck{e: e, left: budget}
}

// Changed reports whether the file at path is no longer as a change left
// it: post is its SHA-256 then ("" when the change removed it), postSize
// its size when known (-1 when not). A file changed, removed, made or
// replaced by something that is not a file since counts as changed; a
// file it cannot read, or has no budget left for, as unchanged.
func (s *SinceCheck) Changed(path, post string, postSize int64) bool {
	v := s.e.view()
	info, err := v.lstat(path)
	if post == "" {
		return err == nil
	}
	if err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	if !info.Mode().IsRegular() {
		return true
	}
	if postSize >= 0 && info.Size() != postSize {
		return true
	}
	if sha, ok := s.e.hashes.cached(path, info); ok {
		return sha != post
	}
	if info.Size() > s.left || v.offline(path, info) {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	s.left -= info.Size()
	sha, err := s.e.hashes.sum(path, info, f)
	return err == nil && sha != post
}

// ItemChanged reports whether the item a move, copy or restore left at
// path is no longer as it left it: fp is its fingerprint then, dir that
// it was a folder. It answers as the undo's own check would: an item no
// longer there, or of another kind, counts as changed; a plain file is
// compared as Changed compares it (within the budget); a link by its
// target. A folder that is still a folder counts as unchanged: its
// fingerprint reads its whole tree, too much for a page (the undo checks
// it, and names it when it leaves it alone).
func (s *SinceCheck) ItemChanged(path, fp string, dir bool) bool {
	info, err := s.e.view().lstat(path)
	switch {
	case err != nil:
		return errors.Is(err, fs.ErrNotExist)
	case dir:
		return !info.IsDir()
	case isLink(info):
		lp, err := linkPrint(path)
		return err == nil && lp != fp
	}
	return s.Changed(path, fp, -1)
}

// TrashChanged reports whether a trash can no longer be undone as it
// stands, from two looks and no read: the item is no longer where the
// bin put it (bin; "" when Hearth does not know, which counts as
// unchanged: the undo says so itself), or something else is at its old
// place (path). Whether the item in the bin changed is left to the undo,
// which checks its fingerprint and names it when it leaves it there.
func (s *SinceCheck) TrashChanged(path, bin string) bool {
	if bin == "" {
		return false
	}
	if _, err := os.Lstat(bin); errors.Is(err, fs.ErrNotExist) {
		return true
	}
	_, err := os.Lstat(path)
	return err == nil
}
