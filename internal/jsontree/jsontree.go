// Package jsontree rewrites decoded JSON values (the any trees that
// encoding/json produces: map[string]any, []any and scalars), naming each
// node by its position. The dispatcher resolves $future references with it
// and recipes substitute ${name} parameters with it.
package jsontree

import (
	"fmt"
	"sort"
	"strings"
)

// Visit is called for every node of the tree, parents before children.
// Returning replaced true puts out in the node's place and skips its
// children; false descends into a map or slice (and keeps a scalar).
type Visit func(at string, v any) (out any, replaced bool, err error)

// Rewrite returns a copy of v with fn applied to every node; v is not
// modified. at is the root's position ("" for none); a map entry's
// position is at.key (or key at the root) and a slice element's at[i].
// Map keys are visited in sorted order, so the first error is the same on
// every run.
func Rewrite(v any, at string, fn Visit) (any, error) {
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
			nv, err := Rewrite(t[k], Key(at, k), fn)
			if err != nil {
				return nil, err
			}
			m[k] = nv
		}
		return m, nil
	case []any:
		s := make([]any, len(t))
		for i, e := range t {
			nv, err := Rewrite(e, fmt.Sprintf("%s[%d]", at, i), fn)
			if err != nil {
				return nil, err
			}
			s[i] = nv
		}
		return s, nil
	}
	return v, nil
}

// Key is the position of key k in the map at position at.
func Key(at, k string) string {
	if at == "" {
		return k
	}
	return at + "." + k
}

// Get walks a dotted path ("result.stdout.text") in a decoded JSON value;
// numeric parts index arrays. A missing key, an index out of range or a
// step into a scalar gives nil.
func Get(v any, path string) any {
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
