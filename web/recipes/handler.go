// Package recipes is the control panel's Recipes and runs page: the
// stored recipes and the durable runs, read-only.
package recipes

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	hrecipes "github.com/hearth-dev/hearth/internal/recipes"
	"github.com/hearth-dev/hearth/internal/runs"
	"github.com/hearth-dev/hearth/web/ui"
)

// RunLimit is how many runs the page lists.
const RunLimit = 100

// Handler serves the Recipes and runs page.
type Handler struct {
	Kit     *ui.Kit
	Recipes *hrecipes.Book
	Runs    *runs.Service
}

// Mount adds the page's route.
func (h *Handler) Mount(r chi.Router) {
	r.Get("/recipes", h.page)
}

// View is what the page shows.
type View struct {
	Recipes []hrecipes.Summary
	Runs    []runs.RunSummary
}

func (h *Handler) page(w http.ResponseWriter, r *http.Request) {
	rs, err := h.Recipes.List(r.Context())
	if err != nil {
		h.Kit.Fail(w, r, "list recipes", err)
		return
	}
	rn, err := h.Runs.List(r.Context(), "", RunLimit)
	if err != nil {
		h.Kit.Fail(w, r, "list runs", err)
		return
	}
	h.Kit.Render(w, r, http.StatusOK, Page(h.Kit.Chrome(r, "Recipes and runs", "recipes"), View{Recipes: rs, Runs: rn}))
}
