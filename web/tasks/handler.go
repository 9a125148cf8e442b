// Package tasks is the control panel's Tasks page: the durable jobs and
// the calls still running or done of every conversation, newest first,
// read-only. Each row is one line a person reads ("Job echo — runs at
// 14:05", "ChatGPT ran ls — done") with the chat that asked; the ids and
// raw states are behind each row's "Details". A filter (words, and what
// state) and pages of PerPage rows keep the page short. The list is
// rendered with the page (so it reads without JavaScript) and refreshed
// every 2 s by htmx from a fragment endpoint, which answers 204 while
// nothing changed, so an open Details stays open.
package tasks

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/hearth-dev/hearth/internal/callpath"
	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/jobs"
	"github.com/hearth-dev/hearth/web/ui"
)

// Limit is how many jobs and how many calls the page reads.
const Limit = 100

// PerPage is how many rows one page shows.
const PerPage = 20

// Handler serves the Tasks page and its live fragment.
type Handler struct {
	Kit        *ui.Kit
	Jobs       *jobs.Queue
	Dispatcher *dispatch.Dispatcher
	// Chats labels the conversation of each row.
	Chats ui.Chats
}

// Mount adds the page's routes.
func (h *Handler) Mount(r chi.Router) {
	r.Get("/tasks", h.page)
	r.Get("/tasks/live", h.live)
}

// Row is one job or call.
type Row struct {
	Kind         string // job or future
	ID           string
	Conversation string
	What         string // the job's command or the call's primitive
	State        string
	Detail       string
	CreatedAt    time.Time
	FinishedAt   *time.Time
	// RunAt is when a delayed job runs.
	RunAt *time.Time
	// Outcome is "unknown" for work interrupted by a crash.
	Outcome string
	// StoppedBy says what stopped cancelled work on purpose (the
	// e-stop, a shutdown, task.cancel), "" when nothing did.
	StoppedBy string
	// Chat labels Conversation for people.
	Chat string
}

// Summary is the row in one line: what it is and where it stands.
func (r Row) Summary(now time.Time) string {
	if r.Kind == "job" {
		return "Job " + r.What + " — " + r.StateWords(now)
	}
	return "ChatGPT's call " + Operation(r.What) + " — " + r.StateWords(now)
}

// StateWords says the state for people.
func (r Row) StateWords(now time.Time) string {
	if r.Outcome == "unknown" {
		return "interrupted when Hearth stopped: check what happened, then tell Hearth on the Safety page"
	}
	switch r.State {
	case "permit":
		return "waiting for your approval (Permits page)"
	case dispatch.StateWaiting:
		return "waiting for earlier work to finish"
	case jobs.StateQueued, "pending":
		if r.RunAt != nil && r.RunAt.After(now) {
			return "runs at " + ui.Clock(*r.RunAt, now)
		}
		if r.Kind == "job" {
			return "waiting to run"
		}
		return "still running; the result will come"
	case jobs.StateRunning:
		if r.Kind == "job" {
			return "running"
		}
		return "still running; the result will come"
	case jobs.StateCompleted, "succeeded":
		return "done" + finished(r.FinishedAt, now)
	case jobs.StateFailed:
		return "failed" + finished(r.FinishedAt, now)
	case jobs.StateBlocked:
		return "not allowed"
	case jobs.StateCancelled:
		switch r.StoppedBy {
		case callpath.StoppedByEStop:
			return "stopped by the emergency stop" + finished(r.FinishedAt, now)
		case callpath.StoppedByShutdown:
			return "stopped because Hearth was closing" + finished(r.FinishedAt, now)
		}
		return "cancelled" + finished(r.FinishedAt, now)
	}
	return r.State
}

func finished(t *time.Time, now time.Time) string {
	if t == nil {
		return ""
	}
	return " at " + ui.Clock(*t, now)
}

// Operation says a primitive in a few words ("machine.exec" → "run a
// program").
func Operation(primitive string) string {
	switch primitive {
	case "machine.exec":
		return "to run a program"
	case "machine.session_start":
		return "to start a program to talk to"
	case "machine.session_send":
		return "to type into a program"
	case "machine.host_info":
		return "to look at this computer"
	case "fs.read":
		return "to read a file"
	case "fs.write":
		return "to write a file"
	case "fs.search", "fs.list":
		return "to look through files"
	}
	tool, op, _ := strings.Cut(primitive, ".")
	if op == "" {
		return "(" + tool + ")"
	}
	return "(" + tool + ": " + strings.ReplaceAll(op, "_", " ") + ")"
}

// Active reports whether the row is not finished.
func (r Row) Active() bool {
	switch r.State {
	case jobs.StateQueued, jobs.StateRunning, "pending", "permit", dispatch.StateWaiting:
		return true
	}
	return false
}

// Rows merges jobs and futures, newest first, at most Limit of them.
func Rows(js []jobs.Listed, fs []dispatch.Future) []Row {
	var out []Row
	for _, j := range js {
		var d []string
		if j.ExitCode != nil {
			d = append(d, fmt.Sprintf("exit code %d", *j.ExitCode))
		}
		if j.Attempts > 1 {
			d = append(d, fmt.Sprintf("%d attempts", j.Attempts))
		}
		if j.Outcome != "" {
			d = append(d, "outcome "+j.Outcome)
		}
		if j.Reason != "" {
			d = append(d, j.Reason)
		}
		out = append(out, Row{Kind: "job", ID: j.ID, Conversation: j.Route, What: j.Command, State: j.State,
			Detail: strings.Join(d, "; "), CreatedAt: j.CreatedAt, FinishedAt: j.FinishedAt, RunAt: j.RunAt, Outcome: j.Outcome,
			StoppedBy: j.StoppedBy})
	}
	for _, f := range fs {
		var d []string
		if f.Detached {
			d = append(d, "detached")
		}
		if f.Outcome != "" {
			d = append(d, "outcome "+f.Outcome)
		}
		out = append(out, Row{Kind: "future", ID: f.ID, Conversation: f.Route(), What: f.Primitive, State: f.State,
			Detail: strings.Join(d, "; "), CreatedAt: f.CreatedAt, FinishedAt: f.FinishedAt, Outcome: f.Outcome,
			StoppedBy: f.StoppedBy})
	}
	slices.SortStableFunc(out, func(a, b Row) int { return b.CreatedAt.Compare(a.CreatedAt) })
	if len(out) > Limit {
		out = out[:Limit]
	}
	return out
}

// Filter is what the operator asked to see.
type Filter struct {
	// Q: words every shown row's summary, id or command contains.
	Q string
	// Show is "" (all), "active" or "done".
	Show string
	// Page counts from 1.
	Page int
}

// ParseFilter reads the filter from a query.
func ParseFilter(q url.Values) Filter {
	f := Filter{Q: strings.TrimSpace(q.Get("q")), Show: ui.ParseChoice(q, "show", "active", "done"), Page: ui.ParsePage(q)}
	if len(f.Q) > 200 {
		f.Q = f.Q[:200]
	}
	return f
}

// Query is the filter as a query string (page included when > 1).
func (f Filter) Query(page int) string { return ui.ListQuery(page, "q", f.Q, "show", f.Show) }

// View is one page of rows.
type View struct {
	Rows   []Row
	Filter Filter
	// Total is the number of rows the filter matched; Pages the pages.
	Total, Pages int
	// Version fingerprints the rows shown, for the live poll.
	Version string
	Now     time.Time
}

// Apply filters rows and cuts the page.
func Apply(rows []Row, f Filter, now time.Time) View {
	var match []Row
	words := strings.Fields(strings.ToLower(f.Q))
	for _, r := range rows {
		switch {
		case f.Show == "active" && !r.Active(), f.Show == "done" && r.Active():
			continue
		}
		hay := strings.ToLower(r.Summary(now) + " " + r.ID + " " + r.What + " " + r.Chat)
		ok := true
		for _, w := range words {
			if !strings.Contains(hay, w) {
				ok = false
			}
		}
		if ok {
			match = append(match, r)
		}
	}
	v := View{Filter: f, Total: len(match), Now: now}
	v.Pages, v.Filter.Page = ui.PageOf(int64(len(match)), PerPage, f.Page)
	start := (v.Filter.Page - 1) * PerPage
	v.Rows = match[start:min(start+PerPage, len(match))]
	sum := sha256.New()
	for _, r := range v.Rows {
		fmt.Fprintf(sum, "%s %s %s %s\n", r.ID, r.State, r.Outcome, ui.WhenPtr(r.FinishedAt))
	}
	fmt.Fprintf(sum, "%d %d", v.Total, v.Pages)
	v.Version = hex.EncodeToString(sum.Sum(nil)[:8])
	return v
}

func (h *Handler) load(ctx context.Context, f Filter) (View, error) {
	js, err := h.Jobs.ListAllJobs(ctx, Limit)
	if err != nil {
		return View{}, err
	}
	fs, err := h.Dispatcher.ListAllFutures(ctx, Limit)
	if err != nil {
		return View{}, err
	}
	rows := Rows(js, fs)
	labels := map[string]string{}
	for i := range rows {
		c := rows[i].Conversation
		if _, ok := labels[c]; !ok {
			labels[c] = h.Chats.Label(ctx, c)
		}
		rows[i].Chat = labels[c]
	}
	return Apply(rows, f, time.Now()), nil
}

func (h *Handler) page(w http.ResponseWriter, r *http.Request) {
	v, err := h.load(r.Context(), ParseFilter(r.URL.Query()))
	if err != nil {
		h.Kit.Fail(w, r, "list tasks", err)
		return
	}
	h.Kit.Render(w, r, http.StatusOK, Page(h.Kit.Chrome(r, "Tasks", "tasks"), v))
}

// live answers the list for htmx's poll, or 204 while it is the one the
// page shows (v).
func (h *Handler) live(w http.ResponseWriter, r *http.Request) {
	v, err := h.load(r.Context(), ParseFilter(r.URL.Query()))
	if err != nil {
		h.Kit.Fail(w, r, "list tasks", err)
		return
	}
	if r.URL.Query().Get("v") == v.Version {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	h.Kit.Render(w, r, http.StatusOK, List(v))
}
