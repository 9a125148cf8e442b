package fsops

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/hearth-dev/hearth/internal/jsonx"
)

// Bounds of the read-only operations. Limits asked above a maximum are
// clamped to it, not refused.
const (
	DefaultListLimit     = 200
	MaxListLimit         = 2000
	DefaultReadLimit     = 64 << 10
	MaxReadLimit         = 1 << 20
	MaxHashSize          = 64 << 20 // read and stat hash whole files up to this size
	DefaultSearchLimit   = 50
	MaxSearchLimit       = 500
	DefaultSearchEntries = 10000
	MaxSearchEntries     = 100000
	MaxSearchFileSize    = 2 << 20 // search skips larger files
	searchPreviewBytes   = 200
)

// File types in results.
const (
	TypeFile    = "file"
	TypeDir     = "dir"
	TypeSymlink = "symlink"
	TypeOther   = "other"
)

// Encodings of read data and write input.
const (
	EncodingUTF8   = "utf8"
	EncodingBase64 = "base64"
)

func typeOf(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return TypeFile
	case m.IsDir():
		return TypeDir
	case m&fs.ModeSymlink != 0:
		return TypeSymlink
	}
	return TypeOther
}

// ListInput is the input of list.
type ListInput struct {
	Path  string `json:"path"`
	Limit int    `json:"limit,omitempty"`
	// Sort is name (default), size (largest first) or modified (newest
	// first); ModifiedAfter and ModifiedBefore keep the entries modified
	// at or after, and before, a time (RFC 3339, or a date: midnight UTC).
	Sort           string `json:"sort,omitempty"`
	ModifiedAfter  string `json:"modified_after,omitempty"`
	ModifiedBefore string `json:"modified_before,omitempty"`
}

// Entry is one directory entry. Size and mtime are the entry's own (a
// symlink's, not its target's).
type Entry struct {
	Name  string    `json:"name"`
	Type  string    `json:"type"` // file, dir, symlink or other
	Size  int64     `json:"size"`
	MTime time.Time `json:"mtime"`
}

// ListResult is the output of list: entries in the order asked (by name
// by default); Total counts the entries the filters kept.
type ListResult struct {
	Path      string  `json:"path"`
	Entries   []Entry `json:"entries"`
	Total     int     `json:"total"`
	Truncated bool    `json:"truncated"`
}

// List lists a directory, at most in.Limit entries (DefaultListLimit when 0).
func (e *Engine) List(ctx context.Context, in ListInput) (ListResult, error) {
	limit, err := bound("limit", in.Limit, DefaultListLimit, MaxListLimit)
	if err != nil {
		return ListResult{}, err
	}
	abs, err := e.Roots.Resolve(in.Path)
	if err != nil {
		return ListResult{}, err
	}
	v := e.view()
	if info, err := v.stat(abs); err == nil && !info.IsDir() {
		return ListResult{}, &InputError{Field: "path", Message: fmt.Sprintf("%s is a %s, not a directory; use read or stat", abs, typeOf(info.Mode()))}
	}
	after, err := listTime("modified_after", in.ModifiedAfter)
	if err != nil {
		return ListResult{}, err
	}
	before, err := listTime("modified_before", in.ModifiedBefore)
	if err != nil {
		return ListResult{}, err
	}
	switch in.Sort {
	case "", "name", "size", "modified":
	default:
		return ListResult{}, &InputError{Field: "sort", Message: fmt.Sprintf("%q is not one of name, size, modified", in.Sort)}
	}
	des, err := os.ReadDir(abs)
	if err != nil {
		return ListResult{}, fmt.Errorf("list %s: %w", abs, err)
	}
	all := (in.Sort == "" || in.Sort == "name") && after.IsZero() && before.IsZero()
	res := ListResult{Path: abs, Entries: []Entry{}, Total: len(des)}
	var kept []Entry
	for _, de := range des {
		if all && len(res.Entries) == limit {
			res.Truncated = true
			break
		}
		de = v.entry(filepath.Join(abs, de.Name()), de)
		ent := Entry{Name: de.Name(), Type: typeOf(de.Type())}
		if info, err := de.Info(); err == nil {
			ent.Size, ent.MTime = info.Size(), info.ModTime().UTC()
			ent.Type = typeOf(info.Mode())
		}
		if all {
			res.Entries = append(res.Entries, ent)
			continue
		}
		if !after.IsZero() && ent.MTime.Before(after) || !before.IsZero() && !ent.MTime.Before(before) {
			continue
		}
		kept = append(kept, ent)
	}
	if all {
		return res, nil
	}
	switch in.Sort {
	case "size":
		slices.SortStableFunc(kept, func(a, b Entry) int { return cmp.Compare(b.Size, a.Size) })
	case "modified":
		slices.SortStableFunc(kept, func(a, b Entry) int { return b.MTime.Compare(a.MTime) })
	}
	res.Total = len(kept)
	if len(kept) > limit {
		kept, res.Truncated = kept[:limit], true
	}
	res.Entries = append(res.Entries, kept...)
	return res, nil
}

// listTime reads a time of list's filters: RFC 3339, or a date (its
// midnight UTC); "" is none.
func listTime(field, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, &InputError{Field: field, Message: fmt.Sprintf("%q is not a time: give RFC 3339 (2025-01-31T09:00:00Z) or a date (2025-01-31)", s)}
}

// ReadInput is the input of read. Pages, Sheet, Range and Formulas select
// the part of a document to read (document.Options).
type ReadInput struct {
	Path     string `json:"path"`
	Offset   int64  `json:"offset,omitempty"`
	Limit    int    `json:"limit,omitempty"`
	Encoding string `json:"encoding,omitempty"` // utf8 (default) or base64
	Pages    string `json:"pages,omitempty"`
	Sheet    string `json:"sheet,omitempty"`
	Range    string `json:"range,omitempty"`
	Formulas bool   `json:"formulas,omitempty"`
}

// ReadResult is the output of read. Offset+Length is where the next read
// continues; with utf8 a character cut by the limit is left for it. SHA256 is
// of the whole file, omitted above MaxHashSize.
type ReadResult struct {
	Path     string    `json:"path"`
	Offset   int64     `json:"offset"`
	Length   int       `json:"length"`
	Size     int64     `json:"size"`
	EOF      bool      `json:"eof"`
	Encoding string    `json:"encoding"`
	Data     string    `json:"data"`
	SHA256   string    `json:"sha256,omitempty"`
	MTime    time.Time `json:"mtime"`
	*DocumentPart
}

// Read reads at most in.Limit bytes (DefaultReadLimit when 0) from in.Offset.
func (e *Engine) Read(ctx context.Context, in ReadInput) (ReadResult, error) {
	limit, err := bound("limit", in.Limit, DefaultReadLimit, MaxReadLimit)
	if err != nil {
		return ReadResult{}, err
	}
	if in.Offset < 0 {
		return ReadResult{}, &InputError{Field: "offset", Message: "must not be negative"}
	}
	enc, err := encoding(in.Encoding)
	if err != nil {
		return ReadResult{}, err
	}
	abs, err := e.Roots.Resolve(in.Path)
	if err != nil {
		return ReadResult{}, err
	}
	f, info, err := e.openRegular(abs)
	if err != nil {
		return ReadResult{}, err
	}
	defer f.Close()
	if enc == EncodingUTF8 && isDocument(abs) {
		return e.readDocument(ctx, abs, f, info, in, limit)
	}
	if err := notADocument(abs, in); err != nil {
		return ReadResult{}, err
	}
	size := info.Size()
	res := ReadResult{Path: abs, Offset: in.Offset, Size: size, Encoding: enc, MTime: info.ModTime().UTC()}
	var buf []byte
	if in.Offset < size {
		buf = make([]byte, min(int64(limit), size-in.Offset))
		n, err := f.ReadAt(buf, in.Offset)
		if err != nil && !errors.Is(err, io.EOF) {
			return ReadResult{}, fmt.Errorf("read %s: %w", abs, err)
		}
		buf = buf[:n]
	}
	if enc == EncodingUTF8 {
		if in.Offset+int64(len(buf)) < size {
			buf = trimPartialRune(buf)
		}
		if !utf8.Valid(buf) {
			return ReadResult{}, &InputError{Field: "encoding",
				Message: fmt.Sprintf("%s is not valid UTF-8 text in this range; read it with encoding base64", abs)}
		}
		res.Data = string(buf)
	} else {
		res.Data = base64.StdEncoding.EncodeToString(buf)
	}
	res.Length = len(buf)
	res.EOF = in.Offset+int64(len(buf)) >= size
	if size <= MaxHashSize {
		sum, err := e.hashes.sum(abs, info, io.NewSectionReader(f, 0, size))
		if err != nil {
			return ReadResult{}, fmt.Errorf("hash %s: %w", abs, err)
		}
		res.SHA256 = sum
	}
	return res, nil
}

// trimPartialRune drops an incomplete UTF-8 sequence from the end of b.
func trimPartialRune(b []byte) []byte {
	for k := 1; k <= utf8.UTFMax-1 && k <= len(b); k++ {
		c := b[len(b)-k]
		if c < utf8.RuneSelf {
			return b // ASCII: nothing cut
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-k:]) {
				return b[:len(b)-k]
			}
			return b
		}
	}
	return b
}

// StatInput is the input of stat.
type StatInput struct {
	Path string `json:"path"`
}

// StatResult is the output of stat. A path under a root that does not exist
// is not an error: Exists is false. Path is the resolved path, so a
// symlink's target is described.
type StatResult struct {
	Path   string    `json:"path"`
	Exists bool      `json:"exists"`
	Type   string    `json:"type,omitempty"`
	Size   int64     `json:"size"`
	Mode   string    `json:"mode,omitempty"`
	MTime  time.Time `json:"mtime,omitzero"`
	SHA256 string    `json:"sha256,omitempty"` // files up to MaxHashSize
}

// AppendJSON appends what json.Marshal gives for r (a read call answers
// with one on every fs.stat; jsonx.Appender).
func (r StatResult) AppendJSON(b []byte) ([]byte, bool) {
	b = append(b, `{"path":`...)
	b = jsonx.AppendString(b, r.Path)
	b = append(b, `,"exists":`...)
	b = strconv.AppendBool(b, r.Exists)
	if r.Type != "" {
		b = append(b, `,"type":`...)
		b = jsonx.AppendString(b, r.Type)
	}
	b = append(b, `,"size":`...)
	b = strconv.AppendInt(b, r.Size, 10)
	if r.Mode != "" {
		b = append(b, `,"mode":`...)
		b = jsonx.AppendString(b, r.Mode)
	}
	if !r.MTime.IsZero() {
		var ok bool
		b = append(b, `,"mtime":`...)
		if b, ok = jsonx.AppendTime(b, r.MTime); !ok {
			return b, false
		}
	}
	if r.SHA256 != "" {
		b = append(b, `,"sha256":`...)
		b = jsonx.AppendString(b, r.SHA256)
	}
	return append(b, '}'), true
}

// Stat describes a file or directory.
func (e *Engine) Stat(ctx context.Context, in StatInput) (StatResult, error) {
	res, _, err := e.stat(in, false)
	return res, err
}

// quickHashSize bounds the file a quick stat hashes itself (larger ones
// are answered quickly only from the hash cache).
const quickHashSize = 64 << 10

// QuickStat is Stat when it needs only bounded work: the path's resolution,
// a stat, and for a regular file an open and either the hash cache or a
// hash of at most quickHashSize bytes. A larger file whose hash is not
// remembered is declined (done false), having read nothing, for Stat.
func (e *Engine) QuickStat(ctx context.Context, in StatInput) (res StatResult, done bool, err error) {
	return e.stat(in, true)
}

func (e *Engine) stat(in StatInput, quick bool) (StatResult, bool, error) {
	res, err := e.statPath(in, quick)
	if errors.Is(err, errNotQuick) {
		return StatResult{}, false, nil
	}
	return res, true, err
}

// errNotQuick is a quick stat declining a file it would have to hash.
var errNotQuick = errors.New("not quick")

func (e *Engine) statPath(in StatInput, quick bool) (StatResult, error) {
	abs, info, err := e.Roots.resolveInfo(in.Path, true)
	if err != nil {
		return StatResult{}, err
	}
	v := e.view()
	if info != nil {
		info = v.followed(abs, info)
	} else {
		info, err = v.stat(abs)
		if errors.Is(err, fs.ErrNotExist) {
			return StatResult{Path: abs}, nil
		}
		if err != nil {
			return StatResult{}, fmt.Errorf("stat %s: %w", abs, err)
		}
	}
	res := StatResult{Path: abs, Exists: true, Type: typeOf(info.Mode()), Size: info.Size(),
		Mode: info.Mode().Perm().String(), MTime: info.ModTime().UTC()}
	// A OneDrive file not on this PC is not hashed: reading it would have
	// Windows download it, which a stat does not ask for.
	if info.Mode().IsRegular() && info.Size() <= MaxHashSize && !v.offline(abs, info) {
		// A hash remembered for this file as it is now needs no open, when
		// the stat is the kernel's own (a local filesystem: a network one
		// may answer from an attribute cache, which the open refreshes).
		if freshStat(info) {
			if sha, ok := e.hashes.cached(abs, info); ok {
				res.SHA256 = sha
				return res, nil
			}
		}
		f, err := openRead(abs)
		if err != nil {
			return StatResult{}, fmt.Errorf("stat %s: %w", abs, err)
		}
		defer f.Close()
		if info, err = v.opened(f); err != nil {
			return StatResult{}, fmt.Errorf("stat %s: %w", abs, err)
		}
		if !info.Mode().IsRegular() || info.Size() > MaxHashSize {
			// Replaced since the stat: report what was opened, unhashed.
			res.Type, res.Size, res.Mode, res.MTime = typeOf(info.Mode()), info.Size(), info.Mode().Perm().String(), info.ModTime().UTC()
			return res, nil
		}
		if quick && info.Size() > quickHashSize {
			if _, ok := e.hashes.cached(abs, info); !ok {
				return StatResult{}, errNotQuick
			}
		}
		// Only the bytes the fstat counted: a file still being appended
		// to is not hashed past them (nor is the quick attempt's bound).
		if res.SHA256, err = e.hashes.sum(abs, info, io.NewSectionReader(f, 0, info.Size())); err != nil {
			return StatResult{}, fmt.Errorf("hash %s: %w", abs, err)
		}
	}
	return res, nil
}

func bound(field string, v, def, maxV int) (int, error) {
	switch {
	case v < 0:
		return 0, &InputError{Field: field, Message: "must not be negative"}
	case v == 0:
		return def, nil
	}
	return min(v, maxV), nil
}

func encoding(s string) (string, error) {
	switch s {
	case "", EncodingUTF8, "utf-8":
		return EncodingUTF8, nil
	case EncodingBase64:
		return EncodingBase64, nil
	}
	return "", &InputError{Field: "encoding", Message: fmt.Sprintf("%q is not one of utf8, base64", s)}
}

// openRegular opens abs for reading and refuses anything but a regular file
// (a OneDrive file is one: itemView.opened).
func (e *Engine) openRegular(abs string) (*os.File, fs.FileInfo, error) {
	f, err := openRead(abs)
	if err != nil {
		return nil, nil, fmt.Errorf("open %s: %w", abs, err)
	}
	info, err := e.view().opened(f)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("stat %s: %w", abs, err)
	}
	if !info.Mode().IsRegular() {
		f.Close()
		return nil, nil, &InputError{Field: "path", Message: fmt.Sprintf("%s is a %s, not a file", abs, typeOf(info.Mode()))}
	}
	return f, info, nil
}

func hashReader(r io.Reader) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func hashBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
