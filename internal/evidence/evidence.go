// Package evidence is what one conversation can read of its own evidence,
// as MCP resources (internal/mcpserver serves them): its ledger entries,
// each with its inclusion proof against a signed checkpoint of the whole
// ledger (a bundle `hearth-tray ledger verify` checks offline), the
// receipts of its commands, its permits and its artifacts.
//
// Everything is scoped exactly as the tools scope it (primitive.RouteMatch): a
// conversation sees only its own, and another conversation's URI is not
// found, just like an unknown one. A request with no conversation id is
// request-scoped: it has no later request of its own, so, as for artifact
// listings and the UNKNOWN gate, every such request shares one anonymous
// scope (the evidence of every call made without a conversation id).
//
// The URIs:
//
//	hearth://conversations/{conversation}/evidence{?after_seq}
//	hearth://receipts/{command_id}
//	hearth://permits/{permit_id}
//	hearth://artifacts/{artifact_id}{?offset}
//
// {conversation} is the route's hash (never a raw OpenAI identifier), or
// "anonymous". Reads are bounded: an evidence read carries at most
// BundleEntries entries and looks at most at ScanEntries ledger entries,
// an artifact read carries at most ReadBytes bytes; the content's _meta
// then names the URI of the next part.
package evidence

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/hearth-dev/hearth/internal/artifacts"
	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/internal/primitive"
)

// Defaults of the bounds.
const (
	// DefaultPageSize is how many resources one list page carries.
	DefaultPageSize = 100
	// DefaultBundleEntries is how many ledger entries one evidence read
	// carries (each with a proof of about 1 KiB at a million entries).
	DefaultBundleEntries = 500
	// DefaultReadBytes is how many bytes of an artifact one read carries.
	DefaultReadBytes = 256 << 10
	// DefaultScanEntries is how many ledger entries one evidence read
	// looks at: each read of a long ledger costs about the same (tens of
	// milliseconds), and a conversation whose entries are far apart is
	// read in more parts.
	DefaultScanEntries = 50_000
)

// Scheme is the URI scheme of every resource.
const Scheme = "hearth"

// ErrNotFound is returned for a URI that names nothing in the caller's
// scope: another conversation's resource is reported exactly like one
// that does not exist.
var ErrNotFound = errors.New("resource not found")

// BadRequestError is a request the caller got wrong (a bad cursor, a bad
// query parameter); its message names the field.
type BadRequestError struct{ Msg string }

func (e *BadRequestError) Error() string { return e.Msg }

func badRequest(format string, args ...any) error {
	return &BadRequestError{Msg: fmt.Sprintf(format, args...)}
}

// Service reads one conversation's evidence.
type Service struct {
	records   *govern.Governor
	ledger    *ledger.Ledger
	artifacts *artifacts.Store
	lim       Limits
}

// Limits bounds lists and reads; a zero field takes its default.
type Limits struct {
	PageSize      int
	BundleEntries int
	ReadBytes     int
	ScanEntries   int64
}

// New returns the service over the commands and permits the governor
// keeps (records), its ledger and its artifact store.
func New(records *govern.Governor, led *ledger.Ledger, arts *artifacts.Store, lim Limits) (*Service, error) {
	if records == nil || led == nil || arts == nil {
		return nil, errors.New("evidence: governor, ledger and artifact store are required")
	}
	if lim.PageSize == 0 {
		lim.PageSize = DefaultPageSize
	}
	if lim.BundleEntries == 0 {
		lim.BundleEntries = DefaultBundleEntries
	}
	if lim.ReadBytes == 0 {
		lim.ReadBytes = DefaultReadBytes
	}
	if lim.ScanEntries == 0 {
		lim.ScanEntries = DefaultScanEntries
	}
	if lim.PageSize < 1 || lim.BundleEntries < 1 || lim.ReadBytes < 1 || lim.ScanEntries < 1 {
		return nil, fmt.Errorf("evidence: limits must be positive: %+v", lim)
	}
	return &Service{records: records, ledger: led, artifacts: arts, lim: lim}, nil
}

// Resource is one listed resource.
type Resource struct {
	URI, Name, Title, Description, MIME string
	Size                                int64 // bytes, when known (0: unknown)
}

// Content is what a read returns: Text, or Blob when the bytes are not
// text. Meta says where a bounded read stopped and what to read next.
type Content struct {
	URI, MIME string
	Text      string
	Blob      []byte
	IsBlob    bool
	Meta      map[string]any
}

// Conversation is the {conversation} segment of route's URIs: the hex of
// its hash, or "anonymous" for the shared anonymous scope.
func Conversation(route string) string {
	if primitive.AnonymousRoute(route) {
		return "anonymous"
	}
	return strings.TrimPrefix(route, "r:")
}

// EvidenceURI is the URI of route's evidence bundle from after_seq on.
func EvidenceURI(route string, afterSeq int64) string {
	u := Scheme + "://conversations/" + url.PathEscape(Conversation(route)) + "/evidence"
	if afterSeq > 0 {
		u += "?after_seq=" + strconv.FormatInt(afterSeq, 10)
	}
	return u
}

func receiptURI(commandID string) string { return Scheme + "://receipts/" + url.PathEscape(commandID) }
func permitURI(id string) string         { return Scheme + "://permits/" + url.PathEscape(id) }
func artifactURI(id string, offset int64) string {
	u := Scheme + "://artifacts/" + url.PathEscape(id)
	if offset > 0 {
		u += "?offset=" + strconv.FormatInt(offset, 10)
	}
	return u
}

// Read returns the resource at uri as route's conversation sees it.
func (s *Service) Read(ctx context.Context, route, uri string) (Content, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != Scheme || u.Opaque != "" || u.User != nil || u.Fragment != "" {
		return Content{}, ErrNotFound
	}
	segs := strings.Split(strings.TrimPrefix(u.EscapedPath(), "/"), "/")
	for i, sg := range segs {
		if segs[i], err = url.PathUnescape(sg); err != nil || segs[i] == "" {
			return Content{}, ErrNotFound
		}
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return Content{}, badRequest("uri %s: query: %v", uri, err)
	}
	switch {
	case u.Host == "conversations" && len(segs) == 2 && segs[1] == "evidence":
		if segs[0] != Conversation(route) {
			return Content{}, ErrNotFound
		}
		after, err := intParam(q, "after_seq")
		if err != nil {
			return Content{}, err
		}
		return s.readEvidence(ctx, route, after)
	case u.Host == "receipts" && len(segs) == 1:
		if err := noParams(q); err != nil {
			return Content{}, err
		}
		return s.readReceipt(ctx, route, segs[0])
	case u.Host == "permits" && len(segs) == 1:
		if err := noParams(q); err != nil {
			return Content{}, err
		}
		return s.readPermit(ctx, route, segs[0])
	case u.Host == "artifacts" && len(segs) == 1:
		off, err := intParam(q, "offset")
		if err != nil {
			return Content{}, err
		}
		return s.readArtifact(ctx, route, segs[0], off)
	}
	return Content{}, ErrNotFound
}

// intParam is the one optional non-negative integer query parameter name
// (0 when absent); any other parameter is refused.
func intParam(q url.Values, name string) (int64, error) {
	for k := range q {
		if k != name {
			return 0, badRequest("uri: unknown query parameter %q (this resource takes only %s)", k, name)
		}
	}
	vs := q[name]
	if len(vs) == 0 {
		return 0, nil
	}
	n, err := strconv.ParseInt(vs[0], 10, 64)
	if len(vs) > 1 || err != nil || n < 0 {
		return 0, badRequest("uri: %s must be one non-negative integer, got %q", name, strings.Join(vs, ","))
	}
	return n, nil
}

func noParams(q url.Values) error {
	for k := range q {
		return badRequest("uri: unknown query parameter %q (this resource takes none)", k)
	}
	return nil
}

// noRecord maps govern.ErrNoRecord to ErrNotFound.
func noRecord(err error, what string) error {
	if errors.Is(err, govern.ErrNoRecord) {
		return ErrNotFound
	}
	return fmt.Errorf("read %s: %w", what, err)
}
