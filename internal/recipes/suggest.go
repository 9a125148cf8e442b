package recipes

import (
	"context"
	"slices"
	"sort"
	"strings"
)

// Suggestion bounds.
const (
	HistoryWindow    = 1000
	MaxPatternLength = 8
	MaxSuggestions   = 10
)

// Pattern is a repeated contiguous sequence of primitive calls.
type Pattern struct {
	Primitives []string `json:"primitives"`
	Length     int      `json:"length"`
	Count      int      `json:"count"`
	// RecipeReady is set when every primitive may be a recipe step.
	RecipeReady bool `json:"recipe_ready"`
}

// Suggest finds the sequences of at least minLength top-level calls that
// this conversation repeated at least threshold times (non-overlapping),
// keeping only the longest of those with the same count. It never creates
// a recipe.
func (b *Book) Suggest(ctx context.Context, route string, threshold, minLength int) (map[string]any, error) {
	hist, err := b.Events.History(ctx, route, HistoryWindow)
	if err != nil {
		return nil, err
	}
	pats := findPatterns(hist, threshold, minLength)
	for i := range pats {
		ready := true
		for _, p := range pats[i].Primitives {
			ready = ready && b.allowedStep(p)
		}
		pats[i].RecipeReady = ready
	}
	sort.SliceStable(pats, func(i, j int) bool {
		a, c := pats[i], pats[j]
		if a.RecipeReady != c.RecipeReady {
			return a.RecipeReady
		}
		if a.Count*a.Length != c.Count*c.Length {
			return a.Count*a.Length > c.Count*c.Length
		}
		return a.Length > c.Length
	})
	if len(pats) > MaxSuggestions {
		pats = pats[:MaxSuggestions]
	}
	return map[string]any{
		"patterns":     pats,
		"calls_seen":   len(hist),
		"threshold":    threshold,
		"min_length":   minLength,
		"note":         "suggestions only: nothing was created. Turn a recipe_ready pattern into a recipe with recipe.create.",
		"step_allowed": b.names,
	}, nil
}

// findPatterns counts, for every length from minLen to MaxPatternLength,
// the non-overlapping occurrences of each window of hist (windows of one
// repeated primitive, such as polling, are skipped) and returns those seen
// at least threshold times that no longer pattern with at least the same
// count contains.
func findPatterns(hist []string, threshold, minLen int) []Pattern {
	type counted struct {
		prims []string
		count int
	}
	var found []counted
	for l := minLen; l <= MaxPatternLength && l*threshold <= len(hist); l++ {
		count := map[string]int{}
		next := map[string]int{} // first index a new occurrence may start at
		var order []string
		windows := map[string][]string{}
		for i := 0; i+l <= len(hist); i++ {
			w := hist[i : i+l]
			if allSame(w) {
				continue
			}
			key := strings.Join(w, "\x00")
			if i < next[key] {
				continue
			}
			if _, ok := count[key]; !ok {
				order = append(order, key)
				windows[key] = w
			}
			count[key]++
			next[key] = i + l
		}
		for _, k := range order {
			if count[k] >= threshold {
				found = append(found, counted{prims: slices.Clone(windows[k]), count: count[k]})
			}
		}
	}
	var out []Pattern
	for i, p := range found {
		dominated := false
		for j, q := range found {
			if i != j && len(q.prims) > len(p.prims) && q.count >= p.count && containsSeq(q.prims, p.prims) {
				dominated = true
				break
			}
		}
		if !dominated {
			out = append(out, Pattern{Primitives: p.prims, Length: len(p.prims), Count: p.count})
		}
	}
	if out == nil {
		out = []Pattern{}
	}
	return out
}

func allSame(w []string) bool {
	for _, s := range w[1:] {
		if s != w[0] {
			return false
		}
	}
	return true
}

func containsSeq(long, short []string) bool {
	for i := 0; i+len(short) <= len(long); i++ {
		if slices.Equal(long[i:i+len(short)], short) {
			return true
		}
	}
	return false
}
