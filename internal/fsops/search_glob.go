package fsops

import (
	"fmt"
	"path"
	"strings"
)

// glob is one include or exclude pattern of a search, matched against the
// slash-separated path of an entry relative to the searched directory. A
// pattern without a slash matches the entry's name at any depth ("*.go");
// one with a slash matches the whole relative path, and "**" stands for any
// number of directories ("src/**/*_test.go", "**/testdata").
type glob struct {
	parts    []string
	nameOnly bool
}

func parseGlobs(field string, patterns []string) ([]glob, error) {
	out := make([]glob, 0, len(patterns))
	for i, p := range patterns {
		where := fmt.Sprintf("%s[%d]", field, i)
		p = strings.TrimPrefix(strings.TrimSuffix(p, "/"), "/")
		if p == "" {
			return nil, &InputError{Field: where, Message: "must not be empty"}
		}
		g := glob{parts: strings.Split(p, "/")}
		g.nameOnly = len(g.parts) == 1 && g.parts[0] != "**"
		for _, part := range g.parts {
			if part == "" {
				return nil, &InputError{Field: where, Message: fmt.Sprintf("%q has an empty path component", patterns[i])}
			}
			if _, err := path.Match(part, ""); err != nil {
				return nil, &InputError{Field: where, Message: fmt.Sprintf("%q is not a valid glob (%v)", patterns[i], err)}
			}
		}
		out = append(out, g)
	}
	return out, nil
}

// anyGlob reports whether rel (slash-separated, relative to the searched
// directory) or its name matches one of globs.
func anyGlob(globs []glob, rel, name string) bool {
	for i := range globs {
		if globs[i].match(rel, name) {
			return true
		}
	}
	return false
}

func (g *glob) match(rel, name string) bool {
	if g.nameOnly {
		ok, _ := path.Match(g.parts[0], name)
		return ok
	}
	return matchParts(g.parts, rel)
}

// matchParts matches pattern components against the components of rel.
func matchParts(parts []string, rel string) bool {
	for len(parts) > 0 {
		if parts[0] == "**" {
			rest := parts[1:]
			if len(rest) == 0 {
				return true
			}
			for {
				if matchParts(rest, rel) {
					return true
				}
				i := strings.IndexByte(rel, '/')
				if i < 0 {
					return false
				}
				rel = rel[i+1:]
			}
		}
		if rel == "" {
			return false
		}
		comp, tail, _ := strings.Cut(rel, "/")
		if ok, _ := path.Match(parts[0], comp); !ok {
			return false
		}
		parts, rel = parts[1:], tail
		if len(parts) == 0 {
			return tail == ""
		}
	}
	return rel == ""
}
