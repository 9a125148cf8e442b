package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/primitive"
)

// MaxScatter bounds the calls of one scatter.
const MaxScatter = 100

// ScatterFuture is one submitted call.
type ScatterFuture struct {
	Index    int    `json:"index"`
	FutureID string `json:"future_id"`
	Kind     string `json:"kind"`
	State    string `json:"state"`
}

type plannedCall struct {
	index   int
	kind    string
	spec    *primitive.Spec
	fields  map[string]any
	idxDeps []int
	idDeps  []string
}

var futureIDPattern = regexp.MustCompile(`^fut_[a-z2-7]{20}$`)

func scatterErr(i int, field, format string, a ...any) error {
	where := fmt.Sprintf("calls[%d]", i)
	if field != "" {
		where += "." + field
	}
	return primitive.Failed("invalid_input", "run.scatter: %s: %s", where, fmt.Sprintf(format, a...))
}

func (s *Service) scatter(ctx context.Context, e *dispatch.Dispatcher, call *primitive.Call, in struct {
	Calls []json.RawMessage `json:"calls"`
}) (any, error) {
	plan := make([]*plannedCall, len(in.Calls))
	for i, raw := range in.Calls {
		p, err := s.planCall(i, len(in.Calls), raw)
		if err != nil {
			return nil, err
		}
		plan[i] = p
	}
	order, err := topoOrder(plan)
	if err != nil {
		return nil, err
	}
	calls := make([]dispatch.ScatterCall, len(plan))
	for i, p := range plan {
		calls[i] = dispatch.ScatterCall{Request: dispatch.Request{Route: call.Route, Spec: p.spec}, Fields: p.fields, After: p.idxDeps, Deps: p.idDeps}
	}
	futureIDs, refused, err := e.Scatter(ctx, call.CommandID, calls, order)
	if err != nil {
		var se *dispatch.ScatterError
		if errors.As(err, &se) {
			return nil, primitive.Failed("internal", "run.scatter: record calls[%d] (earlier calls were submitted: %v): %v", se.Index, se.Submitted, se.Err)
		}
		return nil, primitive.Failed("internal", "run.scatter: %v", err)
	}
	if s.seams.afterSubmit != nil {
		s.seams.afterSubmit(futureIDs)
	}
	scatterID := primitive.NewID("sct")
	out := make([]ScatterFuture, len(plan))
	state := primitive.StateCompleted
	for i, p := range plan {
		out[i] = ScatterFuture{Index: i, FutureID: futureIDs[i], Kind: p.kind}
		if f, err := e.GetFuture(ctx, call.Route, futureIDs[i]); err == nil {
			out[i].State = f.State
			if !dispatch.Settled(f.State) {
				state = primitive.StatePending
			}
		}
	}
	summary := make([]map[string]any, len(out))
	for i, f := range out {
		summary[i] = map[string]any{"index": f.Index, "future_id": f.FutureID, "kind": f.Kind}
	}
	if err := s.Events.Append(ctx, call.Route, KindScatter, scatterID, map[string]any{"futures": summary}); err != nil {
		s.Log.Error("record scatter event", "err", err)
	}
	res := map[string]any{"state": state, "scatter_id": scatterID, "futures": out}
	if refused == len(plan) {
		// Nothing will run (e.g. under the e-stop): say so at the top level
		// instead of a "completed" the model might read as success.
		return nil, primitive.Blocked("all_refused", "run.scatter: every call was refused when it was submitted; see futures[].state and their arrivals").
			WithDetails(res)
	}
	if call.Route == "" || strings.HasPrefix(call.Route, dispatch.AnonymousPrefix) {
		res["note"] = `this call has no conversation identity, so results cannot arrive later; send _meta["hearth/conversation"] (or use a client that sends openai/session)`
	}
	return scatterAnswer(res, out)
}

// scatterAnswer is a scatter's answer once its calls are submitted: the
// result alone while no call has failed yet (the rest arrive), else the
// result beside an error naming each call that already ended otherwise
// than completed — partial when others did or may still complete, failed
// when every call already failed.
func scatterAnswer(res map[string]any, out []ScatterFuture) (any, error) {
	var failed []int
	var why []string
	for _, f := range out {
		if f.State != "" && dispatch.Settled(f.State) && f.State != primitive.StateCompleted {
			failed = append(failed, f.Index)
			why = append(why, fmt.Sprintf("calls[%d] (%s) %s", f.Index, f.Kind, f.State))
		}
	}
	if failed == nil {
		return res, nil
	}
	res["failed_indexes"] = failed
	details := map[string]any{"failed_indexes": failed}
	msg := "see futures[] and each failed call's arrival for why"
	if len(failed) == len(out) {
		return nil, primitive.Failed("all_failed", "run.scatter: every call failed: %s; %s", strings.Join(why, ", "), msg).
			WithDetails(details).WithResult(res)
	}
	return nil, primitive.Partial("some_failed", "run.scatter: %d of %d calls already failed: %s; %s", len(failed), len(out), strings.Join(why, ", "), msg).
		WithDetails(details).WithResult(res)
}

func anyMap(m map[string]any) any { return m }

func refIndex(f any) (int, bool) {
	n, ok := f.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := n.Int64()
	if err != nil {
		return 0, false
	}
	return int(i), true
}

// planCall validates one item strictly against its kind: every field must
// be one of that primitive's fields with its type, except that any value
// may be a $future reference (typed when it resolves).
func (s *Service) planCall(i, n int, raw json.RawMessage) (*plannedCall, error) {
	v, err := dispatch.DecodeJSON(raw)
	if err != nil {
		return nil, scatterErr(i, "", "not JSON: %v", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, scatterErr(i, "", "must be an object {kind, ...fields}")
	}
	kind, _ := m[keyKind].(string)
	k := s.kinds[kind]
	if k == nil {
		return nil, scatterErr(i, keyKind, "%q is not a scatter kind; one of %s", kind, strings.Join(s.kindNames, ", "))
	}
	p := &plannedCall{index: i, kind: kind, spec: k.spec, fields: map[string]any{}}
	if d, ok := m[keyDeps]; ok {
		list, ok := d.([]any)
		if !ok {
			return nil, scatterErr(i, keyDeps, "must be an array of indexes and future ids")
		}
		for j, e := range list {
			if err := p.addDep(i, n, fmt.Sprintf("%s[%d]", keyDeps, j), e); err != nil {
				return nil, err
			}
		}
	}
	for key, val := range m {
		if key == keyKind || key == keyDeps {
			continue
		}
		if slices.Contains(k.excluded, key) {
			return nil, scatterErr(i, key, "not accepted in a scatter (kind %s is driven semantically only)", kind)
		}
		p.fields[key] = val
	}
	// Validate with each reference replaced by a value of the type its
	// position expects, so the primitive's own strict rules apply to the
	// rest.
	probe, err := dispatch.MapRefs(anyMap(p.fields), "", func(at string, r dispatch.Ref) (any, error) {
		if id := r.ID(); id != "" {
			if err := p.addDep(i, n, at+".$future", id); err != nil {
				return nil, err
			}
		} else if err := p.addDep(i, n, at+".$future", r.Future); err != nil {
			return nil, err
		}
		return placeholder(fieldAt(k.spec, at)), nil
	})
	if err != nil {
		var re *dispatch.RefError
		if errors.As(err, &re) {
			return nil, scatterErr(i, re.At, "%s", re.Msg)
		}
		return nil, err
	}
	b, err := json.Marshal(probe)
	if err != nil {
		return nil, scatterErr(i, "", "encode: %v", err)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		return nil, scatterErr(i, "", "must be an object")
	}
	if err := k.spec.ValidateObject(obj); err != nil {
		var ve *primitive.ValidationError
		if errors.As(err, &ve) {
			msg := strings.ReplaceAll(ve.Msg, fmt.Sprintf("operation %q", k.spec.Operation), "kind "+kind)
			return nil, scatterErr(i, ve.Field, "%s (kind %s)", msg, kind)
		}
		return nil, scatterErr(i, "", "%v", err)
	}
	return p, nil
}

// addDep records a dependency given by index or future id.
func (p *plannedCall) addDep(i, n int, at string, e any) error {
	switch t := e.(type) {
	case json.Number:
		j, ok := refIndex(t)
		if !ok || j < 0 || j >= n {
			return scatterErr(i, at, "index %s is not a call of this scatter (0..%d)", t, n-1)
		}
		if j == i {
			return scatterErr(i, at, "a call cannot depend on itself")
		}
		if !slices.Contains(p.idxDeps, j) {
			p.idxDeps = append(p.idxDeps, j)
		}
		return nil
	case string:
		if !futureIDPattern.MatchString(t) {
			return scatterErr(i, at, "%q is neither an index into calls[] nor a future id (fut_...)", t)
		}
		if !slices.Contains(p.idDeps, t) {
			p.idDeps = append(p.idDeps, t)
		}
		return nil
	}
	return scatterErr(i, at, "must be an index into calls[] or a future id (fut_...)")
}

// topoOrder orders calls so that each comes after the calls it depends on
// by index, refusing a cycle.
func topoOrder(plan []*plannedCall) ([]int, error) {
	deps := make([][]int, len(plan))
	for i, p := range plan {
		deps[i] = p.idxDeps
	}
	order, stuck := dispatch.TopoOrder(deps)
	if stuck == nil {
		return order, nil
	}
	var cyc []string
	for _, i := range stuck {
		cyc = append(cyc, fmt.Sprint(i))
	}
	return nil, scatterErr(stuck[0], keyDeps, "dependency cycle among calls %s", strings.Join(cyc, ", "))
}

// fieldAt finds the field a value position ("path", "args[1]",
// "job.env.X") of spec's input belongs to, or nil.
func fieldAt(spec *primitive.Spec, at string) *primitive.Field {
	var cur *primitive.Field
	for _, tok := range splitPath(at) {
		switch {
		case strings.HasPrefix(tok, "["):
			if cur == nil || cur.Type != primitive.TArray || cur.Items == nil {
				return nil
			}
			cur = cur.Items
		case cur == nil:
			cur = findField(spec.Fields, tok)
			if cur == nil {
				return nil
			}
		default:
			if cur.Type != primitive.TObject {
				return nil
			}
			if cur.Fields == nil {
				if cur.Values == "" {
					return &primitive.Field{}
				}
				cur = &primitive.Field{Type: cur.Values}
				continue
			}
			if cur = findField(cur.Fields, tok); cur == nil {
				return nil
			}
		}
	}
	return cur
}

func findField(fs []primitive.Field, name string) *primitive.Field {
	for i := range fs {
		if fs[i].Name == name {
			return &fs[i]
		}
	}
	return nil
}

// splitPath splits "a.b[2].c" into "a", "b", "[2]", "c".
func splitPath(at string) []string {
	var out []string
	for _, part := range strings.Split(at, ".") {
		for part != "" {
			k := strings.IndexByte(part[1:], '[')
			if part[0] == '[' {
				end := strings.IndexByte(part, ']')
				if end < 0 {
					end = len(part) - 1
				}
				out = append(out, part[:end+1])
				part = part[end+1:]
				continue
			}
			if k < 0 {
				out = append(out, part)
				break
			}
			out = append(out, part[:k+1])
			part = part[k+1:]
		}
	}
	return out
}

// placeholder returns a value that passes f's validation, standing in for
// a reference until it resolves; for an unknown position it returns null,
// so the validation reports the field itself.
func placeholder(f *primitive.Field) any {
	if f == nil || f.Nullable {
		return nil
	}
	switch f.Type {
	case primitive.TString:
		if len(f.Enum) > 0 {
			return f.Enum[0]
		}
		return "$future"
	case primitive.TInteger, primitive.TNumber:
		switch {
		case f.Min != nil:
			return *f.Min
		case f.Max != nil && *f.Max < 0:
			return *f.Max
		}
		return 0
	case primitive.TBoolean:
		return false
	case primitive.TArray:
		items := []any{}
		if f.Min != nil {
			for range int(*f.Min) {
				items = append(items, placeholder(f.Items))
			}
		}
		return items
	case primitive.TObject:
		obj := map[string]any{}
		for i := range f.Fields {
			if f.Fields[i].Required {
				obj[f.Fields[i].Name] = placeholder(&f.Fields[i])
			}
		}
		return obj
	}
	return "$future"
}
