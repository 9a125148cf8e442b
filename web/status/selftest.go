package status

import (
	"net/http"
	"path/filepath"
	"time"

	"github.com/hearth-dev/hearth/internal/selftestreport"
	"github.com/hearth-dev/hearth/web/ui"
)

// SelfTestSummary is what the Status page shows of the last selftest.
type SelfTestSummary struct {
	// Found is false when no selftest has run on this data directory.
	Found      bool
	FinishedAt time.Time
	Counts     selftestreport.Counts
	// Err is set when the last report could not be read.
	Err string
}

// selfTest reads the last report's summary; the page shows it without the
// underlying error's text, which could name a path.
func (h *Handler) selfTest() SelfTestSummary {
	s, found, err := selftestreport.LastSummary(h.DataDir)
	if err != nil {
		h.Kit.Log.Warn("status page: read the selftest report", "err", err)
		return SelfTestSummary{Err: "the file is damaged or too large; run the selftest again"}
	}
	return SelfTestSummary{Found: found, FinishedAt: s.FinishedAt, Counts: s.Counts}
}

// selfTestReport serves the last report as it was written (it holds no
// machine paths or user data).
func (h *Handler) selfTestReport(w http.ResponseWriter, r *http.Request) {
	rep, err := selftestreport.Read(filepath.Join(h.DataDir, selftestreport.FileName))
	if err != nil {
		ui.WriteProblem(w, r, h.Kit.Log, http.StatusNotFound, ui.ProblemNotFound)
		return
	}
	data, err := selftestreport.Encode(rep)
	if err != nil {
		h.Kit.Fail(w, r, "selftest report", err)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Disposition", `inline; filename="`+selftestreport.FileName+`"`)
	if _, err := w.Write(data); err != nil {
		h.Kit.Log.Debug("status page: write the selftest report", "err", err)
	}
}
