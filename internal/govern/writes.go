package govern

import (
	"context"

	"github.com/hearth-dev/hearth/internal/callpath"
	"github.com/hearth-dev/hearth/internal/risk"
)

// The case of a call that writes files: a persistence place first (it
// names what would happen, and no rule covers it) — one of the table's,
// or a file the startup index names — then the allowlist of ordinary
// writes (documents), then the operator's workspaces for what the
// allowlist leaves out (code, settings, unknown kinds).

// writeCase is the case of a call of kind risk.KindFileWrite; it sets
// a.Paths, and a.Subject and a.Said to the first file that decides it.
func (g *Governor) writeCase(ctx context.Context, a *callpath.Admission) (risk.CaseID, error) {
	t, err := g.target(ctx, a)
	if err != nil {
		return "", err
	}
	a.Paths = t.Paths
	for _, p := range t.Paths {
		// The startup index names the entry that runs the file, so its
		// sentence goes first where both know the file.
		if hit, ok := g.Startup.Match(p); ok {
			a.Subject, a.Said = p, hit.Said(p)
			return risk.CasePersist, nil
		}
		if pl, ok := g.places().Match(p); ok {
			a.Subject, a.Said = p, pl.Sentence
			return risk.CasePersist, nil
		}
	}
	if len(t.Paths) > 0 {
		a.Subject = t.Paths[0]
	}
	id := risk.CaseWrite
	// Each file on its own, the folders on the way to them looked at
	// once for all (a batch's files share them).
	writes := g.writes().ForCall()
	for _, f := range t.Files {
		why, ok := writes.Classify(f)
		if ok {
			continue
		}
		if why.Coverable() {
			covered, err := g.workspaceCovers(ctx, f.Path)
			if err != nil {
				return "", err
			}
			if covered {
				id = risk.CaseWriteOK
				continue
			}
		}
		a.Subject, a.Said = f.Path, why.Said()
		return risk.CaseUnusual, nil
	}
	return id, nil
}
