package artifacts

import (
	"context"
	"errors"

	"github.com/hearth-dev/hearth/internal/primitive"
)

// MaxRead bounds one read/range call.
const MaxRead = 1 << 20

const limitDesc = "read/range: max bytes (default 65536, max 1 MiB); list: max items (default 50, max 500); search: max matches (default 50)."

func idField() primitive.Field {
	return primitive.Field{Name: "id", Type: primitive.TString, Required: true, Desc: "Artifact id (art_...)."}
}

func rangeFields() []primitive.Field {
	return []primitive.Field{idField(),
		{Name: "offset", Type: primitive.TInteger, Min: primitive.Bound(0), Desc: "Byte offset (default 0)."},
		{Name: "limit", Type: primitive.TInteger, Min: primitive.Bound(1), Max: primitive.Bound(MaxRead), Desc: limitDesc},
		{Name: "encoding", Type: primitive.TString, Enum: []string{"utf8", "base64"}, Desc: "utf8 (default) or base64."},
	}
}

type rangeInput struct {
	ID       string `json:"id"`
	Offset   int64  `json:"offset"`
	Limit    int    `json:"limit"`
	Encoding string `json:"encoding"`
}

func notFound(err error) error {
	if errors.Is(err, ErrNotFound) {
		return primitive.Failed("not_found", "%v", err)
	}
	return primitive.Failed("read_failed", "%v", err)
}

// Specs returns the artifact tool's primitives (all read-only). Every
// operation sees only the calling conversation's artifacts (Store.In):
// whether it is reached as a tool call, a scatter kind, a recipe step or
// an approved permit, the dispatcher hands it the caller's route.
func (s *Store) Specs() []*primitive.Spec {
	read := primitive.Typed(func(ctx context.Context, call *primitive.Call, in rangeInput) (any, error) {
		if in.Limit == 0 {
			in.Limit = 64 << 10
		}
		c, err := s.In(call.Route).ReadRange(ctx, in.ID, in.Offset, in.Limit, in.Encoding)
		if err != nil {
			return nil, notFound(err)
		}
		return c, nil
	})
	return []*primitive.Spec{
		{Tool: "artifact", Operation: "list", Risk: primitive.RiskRead, Summary: "this conversation's artifacts, newest first.",
			Fields: []primitive.Field{{Name: "limit", Type: primitive.TInteger, Min: primitive.Bound(1), Max: primitive.Bound(500), Desc: limitDesc}},
			Run: primitive.Typed(func(ctx context.Context, call *primitive.Call, in struct {
				Limit int `json:"limit"`
			}) (any, error) {
				if in.Limit == 0 {
					in.Limit = 50
				}
				ms, err := s.In(call.Route).List(ctx, in.Limit)
				if err != nil {
					return nil, primitive.Failed("list_failed", "%v", err)
				}
				return map[string]any{"artifacts": ms}, nil
			})},
		{Tool: "artifact", Operation: "metadata", Risk: primitive.RiskRead, Summary: "size, sha256, mime, source, truncated.",
			Fields: []primitive.Field{idField()},
			Run: primitive.Typed(func(ctx context.Context, call *primitive.Call, in struct {
				ID string `json:"id"`
			}) (any, error) {
				m, err := s.In(call.Route).Metadata(ctx, in.ID)
				if err != nil {
					return nil, notFound(err)
				}
				return m, nil
			})},
		{Tool: "artifact", Operation: "read", Risk: primitive.RiskRead, Summary: "bytes from offset (UTF-8 text or base64); next_offset when more remains.",
			Fields: rangeFields(), Run: read},
		{Tool: "artifact", Operation: "range", Risk: primitive.RiskRead, Summary: "same as read.",
			Fields: rangeFields(), Run: read},
		{Tool: "artifact", Operation: "search", Risk: primitive.RiskRead, Summary: "lines containing query, with offsets and line numbers.",
			Fields: []primitive.Field{idField(),
				{Name: "query", Type: primitive.TString, Required: true, Desc: "Substring to find."},
				{Name: "limit", Type: primitive.TInteger, Min: primitive.Bound(1), Max: primitive.Bound(MaxRead), Desc: limitDesc}},
			Run: primitive.Typed(func(ctx context.Context, call *primitive.Call, in struct {
				ID    string `json:"id"`
				Query string `json:"query"`
				Limit int    `json:"limit"`
			}) (any, error) {
				if in.Limit == 0 {
					in.Limit = 50
				}
				ms, more, err := s.In(call.Route).Search(ctx, in.ID, in.Query, in.Limit)
				if err != nil {
					return nil, notFound(err)
				}
				return map[string]any{"matches": ms, "truncated": more}, nil
			})},
	}
}
