// Package fortest guards test-only access (docs/ARCHITECTURE.md, "Rules
// of the house"): a package's seams live in its fortest.go, and the
// …ForTest methods that another package's tests call begin with
// fortest.Must(), so a shipped program that reached one would stop at once
// rather than run with a test's hook.
package fortest

import "testing"

// Must panics unless the running program is a test binary (go test).
func Must() {
	if !testing.Testing() {
		panic("a …ForTest method was called outside a test")
	}
}
