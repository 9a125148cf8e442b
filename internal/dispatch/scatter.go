package dispatch

import (
	"context"
	"encoding/json"
	"fmt"
)

// ScatterCall is one call of a scatter (run.scatter validates and orders
// them): a primitive, its input as decoded JSON in which a reference may
// name another call of the batch by index ({"$future": index}), and its
// dependencies by index and by future id.
type ScatterCall struct {
	Request Request // Route and Spec; Input is built from Fields
	Fields  map[string]any
	After   []int
	Deps    []string
}

// ScatterError is a call of a scatter that could not be submitted.
type ScatterError struct {
	Index int
	// Submitted are the futures of the calls submitted before it.
	Submitted []string
	Err       error
}

func (e *ScatterError) Error() string {
	return fmt.Sprintf("record calls[%d] (earlier calls were submitted: %v): %v", e.Index, e.Submitted, e.Err)
}

// Scatter submits calls as durable futures of their route, in order (every
// call after the calls it names by index), each under a command id derived
// from parent's, as nested work. Index references become future ids. It
// returns the future ids by index and how many calls the gates refused at
// submission (a call that ran and failed at once is not refused, however
// fast it was).
func (d *Dispatcher) Scatter(ctx context.Context, parent string, calls []ScatterCall, order []int) ([]string, int, error) {
	ids := make([]string, len(calls))
	refused := 0
	nctx := WithNested(ctx)
	for _, i := range order {
		c := calls[i]
		deps := append([]string(nil), c.Deps...)
		for _, j := range c.After {
			deps = append(deps, ids[j])
		}
		resolved, err := MapRefs(any(c.Fields), "", func(_ string, r Ref) (any, error) {
			id := r.ID()
			if id == "" {
				n, _ := r.Future.(json.Number)
				j, err := n.Int64()
				if err != nil || j < 0 || int(j) >= len(ids) || ids[j] == "" {
					return nil, &RefError{At: "$future", Msg: fmt.Sprintf("%v is not an earlier call of this scatter", r.Future)}
				}
				id = ids[j]
			}
			return map[string]any{"$future": id, "$path": r.Path}, nil
		})
		if err == nil {
			c.Request.Input, err = json.Marshal(resolved)
		}
		if err != nil {
			return nil, refused, &ScatterError{Index: i, Submitted: nonEmpty(ids), Err: err}
		}
		c.Request.Detach = true
		c.Request.CommandID = ChildCommandID(parent, "call", i)
		id, wasRefused, err := d.EnqueueChecked(nctx, c.Request, deps)
		if wasRefused {
			refused++
		}
		if err != nil {
			return nil, refused, &ScatterError{Index: i, Submitted: nonEmpty(ids), Err: err}
		}
		ids[i] = id
	}
	return ids, refused, nil
}

func nonEmpty(l []string) []string {
	var out []string
	for _, s := range l {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
