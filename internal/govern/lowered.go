package govern

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// A lowered safety setting (the mode switched to trusted, an always-rule
// or a folder rule added, the e-stop reset) is announced until the
// operator has seen it: the panel shows a banner on every page and the
// tray a notification. Each one is noted, in the transaction that makes
// it, in the settings row keyLowered (durable, bounded), and its ledger
// entry says how the control panel session that made it was started
// (field "session": "tray", "control" or "serve"; see WithOrigin), or
// OriginTerminal for the operator's command in a terminal, so that a
// lowering made through a login another program asked for is visible as
// such.

// keyLowered is the settings row that holds the lowerings not yet seen.
const keyLowered = "lowered_unseen"

// maxLowered bounds the lowerings kept unseen; older ones drop off (the
// ledger keeps every one).
const maxLowered = 20

// KindLoweredSeen is the ledger entry of the operator marking the
// lowerings announced so far as seen.
const KindLoweredSeen = "lowered_seen"

// Lowering is one lowered safety setting not yet seen by the operator.
type Lowering struct {
	// Seq is the ledger entry that journaled it.
	Seq int64 `json:"seq"`
	// What says it in plain words: "switched to trusted mode", "added an
	// always-rule for git status", …
	What string `json:"what"`
	// By is the operator name it was recorded under.
	By string `json:"by"`
	// Session is how the control panel session that made it was started
	// ("tray", "control", "serve"); "" when not made in the panel.
	Session string    `json:"session,omitempty"`
	At      time.Time `json:"at"`
}

type originKey struct{}

// OriginTerminal is the origin of an operator's command typed in a
// terminal (hearth-tray safety reset), as the panel's are "tray",
// "control" and "serve".
const OriginTerminal = "terminal"

// WithOrigin returns ctx carrying how the control panel session of the
// request was started ("tray": the tray's Open control panel; "control":
// a login asked through the tray control endpoint by another program;
// "serve": the sign-in link serve printed). Lowering actions journal it.
func WithOrigin(ctx context.Context, origin string) context.Context {
	return context.WithValue(ctx, originKey{}, origin)
}

// OriginOf is the session origin ctx carries ("" for none).
func OriginOf(ctx context.Context) string {
	s, _ := ctx.Value(originKey{}).(string)
	return s
}

// SessionWords says in plain words how a panel session of origin was
// signed in, or that the command was typed in a terminal ("" for an
// unknown origin).
func SessionWords(origin string) string {
	switch origin {
	case "tray":
		return "signed in from the tray icon"
	case "control":
		return "signed in with a link another program asked Hearth for"
	case "serve":
		return "signed in with the link Hearth printed at start"
	case OriginTerminal:
		return "typed in a terminal: hearth-tray safety reset"
	}
	return ""
}

// journalFields adds the session origin of ctx to a lowering's ledger
// data.
func journalFields(ctx context.Context, data map[string]any) map[string]any {
	if o := OriginOf(ctx); o != "" {
		data["session"] = o
	}
	return data
}

// noteLowered journals a lowering (kind, data plus the session origin)
// and keeps it unseen, in tx.
func (g *Governor) noteLowered(ctx context.Context, tx *sql.Tx, kind string, data map[string]any, what, by string) error {
	e, err := g.Ledger.AppendTx(ctx, tx, kind, journalFields(ctx, data))
	if err != nil {
		return err
	}
	var list []Lowering
	if _, err := getSetting(ctx, prepared{db: g.DB, tx: tx}, keyLowered, &list); err != nil {
		return err
	}
	list = append(list, Lowering{Seq: e.Seq, What: what, By: by, Session: OriginOf(ctx), At: e.Time})
	if len(list) > maxLowered {
		list = list[len(list)-maxLowered:]
	}
	return putSetting(ctx, tx, keyLowered, list)
}

// Lowered lists the lowerings the operator has not marked seen, oldest
// first.
func (g *Governor) Lowered(ctx context.Context) ([]Lowering, error) {
	var list []Lowering
	if _, err := getSetting(ctx, prepared{db: g.DB}, keyLowered, &list); err != nil {
		return nil, fmt.Errorf("read lowered safety settings: %w", err)
	}
	return list, nil
}

// SeenLowered marks the lowerings up to ledger entry through as seen
// (those journaled later stay announced), and journals it.
func (o *Decisions) SeenLowered(ctx context.Context, operator string, through int64) error {
	if err := checkOperator(operator); err != nil {
		return err
	}
	return o.G.DB.InTx(ctx, func(tx *sql.Tx) error {
		var list []Lowering
		if _, err := getSetting(ctx, prepared{db: o.G.DB, tx: tx}, keyLowered, &list); err != nil {
			return err
		}
		rest := []Lowering{}
		for _, l := range list {
			if l.Seq > through {
				rest = append(rest, l)
			}
		}
		if err := putSetting(ctx, tx, keyLowered, rest); err != nil {
			return err
		}
		_, err := o.G.Ledger.AppendTx(ctx, tx, KindLoweredSeen, journalFields(ctx, map[string]any{"through": through, "operator": operator}))
		return err
	})
}

// ruleWords is an exec rule as a lowering says it: "git status".
func ruleWords(program string, args []string) string {
	return strings.TrimSpace(program + " " + strings.Join(args, " "))
}
