package evidence

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/hearth-dev/hearth/internal/artifacts"
	"github.com/hearth-dev/hearth/internal/govern"
)

// A listing has four sections, in this order: the evidence bundle (one
// resource), the receipts of the conversation's commands, its permits and
// its artifacts; each of the last three newest first, ties by id.
const (
	secEvidence = iota
	secReceipts
	secPermits
	secArtifacts
	numSections
)

// cursor is where a list page ended: its last resource's section and
// place in it. It travels as base64url JSON, opaque to clients.
type cursor struct {
	Sec int    `json:"s"`
	At  int64  `json:"t,omitempty"` // created_at, unix milliseconds
	ID  string `json:"id,omitempty"`
}

func (c cursor) encode() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string) (cursor, error) {
	var c cursor
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil || c.Sec < secEvidence || c.Sec >= numSections || (c.Sec != secEvidence) != (c.ID != "") {
		return cursor{}, badRequest("cursor: not a cursor this server gave (pass nextCursor from the previous resources/list unchanged)")
	}
	return c, nil
}

// listed is a resource and its cursor.
type listed struct {
	r   Resource
	key cursor
}

// List returns a page of route's resources after cursor ("" for the
// first page) and the cursor of the next page ("" when this is the last).
func (s *Service) List(ctx context.Context, route, cur string) ([]Resource, string, error) {
	after := cursor{Sec: -1}
	if cur != "" {
		c, err := decodeCursor(cur)
		if err != nil {
			return nil, "", err
		}
		after = c
	}
	// One more than a page tells whether another page follows.
	want := s.lim.PageSize + 1
	var got []listed
	for sec := max(after.Sec, secEvidence); sec < numSections && len(got) < want; sec++ {
		var from *cursor
		if sec == after.Sec {
			from = &after
		}
		items, err := s.section(ctx, route, sec, from, want-len(got))
		if err != nil {
			return nil, "", err
		}
		got = append(got, items...)
	}
	next := ""
	if len(got) > s.lim.PageSize {
		got = got[:s.lim.PageSize]
		next = got[len(got)-1].key.encode()
	}
	out := make([]Resource, len(got))
	for i, l := range got {
		out[i] = l.r
	}
	return out, next, nil
}

// section lists up to limit resources of one section, after from (nil:
// from its start).
func (s *Service) section(ctx context.Context, route string, sec int, from *cursor, limit int) ([]listed, error) {
	switch sec {
	case secEvidence:
		if from != nil {
			return nil, nil // the one evidence resource was on an earlier page
		}
		return []listed{{r: Resource{
			URI:   EvidenceURI(route, 0),
			Name:  "evidence",
			Title: "Evidence of this conversation",
			Description: fmt.Sprintf("The host ledger's entries for this conversation's calls, permits and reconciliations, "+
				"each with its inclusion proof against a checkpoint of the whole ledger signed when read: an evidence bundle "+
				"that `hearth-tray ledger verify -` checks offline. At most %d entries a read; _meta hearth/next names the next part.", s.lim.BundleEntries),
			MIME: "application/json",
		}, key: cursor{Sec: secEvidence}}}, nil
	case secReceipts:
		return s.list(ctx, route, sec, from, limit, s.records.ListCommands, func(id, prim, state string) Resource {
			return Resource{URI: receiptURI(id), Name: "receipt " + id, Title: prim + ": " + state, MIME: "application/json",
				Description: "What Hearth recorded for command " + id + " (" + prim + "): its input digest, state and the result a replay returns."}
		})
	case secPermits:
		return s.list(ctx, route, sec, from, limit, s.records.ListPermits, func(id, prim, state string) Resource {
			return Resource{URI: permitURI(id), Name: "permit " + id, Title: "Permit for " + prim + ": " + state, MIME: "application/json",
				Description: "Permit " + id + ": the exact input the operator was asked to approve for " + prim + ", and the decision."}
		})
	case secArtifacts:
		key := artifacts.PageKey{}
		if from != nil {
			key = artifacts.PageKey{CreatedAt: from.At, ID: from.ID}
		}
		ms, err := s.artifacts.In(route).Page(ctx, key, limit)
		if err != nil {
			return nil, err
		}
		out := make([]listed, len(ms))
		for i, m := range ms {
			k := m.Key()
			out[i] = listed{r: Resource{URI: artifactURI(m.ID, 0), Name: "artifact " + m.ID, Title: m.Name, MIME: m.MIME, Size: m.Size,
				Description: fmt.Sprintf("Artifact %s (%s, %d bytes, from %s). At most %d bytes a read; _meta hearth/next names the next part.",
					m.ID, m.Name, m.Size, m.Source, s.lim.ReadBytes)},
				key: cursor{Sec: secArtifacts, At: k.CreatedAt, ID: k.ID}}
		}
		return out, nil
	}
	return nil, nil
}

// list lists route's commands or permits (through the governor's list),
// newest first after from.
func (s *Service) list(ctx context.Context, route string, sec int, from *cursor, limit int,
	list func(ctx context.Context, route string, after *govern.RecordKey, limit int) ([]govern.Record, error),
	resource func(id, prim, state string) Resource) ([]listed, error) {
	var after *govern.RecordKey
	if from != nil {
		after = &govern.RecordKey{At: from.At, ID: from.ID}
	}
	rs, err := list(ctx, route, after, limit)
	if err != nil {
		return nil, fmt.Errorf("list resources: %w", err)
	}
	out := make([]listed, len(rs))
	for i, r := range rs {
		out[i] = listed{r: resource(r.Key.ID, r.Primitive, r.State), key: cursor{Sec: sec, At: r.Key.At, ID: r.Key.ID}}
	}
	return out, nil
}
