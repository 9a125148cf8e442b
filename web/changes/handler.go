// Package changes is the control panel's Changes page: every file each
// ChatGPT conversation (and each local client) created, wrote, patched or
// undid, newest conversation first, with the approval that allowed each
// change and what changed (a unified diff for text, size and SHA-256 for
// binary files); and the operator's "Undo all changes of this chat",
// "Undo this change" and "Redo". An undo touches only a file that is as
// the chat left it, moves a file the chat created to the trash, and says
// file by file what it restored, moved or left alone and why. Each undo is
// journaled in the ledger (intent before, outcome after) under the
// operator's name; the receipts and the files are fsops'.
package changes

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/hearth-dev/hearth/internal/fsops"
	"github.com/hearth-dev/hearth/internal/govern"
	hledger "github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/web/ui"
)

// Bounds of what the page shows.
const (
	// MaxDiffBytes is the largest content shown as a diff.
	MaxDiffBytes = 1 << 20
	// FoldLines is how many lines of a diff show before "Show the whole
	// change".
	FoldLines = 40
	// DiffContext is the unchanged lines shown around each change.
	DiffContext = 3
	// MaxSinceBytes bounds what one page reads to tell whether files are
	// still as the chat left them (fsops.SinceCheck).
	MaxSinceBytes = 32 << 20
	// keptReports bounds the undo reports remembered for the page.
	keptReports = 32
)

// Handler serves the Changes page and its actions.
type Handler struct {
	Kit    *ui.Kit
	FS     *fsops.Engine
	Ledger *hledger.Ledger
	// Approvals names the approval each call ran under.
	Approvals *govern.Decisions
	// Chats labels conversations.
	Chats ui.Chats
	// KeptDays is receipt_retention_days (0: kept until the storage
	// budget needs the room).
	KeptDays int

	mu      sync.Mutex
	reports map[string]Report
	order   []string
}

// Mount adds the page's routes.
func (h *Handler) Mount(r chi.Router) {
	r.Get("/changes", h.page)
	r.Post("/changes/undo-all", h.undoAll)
	r.Post("/changes/undo-one", h.undoOne)
	r.Post("/changes/redo", h.redo)
}

// Report is what an undo or redo did, as the page tells it.
type Report struct {
	Redo  bool
	Batch string
	Files []fsops.FileOutcome
	// ChangedBy labels the other chats that changed skipped files.
	ChangedBy map[string]string
}

// Summary is the report in one sentence.
func (r Report) Summary() string {
	count := func(o string) int {
		n := 0
		for _, f := range r.Files {
			if f.Outcome == o {
				n++
			}
		}
		return n
	}
	var parts []string
	if n := count(fsops.OutcomeRestored); n > 0 {
		parts = append(parts, plural(n, "file")+" put back")
	}
	if n := count(fsops.OutcomeTrashed); n > 0 {
		parts = append(parts, plural(n, "file")+" the chat created moved to the "+TrashName())
	}
	if n := count(fsops.OutcomeChanged) + count(fsops.OutcomeFailed); n > 0 {
		parts = append(parts, plural(n, "file")+" left alone (see below)")
	}
	if n := count(fsops.OutcomeUnchanged); n > 0 {
		parts = append(parts, plural(n, "file")+" already as before")
	}
	what := "Undo"
	if r.Redo {
		what = "Redo"
	}
	if len(parts) == 0 {
		return what + ": nothing to do."
	}
	return what + ": " + strings.Join(parts, "; ") + "."
}

// Line says what happened to one file.
func (r Report) Line(f fsops.FileOutcome, now time.Time) string {
	switch f.Outcome {
	case fsops.OutcomeRestored:
		if r.Redo {
			return "brought back as the chat had left it"
		}
		return "put back as it was before the chat"
	case fsops.OutcomeTrashed:
		return "the chat had created it: moved to the " + TrashName() + " (restore it from there if you need it)"
	case fsops.OutcomeUnchanged:
		if f.Why != "" {
			return "not touched: " + f.Why
		}
		return "not touched: it is already as it was"
	case fsops.OutcomeChanged:
		if f.ChangedBy != "" {
			return "not touched: it changed since — " + r.ChangedBy[f.ChangedBy] + " changed it at " + ui.Clock(f.ChangedAt, now)
		}
		return "not touched: " + f.Why
	}
	return "not touched: " + f.Why
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func (h *Handler) remember(rep Report) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.reports == nil {
		h.reports = map[string]Report{}
	}
	h.reports[rep.Batch] = rep
	h.order = append(h.order, rep.Batch)
	if len(h.order) > keptReports {
		delete(h.reports, h.order[0])
		h.order = h.order[1:]
	}
}

func (h *Handler) report(batch string) (Report, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r, ok := h.reports[batch]
	return r, ok
}

// ChatLink is the page of one conversation.
func ChatLink(key string) string { return "/changes?chat=" + url.QueryEscape(key) }

func (h *Handler) page(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	key := r.URL.Query().Get("chat")
	if key == "" {
		v, err := h.listView(ctx)
		if err != nil {
			h.Kit.Fail(w, r, "list the chats that changed files", err)
			return
		}
		h.Kit.Render(w, r, http.StatusOK, ListPage(h.Kit.Chrome(r, "Changes", "changes"), v))
		return
	}
	v, err := h.ChatView(ctx, key, time.Now())
	if err != nil {
		h.Kit.Fail(w, r, "show a chat's changes", err)
		return
	}
	c := h.Kit.Chrome(r, "Changes", "changes")
	if rep, ok := h.report(r.URL.Query().Get("done")); ok {
		v.Report = &rep
		c.FlashInPage = true // the report card says it, file by file
	}
	h.Kit.Render(w, r, http.StatusOK, ChatPage(c, v))
}

// ListView is the list of conversations.
type ListView struct {
	Chats []ChatRow
	Now   time.Time
}

// ChatRow is one conversation in the list.
type ChatRow struct {
	fsops.ChatSummary
	Label string
}

// FirstChange says the chat's first change in words.
func (c ChatRow) FirstChange() string {
	verb := "changed"
	if c.FirstCreated {
		verb = "created"
	}
	return verb + " " + baseName(c.FirstPath)
}

func (h *Handler) listView(ctx context.Context) (ListView, error) {
	cs, err := h.FS.Chats(ctx)
	if err != nil {
		return ListView{}, err
	}
	v := ListView{Now: time.Now()}
	for _, c := range cs {
		v.Chats = append(v.Chats, ChatRow{ChatSummary: c, Label: h.label(ctx, c.Key, c.First, c.Last, v.Now)})
	}
	return v, nil
}

// label names a conversation: by its calls when Hearth has them, else by
// its changes.
func (h *Handler) label(ctx context.Context, key string, first, last, now time.Time) string {
	if key == "" {
		return "changes made without a chat"
	}
	if strings.HasPrefix(key, "anon:") {
		return "single calls from no named chat"
	}
	// The calls' span widened with the changes' own: a change made by a
	// call that finished at once has no call record, and the label must
	// not say "last active" before a change the page shows.
	if f, l, ok := h.Chats.Span(ctx, key); ok {
		if first.IsZero() || f.Before(first) {
			first = f
		}
		if l.After(last) {
			last = l
		}
	}
	if first.IsZero() {
		return "a chat"
	}
	return ui.ChatSpan(first, last, now)
}

func baseName(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}

// journal records the operator's undo in the ledger before it runs.
func (h *Handler) journal(ctx context.Context, kind string, data map[string]any) error {
	if h.Ledger == nil {
		return nil
	}
	_, err := h.Ledger.Append(ctx, kind, data)
	return err
}

// act runs one undo or redo for the operator: journaled first, then run,
// then its outcome journaled and remembered for the page.
func (h *Handler) act(w http.ResponseWriter, r *http.Request, action string, run func(ctx context.Context, operator, key string) (fsops.UndoReport, error)) {
	key := r.PostFormValue("chat")
	back := ChatLink(key)
	operator, ok := h.Kit.OperatorName(w, r, back)
	if !ok {
		return
	}
	ctx := r.Context()
	intent := map[string]any{"operator": operator, "action": action, "route": key}
	for _, f := range []string{"receipt", "batch", "call_batch"} {
		if v := r.PostFormValue(f); v != "" {
			intent[f] = v
		}
	}
	if err := h.journal(ctx, "changes_undo", intent); err != nil {
		h.Kit.Fail(w, r, "journal the operator's undo", err)
		return
	}
	rep, err := run(ctx, operator, key)
	switch {
	case errors.Is(err, fsops.ErrReceiptNotFound), errors.Is(err, fsops.ErrReceiptExpired):
		h.Kit.Refuse(w, r, back, "That change is no longer kept, so it cannot be undone or redone.")
		return
	case err != nil:
		h.Kit.Fail(w, r, "undo a chat's changes", err)
		return
	}
	files := make([]map[string]any, 0, len(rep.Files))
	for _, f := range rep.Files {
		m := map[string]any{"path": f.Path, "outcome": f.Outcome}
		if f.ReceiptID != "" {
			m["receipt_id"] = f.ReceiptID
		}
		if f.Why != "" {
			m["why"] = f.Why
		}
		files = append(files, m)
	}
	if err := h.journal(ctx, "changes_undone", map[string]any{"operator": operator, "action": action, "route": key, "batch": rep.Batch, "files": files}); err != nil {
		ui.LogError(h.Kit.Log, r, "panel: journal the outcome of the operator's undo", err)
	}
	out := Report{Redo: action == "redo", Batch: rep.Batch, Files: rep.Files, ChangedBy: map[string]string{}}
	for _, f := range rep.Files {
		if f.ChangedBy != "" {
			out.ChangedBy[f.ChangedBy] = "another chat (" + h.label(ctx, f.ChangedBy, f.ChangedAt, f.ChangedAt, time.Now()) + ")"
		}
	}
	h.remember(out)
	h.Kit.Done(w, r, ChatLink(key)+"&done="+url.QueryEscape(rep.Batch)+"#report", operator, out.Summary())
}

func (h *Handler) undoAll(w http.ResponseWriter, r *http.Request) {
	h.act(w, r, "undo_all", func(ctx context.Context, operator, key string) (fsops.UndoReport, error) {
		return h.FS.UndoChat(ctx, operator, key)
	})
}

func (h *Handler) undoOne(w http.ResponseWriter, r *http.Request) {
	h.act(w, r, "undo_one", func(ctx context.Context, operator, key string) (fsops.UndoReport, error) {
		if b := r.PostFormValue("call_batch"); b != "" {
			// One change of the page that is a call's batch of items.
			return h.FS.UndoCallBatch(ctx, operator, key, b)
		}
		return h.FS.UndoChange(ctx, operator, key, r.PostFormValue("receipt"))
	})
}

func (h *Handler) redo(w http.ResponseWriter, r *http.Request) {
	h.act(w, r, "redo", func(ctx context.Context, operator, key string) (fsops.UndoReport, error) {
		return h.FS.Redo(ctx, operator, key, r.PostFormValue("batch"))
	})
}
