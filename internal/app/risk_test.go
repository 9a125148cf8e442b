package app_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/risk"
)

// TestEveryPrimitiveHasARiskRow: the risk table and the registry agree —
// a registered primitive without a row (or a row for none) fails here —
// and every tool description says what the table decides for the mode.
func TestEveryPrimitiveHasARiskRow(t *testing.T) {
	in := hearthtest.Start(t, nil)
	var names []string
	for _, s := range in.App.Registry.All() {
		names = append(names, s.Name())
	}
	if err := risk.Check(names); err != nil {
		t.Fatal(err)
	}
	c := hearthtest.Connect(t, in.URL, "risk-rows")
	res, err := c.Session.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	line := risk.ModelLine("ask", names)
	for _, tl := range res.Tools {
		if !strings.Contains(tl.Description, line) {
			t.Errorf("tool %s does not say what ask mode does:\n%s", tl.Name, tl.Description)
		}
	}
}
