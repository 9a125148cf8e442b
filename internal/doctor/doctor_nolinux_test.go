//go:build !linux && !windows

package doctor

import "testing"

// noOpenDuringDoctor has no portable way to watch opens off Linux; it runs
// doctor and checks only that it passes.
func noOpenDuringDoctor(t *testing.T, home, file string) {
	t.Helper()
	if out, code := doctorCLI(t, home); code != 0 {
		t.Fatalf("doctor: exit %d\n%s", code, out)
	}
}
