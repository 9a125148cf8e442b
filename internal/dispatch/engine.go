package dispatch

import (
	"context"
	"encoding/json"

	"github.com/hearth-dev/hearth/internal/primitive"
)

// Some primitives drive the engine that runs them: run.scatter and
// recipe.run submit calls of their own, task.* reads, waits for and
// cancels futures, machine.estop cancels running work. They receive the
// dispatcher per call, through WithEngine, rather than holding it.
//
// Why per call: the dispatcher is built from the registry, and these
// primitives are in that registry. Were they to hold the dispatcher, one
// side would have to be patched after the other was built. Handing them
// the engine with each call breaks the cycle instead: the registry is
// complete before the dispatcher exists, the dispatcher is complete when
// New returns, and no part has a field set later. The engine travels on
// the call's context under a key only this package knows, so the runner
// receives it typed; a runner called outside a dispatcher (nothing in
// Hearth does) is refused as unavailable.

type engineKey struct{}

// withEngine marks ctx as a call run by d.
func withEngine(ctx context.Context, d *Dispatcher) context.Context {
	return context.WithValue(ctx, engineKey{}, d)
}

// WithEngine is primitive.Typed for a runner that drives the engine: it
// decodes the input into I and passes the dispatcher running the call.
func WithEngine[I any](run func(ctx context.Context, e *Dispatcher, call *primitive.Call, in I) (any, error)) func(context.Context, *primitive.Call, json.RawMessage) (any, error) {
	return primitive.Typed(func(ctx context.Context, call *primitive.Call, in I) (any, error) {
		e, ok := ctx.Value(engineKey{}).(*Dispatcher)
		if !ok {
			return nil, primitive.Blocked("unavailable", "this operation runs only through the dispatcher")
		}
		return run(ctx, e, call, in)
	})
}
