package dispatch

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/hearth-dev/hearth/internal/artifacts"
	"github.com/hearth-dev/hearth/internal/callpath"
	"github.com/hearth-dev/hearth/internal/store"
)

// Arrivals is the one arrival writer: every part whose work arrives in a
// conversation's mailbox (the dispatcher's futures, the job queue's runs,
// the run service's continuations) encodes its terminal envelope with
// Payload and queues it with EnqueueArrival, in the transaction that makes
// the work terminal. It is built before any of them and handed to each at
// construction.
type Arrivals struct {
	// Artifacts stores a payload larger than MaxResultBytes.
	Artifacts *artifacts.Store
	// MaxResultBytes bounds a stored result (max_result_bytes).
	MaxResultBytes int
	Log            *slog.Logger
}

// Payload encodes env, the terminal envelope of the work called id, as the
// payload of an arrival for route. A payload larger than MaxResultBytes is
// stored as an artifact and replaced by a short envelope naming it. It may
// write an artifact, so it must not be called inside a transaction (the
// single write connection would deadlock).
func (d *Arrivals) Payload(ctx context.Context, route, id string, env *Envelope) []byte {
	ctx = context.WithoutCancel(ctx)
	env.FutureID = id
	env.Arrivals = nil
	payload, err := json.Marshal(env)
	if err != nil {
		payload, _ = json.Marshal(ErrorEnvelope(env.Primitive, fmt.Errorf("encode result: %v", err)))
	}
	if len(payload) > d.MaxResultBytes && d.Artifacts != nil {
		meta, aerr := d.Artifacts.Put(ctx, route, id+".json", "application/json", env.Primitive, payload, false)
		if aerr == nil {
			// The error's code and message stay, and what stopped it; its
			// other details (a recipe's per-step results) are in the
			// artifact with the rest.
			var short *ErrorBody
			if env.Error != nil {
				short = &ErrorBody{Code: env.Error.Code, Message: env.Error.Message}
				if by, ok := env.Error.Details[callpath.StoppedByKey]; ok {
					short.Details = map[string]any{callpath.StoppedByKey: by}
				}
			}
			spilled := &Envelope{State: env.State, Primitive: env.Primitive, FutureID: id, Error: short, Artifact: &meta,
				Result: map[string]any{"spilled": true, "note": "result larger than max_result_bytes; read it with artifact.read"}}
			payload, _ = json.Marshal(spilled)
		} else {
			if d.Log != nil {
				d.Log.Error("spill result", "future", id, "err", aerr)
			}
		}
	}
	return payload
}

// EnqueueArrival queues payload (from ArrivalPayload, or a small envelope
// marshalled directly) in route's mailbox as part of tx, so that work
// becomes terminal and its arrival exists in the same commit. It is the one
// way anything reaches a conversation's mailbox.
func EnqueueArrival(ctx context.Context, tx *sql.Tx, route, id string, payload []byte, at time.Time) error {
	return enqueueArrival(ctx, nil, tx, route, id, payload, at)
}

func enqueueArrival(ctx context.Context, db *store.DB, tx *sql.Tx, route, id string, payload []byte, at time.Time) error {
	if strings.HasPrefix(route, AnonymousPrefix) {
		return nil // a request-scoped route has no later request to deliver to
	}
	_, err := txExec(ctx, db, tx, `INSERT INTO arrivals(route, future_id, payload, created_at) VALUES (?,?,?,?)`,
		route, id, string(payload), at.UnixMilli())
	if err != nil {
		return fmt.Errorf("queue arrival of %s: %w", id, err)
	}
	return nil
}
