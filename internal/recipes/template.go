package recipes

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/hearth-dev/hearth/internal/jsonx"
)

// A recipe step's input is JSON whose string values may hold ${name}
// placeholders ($${ writes a literal ${). Substitution works on the decoded
// value, one string at a time, so a parameter value is only ever data
// inside the string it replaces: it cannot end that string, add a field,
// become another argv element or choose the primitive.

var paramName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// expand replaces the placeholders of s with fn(name).
func expand(s string, fn func(name string) (string, error)) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "$${"):
			b.WriteString("${")
			i += 3
		case strings.HasPrefix(s[i:], "${"):
			end := strings.IndexByte(s[i+2:], '}')
			if end < 0 {
				return "", fmt.Errorf("unterminated placeholder %q (write $${ for a literal ${)", s[i:])
			}
			name := s[i+2 : i+2+end]
			if !paramName.MatchString(name) {
				return "", fmt.Errorf("placeholder ${%s}: a parameter name is letters, digits and _ (not starting with a digit), at most 64", name)
			}
			v, err := fn(name)
			if err != nil {
				return "", err
			}
			b.WriteString(v)
			i += 2 + end + 1
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String(), nil
}

// walkStrings applies fn to every string value of v (decoded JSON), with
// its position, and returns the rebuilt value. Object keys are never
// templates: a key containing "${" is an error.
func walkStrings(v any, at string, fn func(at, s string) (string, error)) (any, error) {
	return jsonx.RewriteTree(v, at, func(at string, v any) (any, bool, error) {
		switch t := v.(type) {
		case string:
			out, err := fn(at, t)
			return out, true, err
		case map[string]any:
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if strings.Contains(k, "${") {
					return nil, false, fmt.Errorf("%s: placeholders are allowed only inside string values, not in keys", jsonx.TreeKey(at, k))
				}
			}
		}
		return nil, false, nil
	})
}

// placeholders returns the parameter names v uses, each with the first
// position using it, or an error naming a malformed placeholder.
func placeholders(v any, at string) (map[string]string, error) {
	names := map[string]string{}
	_, err := walkStrings(v, at, func(pos, s string) (string, error) {
		_, err := expand(s, func(name string) (string, error) {
			if _, ok := names[name]; !ok {
				names[name] = pos
			}
			return "", nil
		})
		if err != nil {
			return "", fmt.Errorf("%s: %w", pos, err)
		}
		return s, nil
	})
	return names, err
}
