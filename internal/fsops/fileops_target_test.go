package fsops

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
)

// TestFileOpTargetListsEachPathOnce: a call's Target lists each path it
// changes once, in the order its items name them, while every file of
// every item keeps its facts and its item (a path two items name is
// judged for each).
func TestFileOpTargetListsEachPathOnce(t *testing.T) {
	env := newTestEngine(t)
	a, b := env.path("Downloads", "a.txt"), env.path("Downloads", "b.txt")
	writeFile(t, a, "a")
	writeFile(t, b, "b")
	raw, _ := json.Marshal(FileOpInput{Items: []FileOpItem{{Path: a}, {Path: b}, {Path: a}}})
	tg, err := env.e.fileOpTarget(context.Background(), ActionTrash, raw)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(tg.Paths, []string{a, b}) || len(tg.Files) != 3 || !slices.Equal(tg.Item, []int{0, 1, 2}) {
		t.Fatalf("paths %v, %d files, items %v", tg.Paths, len(tg.Files), tg.Item)
	}
}
