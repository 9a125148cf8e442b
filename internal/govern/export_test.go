package govern

import (
	"os"
	"sync"

	"github.com/hearth-dev/hearth/internal/risk"
)

// RuleAllows exposes ruleCovers, with programs told by what they are as
// a Governor tells them, to the tests of what a rule covers.
func RuleAllows(r Rule, u ProgramUse) bool {
	ok, _ := (&Governor{Identities: testIdentities()}).ruleCovers(r, u)
	return ok
}

// RuleCovers is ruleCovers with the file that changed, and TakePins
// takePins, for the tests of what a rule pins.
func (g *Governor) RuleCovers(r Rule, u ProgramUse) (bool, string) { return g.ruleCovers(r, u) }

// testIdentities is the one recogniser of the test binary (reading the
// program folders once).
var testIdentities = sync.OnceValue(func() *risk.Identities { return risk.NewIdentities(os.Getenv) })
