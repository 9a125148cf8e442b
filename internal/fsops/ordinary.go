package fsops

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"

	"os"
	"path/filepath"
	"slices"

	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/risk"
	"github.com/hearth-dev/hearth/internal/startup"
)

// What the allowlist of ordinary writes (internal/risk Writes) needs of
// a file fs would change: gathered for governance at admission (target)
// and again when the file is opened for the replace (checkOrdinary), so
// that a write admitted as ordinary cannot land elsewhere, or on a file
// that became a program, through a link swapped in between.

// ErrNotOrdinary is wrapped by the error of a write admitted as ordinary
// whose file is, when it is opened, no longer that ordinary file.
var ErrNotOrdinary = errors.New("no longer the ordinary file admitted")

// NotOrdinaryError is a write refused when it opened its file: the real
// path changed since admission, or the file is no longer ordinary.
type NotOrdinaryError struct {
	Path string
	// Admitted are the real paths admission found.
	Admitted []string
	// Why is the allowlist's reason, "" when the path changed.
	Why risk.Why
	// Place is the persistence place the file is in now, when that is
	// why ("" otherwise).
	Place string
}

func (e *NotOrdinaryError) Error() string {
	if e.Place != "" {
		return fmt.Sprintf("writing %s would now %s, which it would not when the call was admitted; nothing was written", e.Path, e.Place)
	}
	if e.Why != "" {
		return fmt.Sprintf("%s is no longer an ordinary file (%s) since the call was admitted; nothing was written", e.Path, e.Why)
	}
	return fmt.Sprintf("%s is no longer where the call was admitted to write (a link changed); nothing was written", e.Path)
}

// Unwrap makes errors.Is(err, ErrNotOrdinary) true.
func (e *NotOrdinaryError) Unwrap() error { return ErrNotOrdinary }

// writes returns the allowlist: the Engine's, or this OS's from the
// process environment.
func (e *Engine) writes() *risk.Writes {
	e.writesOnce.Do(func() {
		if e.Writes == nil {
			e.Writes = risk.NewWrites(risk.KnownFolderEnv(os.Getenv), RealPrefix)
		}
	})
	return e.Writes
}

// places returns the persistence table: the Engine's, or this OS's from
// the process environment.
func (e *Engine) places() *risk.Places {
	e.placesOnce.Do(func() {
		if e.Places == nil {
			e.Places = risk.NewPlaces(os.Getenv)
		}
	})
	return e.Places
}

// autoruns returns the startup index: the Engine's, or this OS's from
// the process environment.
func (e *Engine) autoruns() (*startup.Index, error) {
	e.startOnce.Do(func() {
		if e.Startup == nil {
			e.Startup, e.startErr = startup.New(startup.Options{Env: risk.KnownFolderEnv(os.Getenv), Real: RealPrefix, Refresh: startup.Refresh})
		}
	})
	return e.Startup, e.startErr
}

// changed tells the startup index that the engine changed a file, once
// the change is done (its receipt committed): a start-up file Hearth
// just changed counts at the next check.
func (e *Engine) changed() {
	if x, err := e.autoruns(); err == nil {
		x.Touched()
	}
}

// leaves is what the allowlist needs of the content a call leaves in a
// file.
type leaves struct {
	// head is its start (nil: none, the file is removed).
	head []byte
	// folder is set when the path is a folder the call makes, carries or
	// removes (risk.FileFacts.Folder).
	folder bool
	// macros is set when the file is an Office or OpenDocument file
	// (risk.NeedsPackageCheck) and the content is not a package free of
	// macros (risk.PackageMacros).
	macros bool
	// link is set when the path is a link the call carries itself (the
	// source of a move or trash): it is judged at its own path, by the
	// kind of what it points to (a link to a program as a program).
	link bool
}

// carriedLeaves is what carrying the item at src to dst leaves there: a
// folder, or a file's start; a link counts as what it points to.
func carriedLeaves(src, dst string) leaves {
	if info, err := (itemView{}).stat(src); err == nil && info.IsDir() {
		return leaves{folder: true}
	} else if err != nil || !info.Mode().IsRegular() {
		return leaves{head: []byte{}}
	}
	return fileLeaves(src, dst)
}

// leavesBytes is what the allowlist needs of data left in the file at
// path.
func leavesBytes(path string, data []byte) leaves {
	l := leaves{head: head(data)}
	if l.head == nil {
		l.head = []byte{}
	}
	if risk.NeedsPackageCheck(path) {
		l.macros = risk.PackageMacrosBytes(data)
	}
	return l
}

// fileLeaves is what carrying the file src to dst (a move or a copy)
// leaves at dst: src's start, and for an Office or OpenDocument name at
// dst whether src is a package free of macros.
func fileLeaves(src, dst string) leaves {
	return fileLeavesFrom(fileHead(src), src, dst)
}

// fileLeavesFrom is fileLeaves with src's start already read (nil: it
// could not be).
func fileLeavesFrom(start []byte, src, dst string) leaves {
	l := leaves{head: head(start)}
	if l.head == nil {
		l.head = []byte{}
	}
	if risk.NeedsPackageCheck(dst) {
		l.macros = true
		if f, err := openRead(src); err == nil {
			l.macros = packageMacrosOf(f)
			f.Close()
		}
	}
	return l
}

// readerAtCloser is content in memory that can be read at an offset, as
// an open file can (packageMacrosOf).
type readerAtCloser struct{ *bytes.Reader }

func (readerAtCloser) Close() error { return nil }

// packageMacrosOf is risk.PackageMacros of the content src streams from
// its start, read where it is (an open file or a copy in memory) without
// moving it; any other stream counts as holding macros.
func packageMacrosOf(src io.ReadCloser) bool {
	switch s := src.(type) {
	case *os.File:
		info, err := s.Stat()
		if err != nil {
			return true
		}
		return risk.PackageMacros(s, info.Size())
	case readerAtCloser:
		return risk.PackageMacros(s.Reader, s.Size())
	}
	return true
}

// facts gathers what the allowlist needs of the file at the real path
// real, which the call leaves with l.
func (e *Engine) facts(real string, l leaves) risk.FileFacts {
	f := risk.FileFacts{Path: real, Root: e.Roots.rootOf(real), NewHead: l.head, NewMacros: l.macros, Folder: l.folder, Marked: markedOnTheWay(real)}
	info, err := lstatItem(real)
	if err != nil {
		return f
	}
	f.Exists = true
	if l.link && isLink(info) {
		// Judged by what it points to; nothing more is known of a link
		// to nothing.
		if info, err = (itemView{}).stat(real); err != nil {
			return f
		}
		f.Folder = f.Folder || info.IsDir()
	}
	f.Executable = executable(info)
	if info.Mode().IsRegular() {
		if r, err := openRead(real); err == nil {
			head := make([]byte, risk.HeadSize)
			n, _ := io.ReadFull(r, head)
			r.Close()
			f.Head = head[:n]
		}
	}
	return f
}

// rootOf returns the real path of the deepest root real is under, or "".
func (r Roots) rootOf(real string) string {
	best := ""
	for _, d := range r.roots {
		if hasPathPrefix(real, d.real, filepath.Separator, r.fold) && len(d.real) > len(best) {
			best = d.real
		}
	}
	return best
}

// headOf is the start of a write's content: its first HeadSize bytes,
// decoded from base64 when the write is.
func headOf(data, encoding string) []byte {
	if encoding != EncodingBase64 {
		return []byte(data[:min(len(data), risk.HeadSize)])
	}
	// 8 base64 characters are 6 bytes, more than HeadSize; the decoder
	// skips line breaks, wherever they are, and so does this.
	var first []byte
	for i := 0; i < len(data) && len(first) < 8; i++ {
		if data[i] != '\r' && data[i] != '\n' {
			first = append(first, data[i])
		}
	}
	b, err := base64.StdEncoding.DecodeString(string(first))
	if err != nil && len(first) == 8 {
		return nil
	}
	return b[:min(len(b), risk.HeadSize)]
}

// peekHead returns the start of what src streams, and a reader that
// still streams all of it (closing src when closed).
func peekHead(src io.ReadCloser) (io.ReadCloser, []byte, error) {
	br := bufio.NewReaderSize(src, 16)
	b, err := br.Peek(risk.HeadSize)
	if err != nil && !errors.Is(err, io.EOF) {
		return src, nil, err
	}
	return struct {
		io.Reader
		io.Closer
	}{br, src}, slices.Clone(b), nil
}

// checkOrdinary refuses a write admitted as ordinary (c.Ordinary) whose
// file, now that it is opened for the replace, is not at a path admission
// found, is reached through a link, or is not an ordinary file.
func (e *Engine) checkOrdinary(c primitive.Checked, path string, l leaves) error {
	return e.checkOrdinaryIn(c, path, l, nil)
}

// callChecks is what the checks of one call's items share (nil: an item
// checked alone): the paths admission found, as a set, and the allowlist
// for the call's files (risk.CallWrites). Each item is still checked on
// its own.
type callChecks struct {
	admitted map[string]bool
	writes   *risk.CallWrites
}

// newCallChecks returns the checks of one call admitted with c.
func (e *Engine) newCallChecks(c primitive.Checked) *callChecks {
	cc := &callChecks{admitted: make(map[string]bool, len(c.Paths))}
	for _, p := range c.Paths {
		cc.admitted[p] = true
	}
	if c.Ordinary {
		cc.writes = e.writes().ForCall()
	}
	return cc
}

// checkOrdinaryIn is checkOrdinary for one item of a call (cc: its
// shared checks, or nil).
func (e *Engine) checkOrdinaryIn(c primitive.Checked, path string, l leaves, cc *callChecks) error {
	if !c.Ordinary {
		return nil
	}
	admitted := cc != nil && cc.admitted[path] || cc == nil && slices.Contains(c.Paths, path)
	// Admission found no path (one that led outside the roots then): the
	// path now is not one it checked.
	real := RealPrefix(path)
	if l.link {
		// The link itself, never what it points to.
		real = filepath.Join(RealPrefix(filepath.Dir(path)), filepath.Base(path))
		if info, err := lstatItem(path); err == nil && !isLink(info) {
			real = RealPrefix(path)
		}
	}
	if real != path || !admitted {
		return &NotOrdinaryError{Path: path, Admitted: c.Paths}
	}
	// A persistence place is never ordinary and no folder rule covers
	// one: a write admitted as ordinary that now lands in one (another
	// call, run at the same time, completed a git folder's shape around
	// it) is refused, as admission would have asked.
	if pl, ok := e.places().Match(path); ok {
		return &NotOrdinaryError{Path: path, Admitted: c.Paths, Place: pl.Sentence}
	}
	// A file something starts by itself (the startup index names it) is
	// a persistence place too: refused as one.
	x, err := e.autoruns()
	if err != nil {
		return &NotOrdinaryError{Path: path, Admitted: c.Paths, Place: "change a file whose start-up entries could not be read"}
	}
	if hit, ok := x.Match(path); ok {
		return &NotOrdinaryError{Path: path, Admitted: c.Paths, Place: hit.Said(path)}
	}
	if c.Covered {
		// A folder rule covered it at admission, at this very path.
		return nil
	}
	classify := e.writes().Classify
	if cc != nil {
		classify = cc.writes.Classify
	}
	if why, ok := classify(e.facts(path, l)); !ok {
		return &NotOrdinaryError{Path: path, Admitted: c.Paths, Why: why}
	}
	return nil
}

// checkedKey carries a call's admission (primitive.Checked) to mutate.
type checkedKey struct{}

// withChecked returns ctx carrying c for the mutation it runs.
func withChecked(ctx context.Context, c primitive.Checked) context.Context {
	return context.WithValue(ctx, checkedKey{}, c)
}

// checkedOf is the admission ctx carries; the zero Checked (no check)
// for a call made without one (Hearth's own, tests of the engine).
func checkedOf(ctx context.Context) primitive.Checked {
	c, _ := ctx.Value(checkedKey{}).(primitive.Checked)
	return c
}
