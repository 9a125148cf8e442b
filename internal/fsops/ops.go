package fsops

import (
	"bytes"
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
	"strings"
	"time"
	"unicode/utf8"
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
}

// Entry is one directory entry. Size and mtime are the entry's own (a
// symlink's, not its target's).
type Entry struct {
	Name  string    `json:"name"`
	Type  string    `json:"type"` // file, dir, symlink or other
	Size  int64     `json:"size"`
	MTime time.Time `json:"mtime"`
}

// ListResult is the output of list: entries sorted by name.
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
	if info, err := os.Stat(abs); err == nil && !info.IsDir() {
		return ListResult{}, &InputError{Field: "path", Message: fmt.Sprintf("%s is a %s, not a directory; use read or stat", abs, typeOf(info.Mode()))}
	}
	des, err := os.ReadDir(abs)
	if err != nil {
		return ListResult{}, fmt.Errorf("list %s: %w", abs, err)
	}
	res := ListResult{Path: abs, Entries: []Entry{}, Total: len(des)}
	for _, de := range des {
		if len(res.Entries) == limit {
			res.Truncated = true
			break
		}
		ent := Entry{Name: de.Name(), Type: typeOf(de.Type())}
		if info, err := de.Info(); err == nil {
			ent.Size, ent.MTime = info.Size(), info.ModTime().UTC()
			ent.Type = typeOf(info.Mode())
		}
		res.Entries = append(res.Entries, ent)
	}
	return res, nil
}

// ReadInput is the input of read.
type ReadInput struct {
	Path     string `json:"path"`
	Offset   int64  `json:"offset,omitempty"`
	Limit    int    `json:"limit,omitempty"`
	Encoding string `json:"encoding,omitempty"` // utf8 (default) or base64
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
	f, info, err := openRegular(abs)
	if err != nil {
		return ReadResult{}, err
	}
	defer f.Close()
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

// Stat describes a file or directory.
func (e *Engine) Stat(ctx context.Context, in StatInput) (StatResult, error) {
	abs, err := e.Roots.Resolve(in.Path)
	if err != nil {
		return StatResult{}, err
	}
	info, err := os.Stat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return StatResult{Path: abs}, nil
	}
	if err != nil {
		return StatResult{}, fmt.Errorf("stat %s: %w", abs, err)
	}
	res := StatResult{Path: abs, Exists: true, Type: typeOf(info.Mode()), Size: info.Size(),
		Mode: info.Mode().Perm().String(), MTime: info.ModTime().UTC()}
	if info.Mode().IsRegular() && info.Size() <= MaxHashSize {
		f, err := os.Open(abs)
		if err != nil {
			return StatResult{}, fmt.Errorf("stat %s: %w", abs, err)
		}
		defer f.Close()
		if info, err = f.Stat(); err != nil {
			return StatResult{}, fmt.Errorf("stat %s: %w", abs, err)
		}
		if res.SHA256, err = e.hashes.sum(abs, info, f); err != nil {
			return StatResult{}, fmt.Errorf("hash %s: %w", abs, err)
		}
	}
	return res, nil
}

// SearchInput is the input of search.
type SearchInput struct {
	Path       string `json:"path"`
	Query      string `json:"query"`
	Limit      int    `json:"limit,omitempty"`
	MaxEntries int    `json:"max_entries,omitempty"`
}

// SearchMatch is one hit: a name containing the query (Kind "name", Line 0)
// or a line of a file containing it (Kind "content", Line from 1).
type SearchMatch struct {
	Path    string `json:"path"`
	Kind    string `json:"kind"`
	Line    int    `json:"line"`
	Preview string `json:"preview"`
}

// SearchResult is the output of search. Truncated says the walk stopped
// early; TruncatedBy says why ("limit": enough matches; "max_entries": the
// entry budget ran out).
type SearchResult struct {
	Path           string        `json:"path"`
	Query          string        `json:"query"`
	Matches        []SearchMatch `json:"matches"`
	Truncated      bool          `json:"truncated"`
	TruncatedBy    string        `json:"truncated_by,omitempty"`
	EntriesScanned int           `json:"entries_scanned"`
	FilesSearched  int           `json:"files_searched"`
	SkippedLarge   int           `json:"skipped_large"`
	SkippedBinary  int           `json:"skipped_binary"`
}

// errStopWalk ends a search walk early.
var errStopWalk = errors.New("stop walk")

// Search looks for in.Query, case-sensitively, in the names and the text of
// the files under in.Path. The walk does not follow symlinks (nor
// junctions), skips files over MaxSearchFileSize and files that look binary,
// prunes denied directories, visits at most in.MaxEntries entries and stops
// at in.Limit matches.
func (e *Engine) Search(ctx context.Context, in SearchInput) (SearchResult, error) {
	if in.Query == "" {
		return SearchResult{}, &InputError{Field: "query", Message: "must not be empty"}
	}
	limit, err := bound("limit", in.Limit, DefaultSearchLimit, MaxSearchLimit)
	if err != nil {
		return SearchResult{}, err
	}
	maxEntries, err := bound("max_entries", in.MaxEntries, DefaultSearchEntries, MaxSearchEntries)
	if err != nil {
		return SearchResult{}, err
	}
	abs, err := e.Roots.Resolve(in.Path)
	if err != nil {
		return SearchResult{}, err
	}
	res := SearchResult{Path: abs, Query: in.Query, Matches: []SearchMatch{}}
	query := []byte(in.Query)
	stop := func(by string) error {
		res.Truncated, res.TruncatedBy = true, by
		return errStopWalk
	}
	add := func(m SearchMatch) error {
		res.Matches = append(res.Matches, m)
		if len(res.Matches) >= limit {
			return stop("limit")
		}
		return nil
	}
	walkErr := filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil {
			if p == abs {
				return err
			}
			return nil // unreadable entry: skip it, keep walking
		}
		if p != abs && e.Roots.isDenied(p) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if res.EntriesScanned >= maxEntries {
			return stop("max_entries")
		}
		res.EntriesScanned++
		if p != abs && strings.Contains(d.Name(), in.Query) {
			if err := add(SearchMatch{Path: p, Kind: "name", Preview: d.Name()}); err != nil {
				return err
			}
		}
		if !d.Type().IsRegular() || strings.HasPrefix(d.Name(), tempPrefix) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		if info.Size() > MaxSearchFileSize {
			res.SkippedLarge++
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		if bytes.IndexByte(data[:min(len(data), 8192)], 0) >= 0 {
			res.SkippedBinary++
			return nil
		}
		res.FilesSearched++
		line := 1
		for rest := data; len(rest) > 0; line++ {
			var l []byte
			l, rest, _ = bytes.Cut(rest, []byte{'\n'})
			if bytes.Contains(l, query) {
				if err := add(SearchMatch{Path: p, Kind: "content", Line: line, Preview: preview(l, query)}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if walkErr != nil && !errors.Is(walkErr, errStopWalk) {
		return SearchResult{}, fmt.Errorf("search %s: %w", abs, walkErr)
	}
	return res, nil
}

// preview returns the line around the first occurrence of query, at most
// searchPreviewBytes long, cut on character boundaries, as valid UTF-8.
func preview(line, query []byte) string {
	line = bytes.TrimRight(line, "\r")
	if len(line) > searchPreviewBytes {
		at := bytes.Index(line, query)
		start := max(0, min(at-searchPreviewBytes/4, len(line)-searchPreviewBytes))
		for start > 0 && !utf8.RuneStart(line[start]) {
			start--
		}
		end := min(len(line), start+searchPreviewBytes)
		for end < len(line) && !utf8.RuneStart(line[end]) {
			end--
		}
		line = line[start:end]
	}
	return strings.ToValidUTF8(string(line), "\uFFFD")
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

// openRegular opens abs for reading and refuses anything but a regular file.
func openRegular(abs string) (*os.File, fs.FileInfo, error) {
	f, err := os.Open(abs)
	if err != nil {
		return nil, nil, fmt.Errorf("open %s: %w", abs, err)
	}
	info, err := f.Stat()
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
