// Package artifacts stores large outputs (spilled command output, large
// detached results) as files under the data directory, indexed in SQLite.
// Artifacts are addressed by unguessable ids, and the model sees only its
// own conversation's (Store.In). Retention prunes old ones (Store.Prune,
// Retention).
package artifacts

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
	"unicode/utf8"

	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/store"
)

// ErrNotFound is returned for an unknown artifact id.
var ErrNotFound = errors.New("artifact not found")

// Store keeps artifacts under Dir.
type Store struct {
	DB  *store.DB
	Dir string
}

// Meta describes one artifact.
type Meta struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	MIME      string    `json:"mime"`
	Size      int64     `json:"size"`
	SHA256    string    `json:"sha256"`
	Source    string    `json:"source"`
	Truncated bool      `json:"truncated"`
	CreatedAt time.Time `json:"created_at"`
}

// Put stores data as a new artifact. truncated records that data is a
// capped prefix of something larger.
func (s *Store) Put(ctx context.Context, route, name, mime, source string, data []byte, truncated bool) (Meta, error) {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return Meta{}, fmt.Errorf("create artifacts directory: %w", err)
	}
	id := primitive.NewID("art")
	file := id + ".bin"
	sum := sha256.Sum256(data)
	tmp := filepath.Join(s.Dir, file+".tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return Meta{}, fmt.Errorf("write artifact: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(s.Dir, file)); err != nil {
		os.Remove(tmp)
		return Meta{}, fmt.Errorf("write artifact: %w", err)
	}
	m := Meta{ID: id, Name: name, MIME: mime, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:]),
		Source: source, Truncated: truncated, CreatedAt: time.Now().UTC()}
	_, err := s.DB.W.ExecContext(ctx, `INSERT INTO artifacts(id, route, name, mime, size, sha256, file, source, truncated, created_at)
		VALUES (?,?,?,?,?,?,?,?,?,?)`, m.ID, route, m.Name, m.MIME, m.Size, m.SHA256, file, m.Source, boolInt(truncated), m.CreatedAt.UnixMilli())
	if err != nil {
		os.Remove(filepath.Join(s.Dir, file))
		return Meta{}, fmt.Errorf("record artifact: %w", err)
	}
	return m, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

const metaCols = `id, name, mime, size, sha256, source, truncated, created_at`

func scanMeta(sc interface{ Scan(...any) error }) (Meta, error) {
	var m Meta
	var tr int
	var created int64
	if err := sc.Scan(&m.ID, &m.Name, &m.MIME, &m.Size, &m.SHA256, &m.Source, &tr, &created); err != nil {
		return Meta{}, err
	}
	m.Truncated = tr != 0
	m.CreatedAt = time.UnixMilli(created).UTC()
	return m, nil
}

// Metadata returns one artifact's metadata, whichever conversation made
// it. It serves operator paths (panel, CLI) and Hearth's own bookkeeping;
// everything done on behalf of the model goes through In.
func (s *Store) Metadata(ctx context.Context, id string) (Meta, error) {
	return s.metadata(ctx, id, "", false)
}

// metadata looks id up, within route's scope when scoped. An artifact of
// another conversation is reported exactly like a nonexistent one, so
// that an id leaked from one conversation proves nothing in another.
func (s *Store) metadata(ctx context.Context, id, route string, scoped bool) (Meta, error) {
	if !primitive.ValidID("art", id) {
		return Meta{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	q, args := `SELECT `+metaCols+` FROM artifacts WHERE id = ?`, []any{id}
	if scoped {
		where, arg := primitive.RouteMatch("route", route)
		q += ` AND ` + where
		args = append(args, arg)
	}
	m, err := scanMeta(s.DB.R.QueryRowContext(ctx, q, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return Meta{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	return m, err
}

// List returns route's newest artifacts first. Request-scoped (anonymous)
// routes see the artifacts of every anonymous request: a local client
// without a conversation id reads back a spill on its next request.
func (s *Store) List(ctx context.Context, route string, limit int) ([]Meta, error) {
	where, arg := primitive.RouteMatch("route", route)
	rows, err := s.DB.R.QueryContext(ctx, `SELECT `+metaCols+` FROM artifacts WHERE `+where+` ORDER BY created_at DESC, id LIMIT ?`, arg, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Meta{}
	for rows.Next() {
		m, err := scanMeta(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// Scope is the artifact store as one conversation sees it: only the
// artifacts List(route) shows exist (primitive.RouteMatch decides, so an
// anonymous request sees every anonymous request's artifacts). An id is an
// unguessable capability, but it can leak through a shared transcript;
// the scope makes a leaked id useless elsewhere.
type Scope struct {
	s     *Store
	route string
}

// In returns the store scoped to route, the calling conversation. Every
// model-facing read by id goes through it.
func (s *Store) In(route string) Scope { return Scope{s: s, route: route} }

// Metadata is Store.Metadata within the scope: another conversation's
// artifact is ErrNotFound.
func (sc Scope) Metadata(ctx context.Context, id string) (Meta, error) {
	return sc.s.metadata(ctx, id, sc.route, true)
}

// ReadRange is Store.ReadRange within the scope.
func (sc Scope) ReadRange(ctx context.Context, id string, offset int64, limit int, encoding string) (Chunk, error) {
	m, err := sc.Metadata(ctx, id)
	if err != nil {
		return Chunk{}, err
	}
	return sc.s.readRange(m, offset, limit, encoding)
}

// Search is Store.Search within the scope.
func (sc Scope) Search(ctx context.Context, id, query string, limit int) ([]Match, bool, error) {
	if query == "" {
		return nil, false, errors.New("query must not be empty")
	}
	m, err := sc.Metadata(ctx, id)
	if err != nil {
		return nil, false, err
	}
	return sc.s.search(m, query, limit)
}

// List is Store.List for the scope's route.
func (sc Scope) List(ctx context.Context, limit int) ([]Meta, error) {
	return sc.s.List(ctx, sc.route, limit)
}

// Chunk is a range read.
type Chunk struct {
	ID         string `json:"id"`
	Offset     int64  `json:"offset"`
	Length     int    `json:"length"`
	Size       int64  `json:"size"`
	EOF        bool   `json:"eof"`
	Encoding   string `json:"encoding"`
	Data       string `json:"data"`
	NextOffset int64  `json:"next_offset,omitempty"`
}

// ReadRange returns up to limit bytes at offset, as UTF-8 text (a range
// cut inside a multi-byte character is shortened to a whole character) or
// base64. Like Metadata it is not scoped to a conversation.
func (s *Store) ReadRange(ctx context.Context, id string, offset int64, limit int, encoding string) (Chunk, error) {
	m, err := s.Metadata(ctx, id)
	if err != nil {
		return Chunk{}, err
	}
	return s.readRange(m, offset, limit, encoding)
}

func (s *Store) readRange(m Meta, offset int64, limit int, encoding string) (Chunk, error) {
	id := m.ID
	if offset < 0 || offset > m.Size {
		return Chunk{}, fmt.Errorf("offset %d is outside the artifact (size %d)", offset, m.Size)
	}
	f, err := os.Open(filepath.Join(s.Dir, m.ID+".bin"))
	if errors.Is(err, fs.ErrNotExist) {
		return Chunk{}, fmt.Errorf("%w: %q", ErrNotFound, id) // pruned since the look-up
	}
	if err != nil {
		return Chunk{}, fmt.Errorf("open artifact %s: %w", id, err)
	}
	defer f.Close()
	buf := make([]byte, min(int64(limit), m.Size-offset))
	n, err := f.ReadAt(buf, offset)
	if err != nil && !errors.Is(err, io.EOF) {
		return Chunk{}, fmt.Errorf("read artifact %s: %w", id, err)
	}
	buf = buf[:n]
	c := Chunk{ID: id, Offset: offset, Size: m.Size, Encoding: encoding}
	if encoding == "base64" {
		c.Data = base64.StdEncoding.EncodeToString(buf)
	} else {
		c.Encoding = "utf8"
		// Do not split a rune at the end of the range.
		if offset+int64(n) < m.Size {
			for cut := 0; cut < utf8.UTFMax && len(buf) > 0 && !utf8.Valid(buf); cut++ {
				buf = buf[:len(buf)-1]
			}
		}
		c.Data = string(bytes.ToValidUTF8(buf, []byte("\uFFFD")))
	}
	c.Length = len(buf)
	c.EOF = offset+int64(len(buf)) >= m.Size
	if !c.EOF {
		c.NextOffset = offset + int64(len(buf))
	}
	return c, nil
}

// Match is one search hit.
type Match struct {
	Offset int64  `json:"offset"`
	Line   int    `json:"line"`
	Text   string `json:"text"`
}

// Search finds query in an artifact, returning up to limit matching
// lines. Like Metadata it is not scoped to a conversation.
func (s *Store) Search(ctx context.Context, id, query string, limit int) ([]Match, bool, error) {
	if query == "" {
		return nil, false, errors.New("query must not be empty")
	}
	m, err := s.Metadata(ctx, id)
	if err != nil {
		return nil, false, err
	}
	return s.search(m, query, limit)
}

func (s *Store) search(m Meta, query string, limit int) ([]Match, bool, error) {
	id := m.ID
	data, err := os.ReadFile(filepath.Join(s.Dir, m.ID+".bin"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, fmt.Errorf("%w: %q", ErrNotFound, id) // pruned since the look-up
	}
	if err != nil {
		return nil, false, fmt.Errorf("read artifact %s: %w", id, err)
	}
	out := []Match{}
	q := []byte(query)
	var off int64
	line := 1
	for len(data) > 0 {
		end := bytes.IndexByte(data, '\n')
		var l []byte
		if end < 0 {
			l, data = data, nil
		} else {
			l, data = data[:end], data[end+1:]
		}
		if bytes.Contains(l, q) {
			if len(out) == limit {
				return out, true, nil
			}
			text := l
			if len(text) > 400 {
				text = text[:400]
			}
			out = append(out, Match{Offset: off, Line: line, Text: string(bytes.ToValidUTF8(bytes.TrimRight(text, "\r"), []byte("\uFFFD")))})
		}
		off += int64(len(l)) + 1
		line++
	}
	return out, false, nil
}
