// Package tasks is the control panel's Tasks page: the durable jobs and
// the futures of every conversation, newest first, read-only. The list is
// rendered with the page (so it reads without JavaScript) and refreshed
// every 2 s by htmx from a fragment endpoint.
package tasks

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/jobs"
	"github.com/hearth-dev/hearth/web/ui"
)

// Limit is how many jobs and how many futures the page shows.
const Limit = 100

// Handler serves the Tasks page and its live fragment.
type Handler struct {
	Kit        *ui.Kit
	Jobs       *jobs.Queue
	Dispatcher *dispatch.Dispatcher
}

// Mount adds the page's routes.
func (h *Handler) Mount(r chi.Router) {
	r.Get("/tasks", h.page)
	r.Get("/tasks/live", h.live)
}

// Row is one job or future.
type Row struct {
	Kind         string // job or future
	ID           string
	Conversation string
	What         string // the job's command or the future's primitive
	State        string
	Detail       string
	CreatedAt    time.Time
	FinishedAt   *time.Time
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
			Detail: strings.Join(d, "; "), CreatedAt: j.CreatedAt, FinishedAt: j.FinishedAt})
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
			Detail: strings.Join(d, "; "), CreatedAt: f.CreatedAt, FinishedAt: f.FinishedAt})
	}
	slices.SortStableFunc(out, func(a, b Row) int { return b.CreatedAt.Compare(a.CreatedAt) })
	if len(out) > Limit {
		out = out[:Limit]
	}
	return out
}

func (h *Handler) load(ctx context.Context) ([]Row, error) {
	js, err := h.Jobs.ListAllJobs(ctx, Limit)
	if err != nil {
		return nil, err
	}
	fs, err := h.Dispatcher.ListAllFutures(ctx, Limit)
	if err != nil {
		return nil, err
	}
	return Rows(js, fs), nil
}

func (h *Handler) page(w http.ResponseWriter, r *http.Request) {
	rows, err := h.load(r.Context())
	if err != nil {
		h.Kit.Fail(w, r, "list tasks", err)
		return
	}
	h.Kit.Render(w, r, http.StatusOK, Page(h.Kit.Chrome(r, "Tasks", "tasks"), rows))
}

func (h *Handler) live(w http.ResponseWriter, r *http.Request) {
	rows, err := h.load(r.Context())
	if err != nil {
		h.Kit.Fail(w, r, "list tasks", err)
		return
	}
	h.Kit.Render(w, r, http.StatusOK, List(rows))
}
