package govern

import (
	"os"
	"sync"

	"github.com/hearth-dev/hearth/internal/risk"
)

// RuleAllows exposes ruleAllows, with programs told by what they are as
// a Governor tells them, to the tests of what a rule covers.
func RuleAllows(r Rule, u ProgramUse) bool { return ruleAllows(testIdentities(), r, u) }

// testIdentities is the one recogniser of the test binary (reading the
// program folders once).
var testIdentities = sync.OnceValue(func() *risk.Identities { return risk.NewIdentities(os.Getenv) })
