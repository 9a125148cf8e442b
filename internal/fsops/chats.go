package fsops

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hearth-dev/hearth/internal/primitive"
)

// This file is the operator's side of the receipts, for the control
// panel's Changes page: every conversation's changes, their contents for a
// diff, and the operator's "Undo all", "Undo this change" and "Redo". The
// operator's undo is a receipt like any other (op undo), kept with the
// conversation's route and marked with the operator's name and its batch,
// so a Redo is an undo of that batch.

// ChatKey is the key of the page entry route's changes are listed under:
// the route, or primitive.AnonymousRoutePrefix for every request-scoped
// route (they share one scope, as for undo).
func ChatKey(route string) string {
	if primitive.AnonymousRoute(route) {
		return primitive.AnonymousRoutePrefix
	}
	return route
}

// ChatSummary is one conversation that changed files.
type ChatSummary struct {
	Key         string
	First, Last time.Time
	Changes     int
	// FirstPath and FirstOp are the conversation's first change.
	FirstPath, FirstOp string
	FirstCreated       bool
}

// MaxChats bounds the conversations Chats lists.
const MaxChats = 200

// Chats lists the conversations that changed files, the one that changed
// one last first, at most MaxChats.
func (e *Engine) Chats(ctx context.Context) ([]ChatSummary, error) {
	rows, err := e.DB.R.QueryContext(ctx, `SELECT k, MIN(created_at), MAX(created_at), COUNT(DISTINCT c) FROM (
		SELECT CASE WHEN route LIKE ? THEN ? ELSE route END AS k, created_at, COALESCE(call_batch, id) AS c FROM fs_receipts
		WHERE state = 'committed' AND operator IS NULL) GROUP BY k ORDER BY MAX(created_at) DESC LIMIT ?`,
		primitive.AnonymousRoutePrefix+"%", primitive.AnonymousRoutePrefix, MaxChats)
	if err != nil {
		return nil, fmt.Errorf("list conversations that changed files: %w", err)
	}
	var out []ChatSummary
	for rows.Next() {
		var c ChatSummary
		var first, last int64
		if err := rows.Scan(&c.Key, &first, &last, &c.Changes); err != nil {
			rows.Close()
			return nil, fmt.Errorf("list conversations that changed files: %w", err)
		}
		c.First, c.Last = time.UnixMilli(first), time.UnixMilli(last)
		out = append(out, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list conversations that changed files: %w", err)
	}
	for i := range out {
		cond, arg := primitive.RouteMatch("route", out[i].Key)
		var existed bool
		err := e.DB.R.QueryRowContext(ctx, `SELECT path, op, existed_before FROM fs_receipts
			WHERE `+cond+` AND state = 'committed' AND operator IS NULL ORDER BY created_at, rowid LIMIT 1`, arg).
			Scan(&out[i].FirstPath, &out[i].FirstOp, &existed)
		if err != nil {
			return nil, fmt.Errorf("first change of a conversation: %w", err)
		}
		out[i].FirstCreated = !existed
	}
	return out, nil
}

// ChatChange is one receipt as the Changes page shows it. Pre and Post are
// the file's SHA-256 before and after ("" when it did not exist); Kept
// says the copy of the content before is still there (a change whose
// receipt retention removed is not listed at all).
type ChatChange struct {
	ID, Path, Op       string
	At                 time.Time
	Existed            bool
	Pre, Post          string
	PriorSize          int64
	UndoneBy, Undoes   string
	Operator, Batch    string
	FutureID           string
	Kept               bool
	CreatedFile, Moved bool
	// Action is the file operation (move, copy, mkdir, trash, restore,
	// rmdir; "" for a write, patch or undo of content), From where the
	// item was before, Dir that it is a folder, CallBatch the call that
	// did several items at once (one change on the page), Bin where a
	// trash put the item ("" when not known).
	Action, From, CallBatch, Bin string
	Dir                          bool
}

// MaxChatChanges bounds the changes of one conversation the page reads.
const MaxChatChanges = 5000

// ChatChanges lists the changes of the conversation key (ChatKey), oldest
// first, at most MaxChatChanges (the newest); the operator's undos of them
// are among them.
func (e *Engine) ChatChanges(ctx context.Context, key string) ([]ChatChange, error) {
	cond, arg := primitive.RouteMatch("route", key)
	rows, err := e.DB.R.QueryContext(ctx, `SELECT * FROM (
		SELECT id, path, op, created_at, existed_before, COALESCE(pre_sha256, ''), COALESCE(post_sha256, ''), prior_size,
		  COALESCE(undone_by, ''), COALESCE(undoes, ''), COALESCE(operator, ''), COALESCE(batch, ''), COALESCE(future_id, ''),
		  prior_sha256 IS NOT NULL OR prior_file IS NOT NULL OR prior IS NOT NULL OR existed_before = 0 OR action IS NOT NULL,
		  COALESCE(action, ''), COALESCE(from_path, ''), COALESCE(call_batch, ''), COALESCE(bin_path, ''), is_dir, rowid AS seq
		FROM fs_receipts WHERE `+cond+` AND state = 'committed' ORDER BY created_at DESC, seq DESC LIMIT ?)
		ORDER BY 4, seq`, arg, MaxChatChanges)
	if err != nil {
		return nil, fmt.Errorf("list a conversation's changes: %w", err)
	}
	defer rows.Close()
	var out []ChatChange
	for rows.Next() {
		var c ChatChange
		var at int64
		if err := rows.Scan(&c.ID, &c.Path, &c.Op, &at, &c.Existed, &c.Pre, &c.Post, &c.PriorSize,
			&c.UndoneBy, &c.Undoes, &c.Operator, &c.Batch, &c.FutureID, &c.Kept, &c.Action, &c.From, &c.CallBatch, &c.Bin, &c.Dir, new(int64)); err != nil {
			return nil, fmt.Errorf("list a conversation's changes: %w", err)
		}
		c.At = time.UnixMilli(at)
		c.CreatedFile = c.Action == "" && !c.Existed && c.Post != ""
		c.Moved = c.Action == "" && c.Existed && c.Post == ""
		out = append(out, c)
	}
	return out, rows.Err()
}

// Expired is what retention removed of a conversation's receipts: per
// file, the newest change that can no longer be undone; Unnamed counts the
// removed receipts whose file was not recorded (pruned before Hearth kept
// it).
type Expired struct {
	Paths   map[string]time.Time
	Unnamed int
}

// ExpiredChanges reports the receipts of the conversation key that
// retention removed.
func (e *Engine) ExpiredChanges(ctx context.Context, key string) (Expired, error) {
	cond, arg := primitive.RouteMatch("route", key)
	rows, err := e.DB.R.QueryContext(ctx, `SELECT COALESCE(path, ''), MAX(created_at), COUNT(*) FROM fs_receipts_pruned
		WHERE `+cond+` GROUP BY path`, arg)
	if err != nil {
		return Expired{}, fmt.Errorf("list a conversation's expired changes: %w", err)
	}
	defer rows.Close()
	x := Expired{Paths: map[string]time.Time{}}
	for rows.Next() {
		var p string
		var at int64
		var n int
		if err := rows.Scan(&p, &at, &n); err != nil {
			return Expired{}, fmt.Errorf("list a conversation's expired changes: %w", err)
		}
		if p == "" {
			x.Unnamed += n
			continue
		}
		x.Paths[p] = time.UnixMilli(at)
	}
	return x, rows.Err()
}

// Content returns the content whose SHA-256 is sha, when Hearth can find
// it and it is at most max bytes: a kept undo copy (inline, or spilled),
// else the file at path if it has that hash now. ok is false otherwise.
func (e *Engine) Content(ctx context.Context, path, sha string, max int64) (data []byte, ok bool, err error) {
	if sha == "" {
		return nil, false, nil
	}
	var size int64
	err = e.DB.R.QueryRowContext(ctx, `SELECT size, CASE WHEN size <= ? THEN data END FROM fs_priors WHERE sha256 = ?`, max, sha).Scan(&size, &data)
	switch {
	case err == nil && size > max:
		return nil, false, nil
	case err == nil:
		if data == nil {
			data = []byte{}
		}
		return data, true, nil
	case !errors.Is(err, sql.ErrNoRows):
		return nil, false, fmt.Errorf("read an undo copy: %w", err)
	}
	var spill string
	err = e.DB.R.QueryRowContext(ctx, `SELECT prior_file FROM fs_receipts WHERE pre_sha256 = ? AND prior_file IS NOT NULL AND prior_size <= ? LIMIT 1`, sha, max).Scan(&spill)
	if err == nil && filepath.Base(spill) == spill {
		if data, err := os.ReadFile(filepath.Join(e.SpillDir, spill)); err == nil && hashBytes(data) == sha {
			return data, true, nil
		}
	} else if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, false, fmt.Errorf("find an undo copy: %w", err)
	}
	if path == "" {
		return nil, false, nil
	}
	// A OneDrive file not on this PC is not read to show a change: that
	// would have Windows download it.
	v := e.view()
	if info, err := v.stat(path); err != nil || !info.Mode().IsRegular() || info.Size() > max || v.offline(path, info) {
		return nil, false, nil
	}
	data, err = os.ReadFile(path)
	if err != nil || hashBytes(data) != sha {
		return nil, false, nil
	}
	return data, true, nil
}

// ChatContents returns the kept copies (stored inline, at most max bytes
// each) that the receipts of the conversation key refer to, by SHA-256:
// what the page needs for most of its diffs, in one query.
func (e *Engine) ChatContents(ctx context.Context, key string, max int64) (map[string][]byte, error) {
	cond, arg := primitive.RouteMatch("route", key)
	rows, err := e.DB.R.QueryContext(ctx, `SELECT sha256, data FROM fs_priors WHERE size <= ? AND sha256 IN (
		SELECT prior_sha256 FROM fs_receipts WHERE `+cond+` AND prior_sha256 IS NOT NULL)`, max, arg)
	if err != nil {
		return nil, fmt.Errorf("read a conversation's undo copies: %w", err)
	}
	defer rows.Close()
	out := map[string][]byte{}
	for rows.Next() {
		var sha string
		var data []byte
		if err := rows.Scan(&sha, &data); err != nil {
			return nil, fmt.Errorf("read a conversation's undo copies: %w", err)
		}
		if data == nil {
			data = []byte{}
		}
		out[sha] = data
	}
	return out, rows.Err()
}

// Outcomes of one file in an UndoReport.
const (
	OutcomeRestored  = "restored"  // its earlier content is back
	OutcomeTrashed   = "trashed"   // the chat had created it: moved to the trash
	OutcomeUnchanged = "unchanged" // already as it was before the chat
	OutcomeChanged   = "changed"   // changed since (skipped, not touched)
	OutcomeFailed    = "failed"    // could not be put back (not touched)
)
