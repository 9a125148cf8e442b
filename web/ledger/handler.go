// Package ledger is the control panel's Ledger page: the newest entries
// of the host ledger, verification of the live database, and export of an
// evidence bundle that verifies offline (hearth-tray ledger verify FILE).
package ledger

import (
	"bytes"
	"encoding/json"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/govern"
	hledger "github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/internal/store"
	"github.com/hearth-dev/hearth/web/ui"
)

// TailSize is how many entries one page shows.
const TailSize = 25

// Handler serves the Ledger page, Verify and Export.
type Handler struct {
	Kit    *ui.Kit
	Ledger *hledger.Ledger
	DB     *store.DB
	// Futures and Gov describe the calls entries name (nil: in general
	// words).
	Futures *dispatch.Dispatcher
	Gov     *govern.Governor
	// Now names export files (nil: time.Now).
	Now func() time.Time
}

// Mount adds the page's routes. Verify and Export are POSTs: both sign a
// checkpoint, and Export records itself so the next export can prove
// consistency from it.
func (h *Handler) Mount(r chi.Router) {
	r.Get("/ledger", h.page)
	r.Post("/ledger/verify", h.verify)
	r.Post("/ledger/export", h.export)
}

// Entry is one ledger entry as the page shows it.
type Entry struct {
	Seq  int64
	Time time.Time
	Kind string
	Data string
	Hash string
	// Summary is the entry in one sentence.
	Summary string
}

// Verification is the outcome of Verify.
type Verification struct {
	Report hledger.Report
	// Failure says where verification failed ("" when it passed).
	Failure string
}

// View is what the page shows.
type View struct {
	Size    int64
	Entries []Entry
	// Verified is set after Verify.
	Verified *Verification
	// Filter, Matched (entries it matches) and Pages page the list.
	Filter  Filter
	Matched int64
	Pages   int
	// Now is when the page was made (times are said relative to it).
	Now time.Time
}

// load reads the page; you is the signed-in user's name (their
// decisions say "You").
func (h *Handler) load(r *http.Request, you string) (View, error) {
	ctx := r.Context()
	size, err := h.Ledger.Size(ctx)
	if err != nil {
		return View{}, err
	}
	f := ParseFilter(r.URL.Query())
	v := View{Size: size, Filter: f, Now: time.Now()}
	kinds := f.kinds()
	if v.Matched, err = h.Ledger.Count(ctx, kinds); err != nil {
		return View{}, err
	}
	v.Pages, v.Filter.Page = ui.PageOf(v.Matched, TailSize, f.Page)
	page, err := h.Ledger.Newest(ctx, kinds, TailSize, (v.Filter.Page-1)*TailSize)
	if err != nil {
		return View{}, err
	}
	d := describer{ctx: ctx, futures: h.Futures, gov: h.Gov, you: you}
	for _, e := range page {
		data := string(e.Data)
		var buf bytes.Buffer
		if json.Indent(&buf, e.Data, "", "  ") == nil {
			data = buf.String()
		}
		v.Entries = append(v.Entries, Entry{Seq: e.Seq, Time: e.Time, Kind: e.Kind, Data: data, Hash: e.Hash(), Summary: d.Summary(e.Kind, e.Data)})
	}
	return v, nil
}

func (h *Handler) page(w http.ResponseWriter, r *http.Request) {
	c := h.Kit.Chrome(r, "Ledger", "ledger")
	v, err := h.load(r, c.Account)
	if err != nil {
		h.Kit.Fail(w, r, "read ledger", err)
		return
	}
	h.Kit.Render(w, r, http.StatusOK, Page(c, v))
}

// verify signs a checkpoint of everything journaled so far, then verifies
// the live database against this Hearth's public key and shows the report
// on the page. A verification failure is the answer the operator asked
// for, so its message (which says where the ledger breaks) is shown, and
// logged as well.
func (h *Handler) verify(w http.ResponseWriter, r *http.Request) {
	if _, err := h.Ledger.Checkpoint(r.Context()); err != nil {
		h.Kit.Fail(w, r, "sign checkpoint before verify", err)
		return
	}
	rep, verr := hledger.VerifyDB(r.Context(), h.DB, hledger.ExpectKey(h.Ledger.PublicKey()))
	c := h.Kit.Chrome(r, "Ledger", "ledger")
	v, err := h.load(r, c.Account)
	if err != nil {
		h.Kit.Fail(w, r, "read ledger", err)
		return
	}
	v.Verified = &Verification{Report: rep}
	if verr != nil {
		h.Kit.Log.Error("panel: ledger verification failed", "err", verr)
		v.Verified.Failure = verr.Error()
	}
	h.Kit.Render(w, r, http.StatusOK, Page(c, v))
}

// export answers the evidence bundle as a download. It is built in
// memory first, so a failure becomes the error page rather than a
// truncated file.
func (h *Handler) export(w http.ResponseWriter, r *http.Request) {
	var buf bytes.Buffer
	if err := h.Ledger.Export(r.Context(), &buf, hledger.SinceLastExport); err != nil {
		h.Kit.Fail(w, r, "export ledger", err)
		return
	}
	now := time.Now
	if h.Now != nil {
		now = h.Now
	}
	name := "hearth-evidence-" + now().Format("20060102-150405") + ".json"
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	if _, err := w.Write(buf.Bytes()); err != nil {
		h.Kit.Log.Debug("panel: write evidence bundle", "err", err)
	}
}
