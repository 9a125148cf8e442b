package govern

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"time"

	"github.com/hearth-dev/hearth/internal/callpath"
	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/risk"
	"github.com/hearth-dev/hearth/internal/store"
)

// Admission by the risk table (internal/risk): which case a call is, and
// so whether the mode runs it, asks the operator first or refuses it.

// places returns the persistence table: the Governor's, or this OS's
// from the process environment when none was given.
func (g *Governor) places() *risk.Places {
	g.placesOnce.Do(func() {
		if g.Places == nil {
			g.Places = risk.NewPlaces(os.Getenv)
		}
	})
	return g.Places
}

// writes returns the allowlist of ordinary writes: the Governor's, or
// this OS's from the process environment when none was given.
func (g *Governor) writes() *risk.Writes {
	g.writesOnce.Do(func() {
		if g.Writes == nil {
			g.Writes = risk.NewWrites(risk.KnownFolderEnv(os.Getenv), risk.RealPrefix)
		}
	})
	return g.Writes
}

// rows returns the risk table's rows Admit decides by.
func (g *Governor) rows() risk.Table {
	if g.Rows != nil {
		return g.Rows
	}
	return risk.Rows
}

// classify picks a's case in the risk table for mode, sets a.Case,
// a.Subject and a.Said, and returns the case. A primitive without a row
// is the unlisted case, which asks.
func (g *Governor) classify(ctx context.Context, mode string, a *callpath.Admission) (risk.Case, error) {
	name := a.Spec.Name()
	kind, ok := g.rows().KindOf(name)
	id := risk.CaseUnlisted
	if ok {
		var err error
		if id, err = g.caseOf(ctx, mode, kind, a); err != nil {
			return risk.Case{}, err
		}
	}
	if a.Spec.NeedsPermit != nil && a.Spec.NeedsPermit(a.Input) && risk.CaseOf(id).Verdict(mode) == risk.Runs {
		// A primitive may declare input that needs a permit wherever
		// anything runs. UI fallback input is its own case (caseOf);
		// any other such input is a case the table does not list, which
		// asks.
		id = risk.CaseUnlisted
	}
	a.Case = string(id)
	if a.Said == "" {
		a.Said = saidOf(id, name)
	}
	return risk.CaseOf(id), nil
}

// caseOf is the case of a call of a primitive of kind.
func (g *Governor) caseOf(ctx context.Context, mode string, kind risk.Kind, a *callpath.Admission) (risk.CaseID, error) {
	switch kind {
	case risk.KindRead:
		return risk.CaseRead, nil
	case risk.KindControl:
		return risk.CaseControl, nil
	case risk.KindSeveral:
		return risk.CaseSeveral, nil
	case risk.KindRecords:
		return risk.CaseRecords, nil
	case risk.KindRecipe:
		return risk.CaseRecipe, nil
	case risk.KindKill:
		return risk.CaseKill, nil
	case risk.KindClipboardSet:
		return risk.CaseClipSet, nil
	case risk.KindSession:
		return risk.CaseSession, nil
	case risk.KindSee:
		// The approval is kept per primitive: seeing the screen does not
		// allow reading the clipboard.
		a.Subject = a.Spec.Name()
		if primitive.AnonymousRoute(a.Route) {
			return risk.CaseSee, nil
		}
		granted, err := g.granted(ctx, a.Route, risk.CaseSee, a.Subject)
		if err != nil || !granted {
			return risk.CaseSee, err
		}
		return risk.CaseSeeOK, nil
	case risk.KindFileWrite:
		return g.writeCase(ctx, a)
	case risk.KindSessionStart:
		return risk.CaseExec, nil
	case risk.KindExec:
		if mode != risk.ModeAsk {
			// The verdicts of both cases agree outside ask mode.
			return risk.CaseExec, nil
		}
		allowed, changed, err := g.programsAllowed(ctx, a)
		if err != nil {
			return "", err
		}
		if allowed {
			return risk.CaseAllowed, nil
		}
		if changed != "" {
			// The card names the file: "… changed since you chose Always allow".
			a.Subject, a.Said = changed, SaidPinChanged
		}
		return risk.CaseExec, nil
	case risk.KindOpen:
		return g.openCase(ctx, a)
	case risk.KindUI:
		if a.Spec.NeedsPermit != nil && a.Spec.NeedsPermit(a.Input) {
			return risk.CaseFallback, nil
		}
		t, err := g.target(ctx, a)
		if err != nil {
			return "", err
		}
		return g.appCase(ctx, a, t)
	}
	return risk.CaseUnlisted, nil
}

// openCase is the case of a ui.open call: a program or script is an exec;
// an app is asked about once per app per conversation (every time for a
// console), as a UI call into it; a document, folder or web address once
// per conversation, the approval kept for the primitive.
func (g *Governor) openCase(ctx context.Context, a *callpath.Admission) (risk.CaseID, error) {
	t, err := g.target(ctx, a)
	if err != nil {
		return "", err
	}
	switch {
	case t.Program:
		if len(t.Paths) > 0 {
			a.Subject = t.Paths[0]
		}
		return risk.CaseExec, nil
	case t.App != "":
		return g.appCase(ctx, a, t)
	}
	a.Subject = a.Spec.Name()
	if primitive.AnonymousRoute(a.Route) {
		return risk.CaseOpen, nil
	}
	granted, err := g.granted(ctx, a.Route, risk.CaseOpen, a.Subject)
	if err != nil || !granted {
		return risk.CaseOpen, err
	}
	return risk.CaseOpenOK, nil
}

// appCase is the case of a call that drives (or opens) the app t names.
func (g *Governor) appCase(ctx context.Context, a *callpath.Admission, t primitive.Target) (risk.CaseID, error) {
	a.Subject = t.App
	switch {
	case t.Console:
		return risk.CaseUIConsole, nil
	case t.App == "":
		// An app not known before the call runs cannot be allowed
		// once for the conversation: the call asks on its own.
		return risk.CaseUIApp, nil
	}
	granted, err := g.granted(ctx, a.Route, risk.CaseUIApp, t.App)
	if err != nil {
		return "", err
	}
	if granted {
		return risk.CaseUIGranted, nil
	}
	return risk.CaseUIApp, nil
}

// target asks the primitive what a would act on.
func (g *Governor) target(ctx context.Context, a *callpath.Admission) (primitive.Target, error) {
	if a.Spec.Target == nil {
		return primitive.Target{}, nil
	}
	t, err := a.Spec.Target(ctx, a.Route, a.Input)
	if err != nil {
		return t, fmt.Errorf("find what %s would act on: %w", a.Spec.Name(), err)
	}
	return t, nil
}

// granted reports whether the operator allowed subject (an app, a
// primitive) in the conversation route: approved a permit of a call of
// case there that named it.
func (g *Governor) granted(ctx context.Context, route string, c risk.CaseID, subject string) (bool, error) {
	ok, err := g.approvedIn(ctx, route, c, subject)
	if err != nil {
		return false, fmt.Errorf("look up the operator's approval of %s in this conversation: %w", subject, err)
	}
	return ok, nil
}

// saidOf is what a call of case id would do, completing "ChatGPT wants
// to …", when nothing more particular was found.
func saidOf(id risk.CaseID, name string) string {
	switch id {
	case risk.CaseExec, risk.CaseAllowed:
		return "run a program"
	case risk.CaseUIApp, risk.CaseUIGranted:
		return "use an app's window"
	case risk.CaseUIConsole:
		return "type into a console, the Run dialog or Explorer, which can run programs"
	case risk.CaseFallback:
		return "click or press keys by screen position"
	case risk.CaseKill:
		return "stop a process"
	case risk.CaseSee, risk.CaseSeeOK:
		if name == "ui.clipboard_get" {
			return "read your clipboard"
		}
		return "see your screen"
	case risk.CaseWrite:
		return "write a file"
	case risk.CaseOpen, risk.CaseOpenOK:
		return "open files and links on this PC"
	}
	return "use " + name
}

// FlaggedWrite is a write that asks in ask mode (one that makes a
// program start by itself, or is not an ordinary file), run without
// asking because the mode trusted it.
type FlaggedWrite struct {
	CommandID string    `json:"command_id"`
	Primitive string    `json:"primitive"`
	Path      string    `json:"path"`
	Said      string    `json:"said"`
	At        time.Time `json:"at"`
}

// Flagged lists the latest n flagged writes, newest first (the Status
// page shows them).
func (g *Governor) Flagged(ctx context.Context, n int) ([]FlaggedWrite, error) {
	rows, err := g.DB.R.QueryContext(ctx, `SELECT command_id, primitive, path, said, at FROM flagged_writes ORDER BY at DESC, command_id LIMIT ?`, n)
	out, err := store.Collect(rows, err, func(r *sql.Rows) (f FlaggedWrite, err error) {
		var at int64
		err = r.Scan(&f.CommandID, &f.Primitive, &f.Path, &f.Said, &at)
		f.At = time.UnixMilli(at).UTC()
		return f, err
	})
	if err != nil {
		return nil, fmt.Errorf("list flagged writes: %w", err)
	}
	return out, nil
}
