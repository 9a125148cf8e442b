// Package startuptest builds the startup index for tests of the packages
// that need one (a governor is not built without it).
package startuptest

import (
	"os"
	"testing"

	"github.com/hearth-dev/hearth/internal/risk"
	"github.com/hearth-dev/hearth/internal/startup"
)

// Index is this OS's index of what starts by itself, read from the test
// process's environment, looked at again at every check.
func Index(t testing.TB) *startup.Index {
	t.Helper()
	x, err := startup.New(startup.Options{Env: risk.KnownFolderEnv(os.Getenv), Real: risk.RealPrefix})
	if err != nil {
		t.Fatal(err)
	}
	return x
}
