package jsonx

import (
	"fmt"
	"sort"
	"strings"
)

// Decoded JSON values (the any trees that encoding/json produces:
// map[string]any, []any and scalars) are rewritten here, each node named
// by its position. The dispatcher resolves $future references with
// RewriteTree and recipes substitute ${name} parameters with it.

// TreeVisit is called for every node of the tree, parents before children.
// Returning replaced true puts out in the node's place and skips its
// children; false descends into a map or slice (and keeps a scalar).
type TreeVisit func(at string, v any) (out any, replaced bool, err error)

// RewriteTree returns a copy of v with fn applied to every node; v is not
// modified. at is the root's position ("" for none); a map entry's
// position is at.key (or key at the root) and a slice element's at[i].
// Map keys are visited in sorted order, so the first error is the same on
// every run.
func RewriteTree(v any, at string, fn TreeVisit) (any, error) {
	out, replaced, err := fn(at, v)
	if err != nil || replaced {
		return out, err
	}
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		m := make(map[string]any, len(t))
		for _, k := range keys {
			nv, err := RewriteTree(t[k], TreeKey(at, k), fn)
			if err != nil {
				return nil, err
			}
			m[k] = nv
		}
		return m, nil
	case []any:
		s := make([]any, len(t))
		for i, e := range t {
			nv, err := RewriteTree(e, fmt.Sprintf("%s[%d]", at, i), fn)
			if err != nil {
				return nil, err
			}
			s[i] = nv
		}
		return s, nil
	}
	return v, nil
}

// TreeKey is the position of key k in the map at position at.
func TreeKey(at, k string) string {
	if at == "" {
		return k
	}
	return at + "." + k
}

// GetPath walks a dotted path ("result.stdout.text") in a decoded JSON
// value; numeric parts index arrays. A missing key, an index out of range or a
// step into a scalar gives nil.
func GetPath(v any, path string) any {
	for _, p := range strings.Split(path, ".") {
		switch m := v.(type) {
		case map[string]any:
			v = m[p]
		case []any:
			var i int
			if _, err := fmt.Sscanf(p, "%d", &i); err != nil || i < 0 || i >= len(m) {
				return nil
			}
			v = m[i]
		default:
			return nil
		}
	}
	return v
}
