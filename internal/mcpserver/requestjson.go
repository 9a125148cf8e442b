package mcpserver

import "strings"

// MaxJSONDepth bounds how deeply a request's JSON may nest. Hearth's own
// inputs need a handful of levels; the go-sdk's decoder refuses deep
// nesting in plain text, so Hearth refuses it first, as a JSON-RPC error.
const MaxJSONDepth = 128

// fieldPath renders a path as Hearth's validation messages name fields:
// keys joined with dots, indexes in brackets (args[1], files[0].data).
func fieldPath(p []string) string {
	var b strings.Builder
	for i, e := range p {
		if i > 0 && !strings.HasPrefix(e, "[") {
			b.WriteByte('.')
		}
		b.WriteString(strings.ToValidUTF8(e, "\uFFFD"))
	}
	return b.String()
}
