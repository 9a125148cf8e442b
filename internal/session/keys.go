package session

import (
	"fmt"
	"slices"
	"strings"
)

// keyBytes maps the named keys machine.session_send takes to what a
// terminal sends for them: control characters and VT sequences, which
// both a Unix pty and a Windows pseudo-console understand.
var keyBytes = map[string]string{
	"Enter":     "\r",
	"Tab":       "\t",
	"Backspace": "\x7f",
	"Esc":       "\x1b",
	"Space":     " ",
	"Up":        "\x1b[A",
	"Down":      "\x1b[B",
	"Right":     "\x1b[C",
	"Left":      "\x1b[D",
	"Home":      "\x1b[H",
	"End":       "\x1b[F",
	"Delete":    "\x1b[3~",
	"PageUp":    "\x1b[5~",
	"PageDown":  "\x1b[6~",
	"Ctrl-C":    "\x03",
	"Ctrl-D":    "\x04",
	"Ctrl-Z":    "\x1a",
	"Ctrl-L":    "\x0c",
	"Ctrl-U":    "\x15",
}

// KeyNames lists the named keys, sorted, for the schema's enum.
func KeyNames() []string {
	names := make([]string, 0, len(keyBytes))
	for k := range keyBytes {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// encodeInput is text followed by keys as the bytes a terminal receives.
func encodeInput(text string, keys []string) ([]byte, error) {
	var b strings.Builder
	b.WriteString(text)
	for i, k := range keys {
		s, ok := keyBytes[k]
		if !ok {
			return nil, fmt.Errorf("field \"keys[%d]\": %q is not a key Hearth knows (%s)", i, k, strings.Join(KeyNames(), ", "))
		}
		b.WriteString(s)
	}
	return []byte(b.String()), nil
}
