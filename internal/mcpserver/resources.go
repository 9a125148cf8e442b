package mcpserver

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hearth-dev/hearth/internal/evidence"
)

// Resources: a conversation's own evidence (internal/evidence) as MCP
// resources. resources/list and resources/read are scoped by the route
// the tools use (Route of the request's _meta), so another conversation's
// URI is not found; a request without a conversation id sees the shared
// anonymous scope, as the artifact tool does. Both go through the SDK
// (the fast path takes tools/call only): list is answered by resourceList
// (the SDK's own list pages registered resources, and these are per
// conversation), read by the SDK's template lookup and readResource.

// resourceTemplates are the URI shapes of the resources; the SDK's
// resources/read answers only URIs that match one.
var resourceTemplates = [...]mcp.ResourceTemplate{
	{Name: "evidence", Title: "Evidence of a conversation", MIMEType: "application/json",
		URITemplate: evidence.Scheme + "://conversations/{conversation}/evidence{?after_seq}",
		Description: "This conversation's host ledger entries, each with its inclusion proof against a signed checkpoint; verify offline with `hearth-tray ledger verify -`. The URI is in resources/list."},
	{Name: "receipt", Title: "Receipt of a command", MIMEType: "application/json",
		URITemplate: evidence.Scheme + "://receipts/{command_id}",
		Description: "What Hearth recorded for one of this conversation's commands: input digest, state, and the result a replay returns."},
	{Name: "permit", Title: "Permit", MIMEType: "application/json",
		URITemplate: evidence.Scheme + "://permits/{permit_id}",
		Description: "One of this conversation's permits: the exact input the operator was asked to approve, and the decision."},
	{Name: "artifact", Title: "Artifact",
		URITemplate: evidence.Scheme + "://artifacts/{artifact_id}{?offset}",
		Description: "One of this conversation's artifacts, read in bounded parts from offset; _meta hearth/next names the next part."},
}

// private marks a result as this conversation's: no shared cache may keep
// it, and it is stale at once (new calls add evidence).
func private() mcp.Cacheable { return mcp.Cacheable{TTLMs: 0, CacheScope: "private"} }

// addResources registers the templates with the SDK server.
func (s *Server) addResources() {
	for i := range resourceTemplates {
		t := resourceTemplates[i]
		s.mcp.AddResourceTemplate(&t, s.readResource)
	}
}

// resourceList answers resources/list with a page of the conversation's
// resources.
func (s *Server) resourceList(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		lr, ok := req.(*mcp.ListResourcesRequest)
		if method != "resources/list" || !ok {
			return next(ctx, method, req)
		}
		var meta map[string]any
		cursor := ""
		if lr.Params != nil {
			meta, cursor = lr.Params.Meta, lr.Params.Cursor
		}
		items, nextCursor, err := s.Evidence.List(ctx, Route(meta), cursor)
		if err != nil {
			return nil, s.resourceError("resources/list", "", err)
		}
		res := &mcp.ListResourcesResult{Cacheable: private(), NextCursor: nextCursor, Resources: make([]*mcp.Resource, len(items))}
		for i, r := range items {
			res.Resources[i] = &mcp.Resource{URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIME, Size: r.Size}
		}
		return res, nil
	}
}

// readResource answers resources/read of a URI that matched a template.
func (s *Server) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	c, err := s.Evidence.Read(ctx, Route(req.Params.Meta), uri)
	if err != nil {
		return nil, s.resourceError("resources/read", uri, err)
	}
	rc := &mcp.ResourceContents{URI: c.URI, MIMEType: c.MIME, Text: c.Text, Meta: c.Meta}
	if c.IsBlob {
		rc.Text, rc.Blob = "", c.Blob
	}
	return &mcp.ReadResourceResult{Cacheable: private(), Contents: []*mcp.ResourceContents{rc}}, nil
}

// resourceError is the JSON-RPC error for err: not found (as for a URI
// that names nothing), invalid params naming the field, or an internal
// error whose detail stays in the log.
func (s *Server) resourceError(method, uri string, err error) error {
	var bad *evidence.BadRequestError
	switch {
	case errors.Is(err, evidence.ErrNotFound):
		return mcp.ResourceNotFoundError(uri)
	case errors.As(err, &bad):
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: bad.Msg}
	}
	s.Log.Error(method, "uri", uri, "err", err)
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: method + " failed; the details are in Hearth's log"}
}
