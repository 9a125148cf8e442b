package evidence

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hearth-dev/hearth/internal/artifacts"
	"github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/internal/primitive"
)

// readEvidence writes route's ledger entries after afterSeq, at most
// BundleEntries of them, as an evidence subset against a checkpoint signed
// now (ledger.ExportSubset).
func (s *Service) readEvidence(ctx context.Context, route string, afterSeq int64) (Content, error) {
	sel := &selection{ctx: ctx, s: s, route: route, routeKey: []byte(`"route":` + strconv.Quote(route)),
		commandKey: []byte(`"command_id":"`), permitKey: []byte(`"permit_id":"`)}
	if primitive.AnonymousRoute(route) {
		sel.routeKey = []byte(`"route":"` + primitive.AnonymousRoutePrefix)
	}
	var buf bytes.Buffer
	info, err := s.ledger.ExportSubset(ctx, &buf, ledger.Subset{
		Scope:    "conversation " + Conversation(route),
		AfterSeq: afterSeq,
		Limit:    s.lim.BundleEntries,
		MaxScan:  s.lim.ScanEntries,
		Match:    sel.match,
	})
	if err == nil {
		err = sel.err
	}
	if err != nil {
		return Content{}, fmt.Errorf("read evidence: %w", err)
	}
	meta := map[string]any{
		"hearth/entries":         info.Entries,
		"hearth/checkpoint_size": info.Size,
		"hearth/more":            info.More,
		"hearth/verify":          "hearth-tray ledger verify - (this text on standard input), offline",
	}
	if info.More {
		meta["hearth/next"] = EvidenceURI(route, info.LastSeq)
	}
	return Content{URI: EvidenceURI(route, afterSeq), MIME: "application/json", Text: buf.String(), Meta: meta}, nil
}

// selection decides which ledger entries are route's: those whose data
// names the route, or a command or permit of the route. Its sets are read
// on the first entry, after the ledger signed the checkpoint, so a command
// whose entries the checkpoint covers is known.
type selection struct {
	ctx               context.Context
	s                 *Service
	route             string
	routeKey          []byte // what names the route (or any anonymous one) in an entry
	commandKey        []byte // what precedes a command id
	permitKey         []byte // what precedes a permit id
	loaded            bool
	commands, permits map[string]bool
	err               error
}

// entryRefs is what the selection reads of an entry's data.
type entryRefs struct {
	Route     string `json:"route"`
	CommandID string `json:"command_id"`
	PermitID  string `json:"permit_id"`
}

func (sel *selection) match(body []byte) bool {
	if sel.err != nil {
		return false
	}
	if !sel.loaded {
		sel.loaded = true
		if sel.commands, sel.err = sel.s.records.CommandIDs(sel.ctx, sel.route); sel.err != nil {
			return false
		}
		if sel.permits, sel.err = sel.s.records.PermitIDs(sel.ctx, sel.route); sel.err != nil {
			return false
		}
	}
	if !sel.candidate(body) {
		return false
	}
	e, err := ledger.ParseEntry(body)
	if err != nil {
		return false
	}
	var d entryRefs
	if json.Unmarshal(e.Data, &d) != nil {
		return false
	}
	if d.Route != "" && (d.Route == sel.route || primitive.AnonymousRoute(sel.route) && primitive.AnonymousRoute(d.Route)) {
		return true
	}
	return d.CommandID != "" && sel.commands[d.CommandID] || d.PermitID != "" && sel.permits[d.PermitID]
}

// candidate is match's quick look at an entry's bytes, before any
// parsing: does a "route" name the route, or a "command_id" or
// "permit_id" one of its commands or permits, anywhere in it? Most
// entries are another conversation's, and this rules them out; match
// then checks the data's own fields.
func (sel *selection) candidate(body []byte) bool {
	return bytes.Contains(body, sel.routeKey) ||
		mentions(body, sel.commandKey, sel.commands) || mentions(body, sel.permitKey, sel.permits)
}

// mentions reports whether a string value of key in body (canonical
// JSON) is in set; a value with an escape is taken as a mention, for the
// full check to decide.
func mentions(body, key []byte, set map[string]bool) bool {
	for rest := body; ; {
		i := bytes.Index(rest, key)
		if i < 0 {
			return false
		}
		rest = rest[i+len(key):]
		end := bytes.IndexByte(rest, '"')
		if end < 0 {
			return false
		}
		if v := rest[:end]; bytes.IndexByte(v, '\\') >= 0 || set[string(v)] {
			return true
		}
		rest = rest[end:]
	}
}

// millis renders a unix-milliseconds column as RFC 3339 (nil when NULL).
func millis(v sql.NullInt64) any {
	if !v.Valid {
		return nil
	}
	return time.UnixMilli(v.Int64).UTC().Format(time.RFC3339Nano)
}

// jsonText is a stored JSON text as itself in the output, or null.
func jsonText(v sql.NullString) json.RawMessage {
	if !v.Valid || !json.Valid([]byte(v.String)) {
		return json.RawMessage("null")
	}
	return json.RawMessage(v.String)
}

func jsonContent(uri string, v any) (Content, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return Content{}, fmt.Errorf("encode %s: %w", uri, err)
	}
	return Content{URI: uri, MIME: "application/json", Text: string(b)}, nil
}

// readReceipt is what Hearth recorded of one of route's commands: its
// primitive, input digest, state and the envelope a replay returns.
func (s *Service) readReceipt(ctx context.Context, route, commandID string) (Content, error) {
	c, err := s.records.CommandOf(ctx, route, commandID)
	if err != nil {
		return Content{}, noRecord(err, "receipt")
	}
	return jsonContent(receiptURI(commandID), map[string]any{
		"command_id": commandID, "primitive": c.Primitive, "input_sha256": c.InputSHA256, "future_id": c.FutureID, "state": c.State,
		"created_at": millis(sql.NullInt64{Int64: c.CreatedAt, Valid: true}), "finished_at": millis(c.FinishedAt),
		"envelope": jsonText(c.Envelope),
	})
}

// readPermit is one of route's permits: the exact input it was asked for,
// its digest, and the operator's decision.
func (s *Service) readPermit(ctx context.Context, route, id string) (Content, error) {
	p, err := s.records.PermitOf(ctx, route, id)
	if err != nil {
		return Content{}, noRecord(err, "permit")
	}
	out := map[string]any{
		"permit_id": id, "primitive": p.Primitive, "input": jsonText(sql.NullString{String: p.Input, Valid: true}), "input_sha256": p.Digest,
		"future_id": p.FutureID, "command_id": p.CommandID, "state": p.State,
		"created_at": millis(sql.NullInt64{Int64: p.CreatedAt.UnixMilli(), Valid: true}), "expires_at": millis(sql.NullInt64{Int64: p.ExpiresAt.UnixMilli(), Valid: true}),
		"decided_at": millis(sql.NullInt64{Int64: p.DecidedAt.UnixMilli(), Valid: !p.DecidedAt.IsZero()}),
	}
	if p.DecidedBy.Valid {
		out["decided_by"] = p.DecidedBy.String
	}
	return jsonContent(permitURI(id), out)
}

// readArtifact reads up to ReadBytes of one of route's artifacts from
// offset: as text when its type is text and the bytes are UTF-8, else as a
// blob. Meta says the range and, when more follows, the next part's URI.
func (s *Service) readArtifact(ctx context.Context, route, id string, offset int64) (Content, error) {
	sc := s.artifacts.In(route)
	m, err := sc.Metadata(ctx, id)
	if errors.Is(err, artifacts.ErrNotFound) {
		return Content{}, ErrNotFound
	}
	if err != nil {
		return Content{}, fmt.Errorf("read artifact: %w", err)
	}
	if offset > m.Size {
		return Content{}, badRequest("uri: offset %d is past the end of artifact %s (%d bytes)", offset, id, m.Size)
	}
	c, err := sc.ReadRange(ctx, id, offset, s.lim.ReadBytes, "base64")
	if errors.Is(err, artifacts.ErrNotFound) {
		return Content{}, ErrNotFound
	}
	if err != nil {
		return Content{}, fmt.Errorf("read artifact: %w", err)
	}
	raw, err := base64.StdEncoding.DecodeString(c.Data)
	if err != nil {
		return Content{}, fmt.Errorf("read artifact %s: %w", id, err)
	}
	out := Content{URI: artifactURI(id, offset), MIME: m.MIME, Meta: map[string]any{
		"hearth/offset": offset, "hearth/length": len(raw), "hearth/size": m.Size, "hearth/eof": c.EOF,
		"hearth/sha256": m.SHA256,
	}}
	if out.MIME == "" {
		out.MIME = "application/octet-stream"
	}
	if !c.EOF {
		// A text part ends on a whole character: the next starts there.
		raw = wholeRunes(raw, out.MIME)
		out.Meta["hearth/length"] = len(raw)
		out.Meta["hearth/next"] = artifactURI(id, offset+int64(len(raw)))
	}
	if isText(out.MIME) && validUTF8(raw) {
		out.Text = string(raw)
		if out.Text == "" {
			// An empty text would be omitted on the wire: an empty blob
			// says "no bytes" unambiguously.
			out.IsBlob, out.Blob = true, []byte{}
		}
	} else {
		out.IsBlob, out.Blob = true, raw
	}
	return out, nil
}

// isText reports whether a MIME type is text a client can show as such.
func isText(mime string) bool {
	mt, _, _ := strings.Cut(mime, ";")
	mt = strings.TrimSpace(strings.ToLower(mt))
	return strings.HasPrefix(mt, "text/") || mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// wholeRunes shortens a text part that ends inside a multi-byte character
// to end before it; a part that is not UTF-8 elsewhere too (served as a
// blob) and other types are returned as they are.
func wholeRunes(b []byte, mime string) []byte {
	if !isText(mime) {
		return b
	}
	for cut := 0; cut < utf8.UTFMax && cut < len(b); cut++ { // never to nothing: a read always advances
		if utf8.Valid(b[:len(b)-cut]) {
			return b[:len(b)-cut]
		}
	}
	return b
}

func validUTF8(b []byte) bool { return utf8.Valid(b) }
