package recipes

import (
	"context"
	"strings"
	"testing"
	"time"

	hrecipes "github.com/hearth-dev/hearth/internal/recipes"
	"github.com/hearth-dev/hearth/internal/runs"
	"github.com/hearth-dev/hearth/web/ui"
)

func TestRecipesView(t *testing.T) {
	render := func(v View) string {
		var b strings.Builder
		if err := Page(ui.Chrome{Title: "Recipes and runs"}, v).Render(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	html := render(View{})
	if !strings.Contains(html, `data-testid="recipes-empty"`) || !strings.Contains(html, `data-testid="runs-empty"`) {
		t.Error("no empty states")
	}
	html = render(View{
		Recipes: []hrecipes.Summary{{Name: "greet", Description: "say hi", Steps: []string{"machine.exec", "fs.write"}, Params: []string{"who"}, Runs: 2, CreatedAt: time.Now()}},
		Runs:    []runs.RunSummary{{ID: "run_1", State: "open", Objective: "ship it", Version: 3, UpdatedAt: time.Now()}},
	})
	for _, want := range []string{`data-testid="recipe" data-recipe-name="greet"`, "machine.exec → fs.write", `data-testid="run" data-run-id="run_1"`, "ship it"} {
		if !strings.Contains(html, want) {
			t.Errorf("missing %q", want)
		}
	}
	if strings.Contains(html, "<form") {
		t.Error("the recipes page is read-only but has a form")
	}
}
