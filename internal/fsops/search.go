package fsops

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/hearth-dev/hearth/internal/document"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/charlievieth/fastwalk"

	"github.com/hearth-dev/hearth/internal/atomicfile"
)

// SearchInput is the input of search. RespectIgnore is a pointer because
// its default is true.
type SearchInput struct {
	Path            string   `json:"path"`
	Query           string   `json:"query"`
	Limit           int      `json:"limit,omitempty"`
	MaxEntries      int      `json:"max_entries,omitempty"`
	Regex           bool     `json:"regex,omitempty"`
	CaseInsensitive bool     `json:"case_insensitive,omitempty"`
	Include         []string `json:"include,omitempty"`
	Exclude         []string `json:"exclude,omitempty"`
	ContextLines    int      `json:"context_lines,omitempty"`
	RespectIgnore   *bool    `json:"respect_ignore,omitempty"`
	Hidden          bool     `json:"hidden,omitempty"`
	NamesOnly       bool     `json:"names_only,omitempty"`
	Documents       bool     `json:"documents,omitempty"`
}

// SearchMatch is one hit: a name matching the query (Kind "name", Line 0)
// or a line of a file matching it (Kind "content", Line from 1), or a line
// of a document's text (Kind "document", with documents: true), with up to
// context_lines lines before and after it.
type SearchMatch struct {
	Path    string   `json:"path"`
	Kind    string   `json:"kind"`
	Line    int      `json:"line"`
	Preview string   `json:"preview"`
	Before  []string `json:"before,omitempty"`
	After   []string `json:"after,omitempty"`
}

// SearchResult is the output of search: the first Limit matches in path
// order (paths compared by component, as a sorted walk visits them), then
// line order. Truncated says there may be more; TruncatedBy says why
// ("limit": more matches than Limit, or entries past the last one kept were
// not searched; "max_entries": the entry budget ran out, and which entries
// were visited then depends on the parallel walk's timing). Skipped counts
// the entries left out by reason: ignored (ignore files, .git), hidden,
// excluded, not_included, denied, symlink, other (not a regular file),
// large, binary, unreadable, online_only (a OneDrive file not on this PC,
// which reading would download).
type SearchResult struct {
	Path           string         `json:"path"`
	Query          string         `json:"query"`
	Matches        []SearchMatch  `json:"matches"`
	Truncated      bool           `json:"truncated"`
	TruncatedBy    string         `json:"truncated_by,omitempty"`
	EntriesScanned int            `json:"entries_scanned"`
	FilesSearched  int            `json:"files_searched"`
	SkippedLarge   int            `json:"skipped_large"`
	SkippedBinary  int            `json:"skipped_binary"`
	Skipped        map[string]int `json:"skipped"`
}

// Reasons an entry is skipped, as SearchResult.Skipped names them.
const (
	skipIgnored = iota
	skipHidden
	skipExcluded
	skipNotIncluded
	skipDenied
	skipSymlink
	skipOther
	skipLarge
	skipBinary
	skipUnreadable
	skipOnlineOnly
	numSkipReasons
)

var skipNames = [numSkipReasons]string{"ignored", "hidden", "excluded", "not_included", "denied", "symlink", "other", "large", "binary", "unreadable", "online_only"}

// binarySniffBytes is how much of a file is looked at for a NUL byte.
const binarySniffBytes = 8192

// errStopWalk ends a search walk early.
var errStopWalk = errors.New("stop walk")

// Search looks for in.Query in the names and the text of the files under
// in.Path, walking and scanning in parallel (fastwalk's bounded workers,
// GOMAXPROCS of them or at least 4). The walk never follows a symlink (nor
// a junction), prunes denied directories, skips files over
// MaxSearchFileSize and files with a NUL byte in their first 8 KiB, honours
// the ignore files, hidden, include and exclude options, visits at most
// in.MaxEntries entries and answers the first in.Limit matches in a
// deterministic order.
func (e *Engine) Search(ctx context.Context, in SearchInput) (SearchResult, error) {
	s, err := e.newSearch(ctx, in)
	if err != nil {
		return SearchResult{}, err
	}
	info, err := s.view.stat(s.abs)
	if err != nil {
		return SearchResult{}, fmt.Errorf("search %s: %w", s.abs, err)
	}
	if info.IsDir() {
		if s.respectIgnore {
			buf := make([]byte, 0, 4096)
			root := e.searchIgnoreRoot(s.abs, &buf)
			root.patterns = readIgnoreFiles(s.abs, root.comps, root.patterns, &buf)
			s.dirs.Store(s.abs, root)
		}
		conf := fastwalk.Config{Follow: false, ToSlash: false, NumWorkers: fastwalk.DefaultNumWorkers()}
		err = fastwalk.Walk(&conf, s.abs, s.visit)
	} else {
		s.entries.Add(1)
		err = s.searchFile(s.abs, filepath.Base(s.abs), true, s.view.offline(s.abs, info))
	}
	if err != nil && !errors.Is(err, errStopWalk) {
		return SearchResult{}, fmt.Errorf("search %s: %w", s.abs, err)
	}
	return s.result(in.Query), nil
}

// search is one running search. Its walk callback runs on several
// goroutines at once.
type search struct {
	e                     *Engine
	view                  itemView
	abs                   string
	m                     *lineMatcher
	limit, maxEntries     int
	contextLines          int
	include, exclude      []glob
	respectIgnore, hidden bool
	namesOnly             bool
	// documents searches the text of PDF, Office and OpenDocument files
	// (searchDocument); ctx bounds those reads.
	documents bool
	ctx       context.Context
	done      <-chan struct{}
	cancelled func() error

	entries   atomic.Int64
	exhausted atomic.Bool
	files     atomic.Int64
	skipped   [numSkipReasons]atomic.Int64
	dirs      sync.Map // directory path → *ignoreDir
	bufs      sync.Pool

	// beyond is the path after which no entry can make the answer (the
	// limit-th match kept so far), or nil.
	beyond  atomic.Pointer[string]
	mu      sync.Mutex
	matches []SearchMatch
	dropped bool
}

func (e *Engine) newSearch(ctx context.Context, in SearchInput) (*search, error) {
	if in.Query == "" {
		return nil, &InputError{Field: "query", Message: "must not be empty"}
	}
	limit, err := bound("limit", in.Limit, DefaultSearchLimit, MaxSearchLimit)
	if err != nil {
		return nil, err
	}
	maxEntries, err := bound("max_entries", in.MaxEntries, DefaultSearchEntries, MaxSearchEntries)
	if err != nil {
		return nil, err
	}
	if in.ContextLines < 0 || in.ContextLines > MaxSearchContext {
		return nil, &InputError{Field: "context_lines", Message: fmt.Sprintf("must be from 0 to %d", MaxSearchContext)}
	}
	m, err := newLineMatcher(in.Query, in.Regex, in.CaseInsensitive)
	if err != nil {
		return nil, err
	}
	include, err := parseGlobs("include", in.Include)
	if err != nil {
		return nil, err
	}
	exclude, err := parseGlobs("exclude", in.Exclude)
	if err != nil {
		return nil, err
	}
	abs, err := e.Roots.Resolve(in.Path)
	if err != nil {
		return nil, err
	}
	s := &search{
		e: e, view: e.view(), abs: abs, m: m, limit: limit, maxEntries: maxEntries, contextLines: in.ContextLines,
		include: include, exclude: exclude,
		respectIgnore: in.RespectIgnore == nil || *in.RespectIgnore,
		hidden:        in.Hidden, namesOnly: in.NamesOnly, documents: in.Documents, ctx: ctx,
		done: ctx.Done(), cancelled: ctx.Err,
	}
	s.bufs.New = func() any {
		b := make([]byte, 0, 64<<10)
		return &b
	}
	return s, nil
}

func (s *search) skip(reason int, isDir bool) error {
	s.skipped[reason].Add(1)
	if isDir {
		return fs.SkipDir
	}
	return nil
}

// visit is the walk callback.
func (s *search) visit(p string, d fs.DirEntry, err error) error {
	select {
	case <-s.done:
		return s.cancelled()
	default:
	}
	if err != nil {
		if p == s.abs {
			return err
		}
		s.skipped[skipUnreadable].Add(1)
		return nil
	}
	if p == s.abs {
		s.entries.Add(1)
		return nil
	}
	// fastwalk goes into what it sees as exactly a folder; a OneDrive
	// folder (a folder marked irregular) is walked here (walkPlainDir).
	walked := d.Type() == fs.ModeDir
	d = s.view.entry(p, d)
	isDir := d.IsDir()
	if s.e.Roots.isDenied(p) {
		return s.skip(skipDenied, isDir)
	}
	if s.entries.Add(1) > int64(s.maxEntries) {
		s.entries.Add(-1)
		s.exhausted.Store(true)
		return errStopWalk
	}
	name := d.Name()
	if strings.HasPrefix(name, atomicfile.TempPrefix) {
		return nil
	}
	if !s.hidden && name[0] == '.' {
		return s.skip(skipHidden, isDir)
	}
	var parent *ignoreDir
	if s.respectIgnore {
		parent = s.parentDir(p, name)
		if name == ".git" || parent.ignored(name, isDir) { // a directory, or a worktree's file
			return s.skip(skipIgnored, isDir)
		}
	}
	rel := s.rel(p)
	if len(s.exclude) > 0 && anyGlob(s.exclude, rel, name) {
		return s.skip(skipExcluded, isDir)
	}
	if b := s.beyond.Load(); b != nil && comparePaths(p, *b) > 0 {
		s.mu.Lock()
		s.dropped = true
		s.mu.Unlock()
		if isDir {
			return fs.SkipDir
		}
		return nil
	}
	if isDir {
		if s.respectIgnore {
			bufp := s.bufs.Get().(*[]byte)
			s.dirs.Store(p, parent.enter(p, name, bufp))
			s.bufs.Put(bufp)
		}
		if len(s.include) == 0 && s.m.matchName(name) {
			s.add([]SearchMatch{{Path: p, Kind: "name", Preview: name}})
		}
		if !walked && d.Type() == fs.ModeDir {
			return s.walkPlainDir(p)
		}
		return nil
	}
	if len(s.include) > 0 && !anyGlob(s.include, rel, name) {
		return s.skip(skipNotIncluded, false)
	}
	// Only a reparse point that is no link can be a file not on this PC.
	offline := false
	if _, reparse := d.(plainEntry); reparse {
		if info, err := d.Info(); err == nil {
			offline = s.view.offline(p, info)
		}
	}
	return s.searchFile(p, name, d.Type().IsRegular(), offline)
}

// walkPlainDir walks the folder p, which visit has seen, with the same
// callback: fastwalk does not go into a folder whose type has more than
// the folder mark (a OneDrive folder, which Go marks irregular too).
func (s *search) walkPlainDir(p string) error {
	// One worker: this walk runs inside a worker of the walk that met p,
	// and OneDrive folders nest, so a walk of its own per folder with the
	// default workers would multiply goroutines and open folders by depth.
	conf := fastwalk.Config{Follow: false, ToSlash: false, NumWorkers: 1}
	err := fastwalk.Walk(&conf, p, func(q string, d fs.DirEntry, err error) error {
		if q != p {
			return s.visit(q, d, err)
		}
		if err != nil {
			s.skipped[skipUnreadable].Add(1)
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStopWalk) && s.ctx.Err() == nil {
		// The folder went away or cannot be opened: the rest goes on.
		s.skipped[skipUnreadable].Add(1)
		return nil
	}
	return err
}

// searchFile matches the name of the file p and, unless names_only, its
// content; offline is a OneDrive file not on this PC, whose content is not
// read (it would be downloaded).
func (s *search) searchFile(p, name string, regular, offline bool) error {
	var found []SearchMatch
	if s.m.matchName(name) {
		found = append(found, SearchMatch{Path: p, Kind: "name", Preview: name})
	}
	defer func() {
		if len(found) > 0 {
			s.add(found)
		}
	}()
	if s.namesOnly {
		return nil
	}
	if !regular {
		s.skipped[skipSymlink].Add(1)
		return nil
	}
	if offline {
		s.skipped[skipOnlineOnly].Add(1)
		return nil
	}
	if s.documents && document.Detect(name) != "" {
		found = append(found, s.searchDocument(p)...)
		return nil
	}
	bufp := s.bufs.Get().(*[]byte)
	defer s.bufs.Put(bufp)
	data, status := readSearchFile(p, bufp, MaxSearchFileSize)
	if s.skipUnread(status) {
		return nil
	}
	if bytes.IndexByte(data[:min(len(data), binarySniffBytes)], 0) >= 0 {
		s.skipped[skipBinary].Add(1)
		return nil
	}
	s.files.Add(1)
	found = s.scanText(found, p, "content", data)
	return nil
}

// skipUnread counts a file readSearchFile could not give whole (too large, not
// a regular file, unreadable) among the skipped ones, and reports whether
// it was one.
func (s *search) skipUnread(status readStatus) bool {
	switch status {
	case readLarge:
		s.skipped[skipLarge].Add(1)
	case readNotRegular:
		s.skipped[skipOther].Add(1)
	case readFailed:
		s.skipped[skipUnreadable].Add(1)
	case readOffline:
		s.skipped[skipOnlineOnly].Add(1)
	default:
		return false
	}
	return true
}

// scanText appends to found the matches in data, the text of the file p,
// each of kind; past the limit it stops and marks the search cut short.
func (s *search) scanText(found []SearchMatch, p, kind string, data []byte) []SearchMatch {
	s.m.scan(data, func(line, start, end, at int) bool {
		if len(found) > s.limit {
			s.mu.Lock()
			s.dropped = true
			s.mu.Unlock()
			return false
		}
		m := SearchMatch{Path: p, Kind: kind, Line: line, Preview: preview(data[start:end], at-start)}
		if s.contextLines > 0 {
			m.Before, m.After = contextLines(data, start, end, s.contextLines)
		}
		found = append(found, m)
		return true
	})
	return found
}

// MaxSearchDocumentSize is the largest document search reads the text of
// (documents: true); the text searched is at most MaxSearchFileSize.
const MaxSearchDocumentSize = 32 << 20

// searchDocument matches the lines of a document's text (a PDF's pages,
// a workbook's sheets, Word's Markdown) as matches of kind
// "document", Line counting lines of that text. A document that cannot
// be read is counted unreadable.
func (s *search) searchDocument(p string) []SearchMatch {
	var buf []byte
	data, status := readSearchFile(p, &buf, MaxSearchDocumentSize)
	if s.skipUnread(status) {
		return nil
	}
	doc, err := s.e.Documents.Read(s.ctx, p, data, document.Options{Need: MaxSearchFileSize})
	if err != nil {
		s.skipped[skipUnreadable].Add(1)
		return nil
	}
	s.files.Add(1)
	text := []byte(doc.Text)
	// A workbook's other sheets: each read as the first was, within the
	// same bound on the text.
	for _, sh := range doc.Sheets[min(1, len(doc.Sheets)):] {
		if len(text) >= MaxSearchFileSize {
			break
		}
		more, err := s.e.Documents.Read(s.ctx, p, data, document.Options{Sheet: sh.Name, Need: MaxSearchFileSize - len(text)})
		if err != nil {
			break
		}
		text = append(append(text, '\n'), more.Text...)
	}
	return s.scanText(nil, p, "document", text)
}

// rel is p relative to the searched directory, slash-separated.
func (s *search) rel(p string) string {
	r := p[len(s.abs):]
	if len(r) > 0 && os.IsPathSeparator(r[0]) {
		r = r[1:]
	}
	return filepath.ToSlash(r)
}

// parentDir returns the state of the directory holding p, which the walk
// stored before it read that directory.
func (s *search) parentDir(p, name string) *ignoreDir {
	dir := p[:len(p)-len(name)]
	if len(dir) > len(s.abs) {
		dir = dir[:len(dir)-1]
	} else {
		dir = s.abs
	}
	if v, ok := s.dirs.Load(dir); ok {
		return v.(*ignoreDir)
	}
	return &ignoreDir{}
}

// add keeps found (one entry's matches) among the answer, keeping at most
// about twice the limit: past it, the matches are sorted, cut to the limit
// and the last one kept becomes the bound past which the walk need not go.
func (s *search) add(found []SearchMatch) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.matches = append(s.matches, found...)
	if len(s.matches) >= s.limit && (s.beyond.Load() == nil || len(s.matches) >= 2*s.limit) {
		s.cut()
		last := s.matches[len(s.matches)-1].Path
		s.beyond.Store(&last)
	}
}

// cut sorts the matches and keeps the first limit of them.
func (s *search) cut() {
	slices.SortFunc(s.matches, compareMatches)
	if len(s.matches) > s.limit {
		clear(s.matches[s.limit:])
		s.matches = s.matches[:s.limit]
		s.dropped = true
	}
}

func (s *search) result(query string) SearchResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cut()
	res := SearchResult{
		Path: s.abs, Query: query, Matches: s.matches,
		EntriesScanned: int(s.entries.Load()), FilesSearched: int(s.files.Load()),
		SkippedLarge: int(s.skipped[skipLarge].Load()), SkippedBinary: int(s.skipped[skipBinary].Load()),
		Skipped: map[string]int{},
	}
	if res.Matches == nil {
		res.Matches = []SearchMatch{}
	}
	for i := range s.skipped {
		if n := s.skipped[i].Load(); n > 0 {
			res.Skipped[skipNames[i]] = int(n)
		}
	}
	switch {
	case s.exhausted.Load():
		res.Truncated, res.TruncatedBy = true, "max_entries"
	case s.dropped:
		res.Truncated, res.TruncatedBy = true, "limit"
	}
	return res
}

func compareMatches(a, b SearchMatch) int {
	if c := comparePaths(a.Path, b.Path); c != 0 {
		return c
	}
	return cmp.Compare(a.Line, b.Line)
}

// comparePaths orders paths component by component, so a directory's
// entries come right after it, as in a sorted depth-first walk.
func comparePaths(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		ca, cb := a[i], b[i]
		if ca == cb {
			continue
		}
		if os.IsPathSeparator(ca) {
			return -1
		}
		if os.IsPathSeparator(cb) {
			return 1
		}
		return cmp.Compare(ca, cb)
	}
	return cmp.Compare(len(a), len(b))
}
