package govern

import (
	"context"

	"github.com/hearth-dev/hearth/internal/callpath"
	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/risk"
)

// The case of a call that writes files: a persistence place first (it
// names what would happen, and no rule covers it) — one of the table's,
// or a file the startup index names — then the allowlist of ordinary
// writes (documents), then the operator's workspaces for what the
// allowlist leaves out (code, settings, unknown kinds).

// writeCase is the case of a call of kind risk.KindFileWrite; it sets
// a.Paths, and a.Subject and a.Said to the first file that decides it.
// A file operation that asks also gets a.Asks: every item that asks,
// for the card that names them.
func (g *Governor) writeCase(ctx context.Context, a *callpath.Admission) (risk.CaseID, error) {
	t, err := g.target(ctx, a)
	if err != nil {
		return "", err
	}
	a.Paths = t.Paths
	id, err := g.judgeWrites(ctx, t, a)
	if err != nil {
		return "", err
	}
	if (id == risk.CasePersist || id == risk.CaseUnusual) && len(t.Item) == len(t.Files) && len(t.Files) > 0 {
		if a.Asks, err = g.itemAsks(ctx, t); err != nil {
			return "", err
		}
	}
	return id, nil
}

// judgeWrites decides the case of target t and sets a.Subject and
// a.Said to the first file that decides it.
func (g *Governor) judgeWrites(ctx context.Context, t primitive.Target, a *callpath.Admission) (risk.CaseID, error) {
	for _, p := range t.Paths {
		if said, ok := g.persistSaid(p); ok {
			a.Subject, a.Said = p, said
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
		said, covered, err := g.unusualSaid(ctx, writes, f)
		if err != nil {
			return "", err
		}
		if covered {
			id = risk.CaseWriteOK
		}
		if said != "" {
			a.Subject, a.Said = f.Path, said
			return risk.CaseUnusual, nil
		}
	}
	return id, nil
}

// persistSaid says what writing p would make start by itself, when p is
// a persistence place: one of the table's, or a file the startup index
// names (its sentence goes first where both know the file, as it names
// the entry that runs it).
func (g *Governor) persistSaid(p string) (string, bool) {
	if hit, ok := g.Startup.Match(p); ok {
		return hit.Said(p), true
	}
	if pl, ok := g.places().Match(p); ok {
		return pl.Sentence, true
	}
	return "", false
}

// unusualSaid says why the write of f is not ordinary ("" when it is),
// and whether a workspace covers it (then it does not ask); writes is the
// allowlist for the call's files.
func (g *Governor) unusualSaid(ctx context.Context, writes *risk.CallWrites, f risk.FileFacts) (said string, covered bool, err error) {
	why, ok := writes.Classify(f)
	if ok {
		return "", false, nil
	}
	if why.Coverable() {
		if covered, err = g.workspaceCovers(ctx, f.Path); err != nil || covered {
			return "", covered, err
		}
	}
	return why.Said(), false, nil
}

// itemAsks lists the items of file operation t that ask, in the call's
// order, each with the first of its files that asks and why: a
// persistence place, or a file that is not ordinary and no workspace
// covers. It judges each file as judgeWrites does, which stops at the
// first; it runs only for a call that asks.
func (g *Governor) itemAsks(ctx context.Context, t primitive.Target) ([]callpath.Ask, error) {
	var out []callpath.Ask
	writes := g.writes().ForCall()
	for i, f := range t.Files {
		item := t.Item[i]
		if n := len(out); n > 0 && out[n-1].Item == item {
			continue // this item already asks
		}
		said, err := g.fileAsks(ctx, writes, f)
		if err != nil {
			return nil, err
		}
		if said != "" {
			out = append(out, callpath.Ask{Item: item, Path: f.Path, Said: said})
		}
	}
	return out, nil
}

// fileAsks says why writing (or removing) the file f asks, or "" when
// it does not (writes: the allowlist for the call's files).
func (g *Governor) fileAsks(ctx context.Context, writes *risk.CallWrites, f risk.FileFacts) (string, error) {
	if said, ok := g.persistSaid(f.Path); ok {
		return said, nil
	}
	said, _, err := g.unusualSaid(ctx, writes, f)
	return said, err
}
