package session

import "maps"

// withTerm gives the program TERM=dumb unless the caller set TERM: a model
// reads the output as text, and a dumb terminal keeps programs (Python's
// REPL, shells' line editors) from painting it with colours and cursor
// movements.
func withTerm(env map[string]string) map[string]string {
	for k := range env {
		if k == "TERM" {
			return env
		}
	}
	out := maps.Clone(env)
	if out == nil {
		out = map[string]string{}
	}
	out["TERM"] = "dumb"
	return out
}
