package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hearth-dev/hearth/internal/evidence"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/internal/mcpserver"
)

// convMeta is the _meta of a request in conversation conv ("" for none).
func convMeta(conv string) mcp.Meta {
	if conv == "" {
		return nil
	}
	return mcp.Meta{"hearth/conversation": conv}
}

// listAll reads every page of resources/list in conv.
func listAll(t *testing.T, s *mcp.ClientSession, conv string) []*mcp.Resource {
	t.Helper()
	var out []*mcp.Resource
	cursor := ""
	for page := 0; ; page++ {
		if page > 100 {
			t.Fatal("resources/list does not end")
		}
		res, err := s.ListResources(context.Background(), &mcp.ListResourcesParams{Meta: convMeta(conv), Cursor: cursor})
		if err != nil {
			t.Fatalf("resources/list in %q: %v", conv, err)
		}
		if res.CacheScope != "private" {
			t.Fatalf("resources/list cacheScope %q, want private", res.CacheScope)
		}
		out = append(out, res.Resources...)
		if cursor = res.NextCursor; cursor == "" {
			return out
		}
	}
}

func readRes(s *mcp.ClientSession, conv, uri string) (*mcp.ReadResourceResult, error) {
	return s.ReadResource(context.Background(), &mcp.ReadResourceParams{Meta: convMeta(conv), URI: uri})
}

func uris(rs []*mcp.Resource) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.URI
	}
	return out
}

// TestResourcesScopedPerConversation: two conversations each list and
// read their own evidence, receipts, permits and artifacts; one's URIs are
// not found in the other (like an unknown URI); a request without a
// conversation id sees the anonymous scope; the evidence bundle read over
// MCP verifies offline and holds only the conversation's entries.
func TestResourcesScopedPerConversation(t *testing.T) {
	in := hearthtest.Start(t, nil) // ask mode: exec needs a permit
	ctx := context.Background()
	a := hearthtest.Connect(t, in.URL, "conv-a")
	b := hearthtest.Connect(t, in.URL, "conv-b")
	routeA := mcpserver.Route(map[string]any{"hearth/conversation": "conv-a"})
	routeB := mcpserver.Route(map[string]any{"hearth/conversation": "conv-b"})

	write := func(c *hearthtest.Client, name string) string {
		r := c.Call("fs", map[string]any{"operation": "write", "path": filepath.Join(in.Root, name), "data": "hello " + name})
		if r.State() != "completed" || r.Str("command_id") == "" {
			t.Fatalf("fs.write %s: %s", name, r.Raw)
		}
		return r.Str("command_id")
	}
	cmdA, cmdB := write(a, "a.txt"), write(b, "b.txt")
	ex := a.Call("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{"evidence"}})
	permitA := ex.Str("permit_id")
	if ex.State() != "pending" || permitA == "" {
		t.Fatalf("exec in ask mode: %s", ex.Raw)
	}
	if err := in.App.Operator.Approve(ctx, permitA, "alice", nil); err != nil {
		t.Fatal(err)
	}
	artA, err := in.App.Artifacts.Put(ctx, routeA, "out.txt", "text/plain; charset=utf-8", "test", []byte("artifact of a"), false)
	if err != nil {
		t.Fatal(err)
	}
	artB, err := in.App.Artifacts.Put(ctx, routeB, "out.txt", "text/plain; charset=utf-8", "test", []byte("artifact of b"), false)
	if err != nil {
		t.Fatal(err)
	}

	listA := uris(listAll(t, a.Session, "conv-a"))
	listB := uris(listAll(t, b.Session, "conv-b"))
	evA, evB := evidence.EvidenceURI(routeA, 0), evidence.EvidenceURI(routeB, 0)
	for _, want := range []string{evA, "hearth://receipts/" + cmdA, "hearth://permits/" + permitA, "hearth://artifacts/" + artA.ID} {
		if !slices.Contains(listA, want) {
			t.Errorf("conversation a's list lacks %s: %v", want, listA)
		}
	}
	for _, other := range []string{evB, "hearth://receipts/" + cmdB, "hearth://artifacts/" + artB.ID} {
		if slices.Contains(listA, other) {
			t.Errorf("conversation a's list shows b's %s", other)
		}
	}
	if !slices.Contains(listB, evB) || !slices.Contains(listB, "hearth://receipts/"+cmdB) || slices.Contains(listB, "hearth://permits/"+permitA) {
		t.Errorf("conversation b's list: %v", listB)
	}

	// Every listed resource reads in its own conversation.
	for _, u := range listA {
		if _, err := readRes(a.Session, "conv-a", u); err != nil {
			t.Errorf("read %s in a: %v", u, err)
		}
	}
	// A's URIs are not found in b, exactly like a URI that names nothing.
	notFound := func(conv, uri string) {
		t.Helper()
		_, err := readRes(b.Session, conv, uri)
		var je *jsonrpc.Error
		if !errors.As(err, &je) || je.Code != mcp.CodeResourceNotFound || je.Message != "Resource not found" {
			t.Errorf("read %s in %q: %v, want resource not found", uri, conv, err)
		}
	}
	for _, u := range []string{evA, "hearth://receipts/" + cmdA, "hearth://permits/" + permitA, "hearth://artifacts/" + artA.ID} {
		notFound("conv-b", u)
		notFound("", u)
	}
	notFound("conv-b", "hearth://receipts/cmd_nosuchcommandxxxxxx")
	notFound("conv-b", "hearth://nothing/here")

	// Conversation a's evidence: a bundle that verifies offline against
	// this installation's key and holds a's entries and none of b's.
	res, err := readRes(a.Session, "conv-a", evA)
	if err != nil {
		t.Fatal(err)
	}
	if res.CacheScope != "private" || len(res.Contents) != 1 || res.Contents[0].MIMEType != "application/json" {
		t.Fatalf("evidence read: %+v", res)
	}
	text := res.Contents[0].Text
	rep, err := ledger.VerifyBundle(strings.NewReader(text), ledger.ExpectKey(in.App.Ledger.PublicKey()))
	if err != nil {
		t.Fatalf("the evidence read over MCP does not verify: %v\n%s", err, text)
	}
	if !rep.Subset || rep.Entries == 0 || rep.InclusionProofs != int(rep.Entries) {
		t.Fatalf("report %+v", rep)
	}
	for _, want := range []string{cmdA, permitA, `permit_approved`, routeA} {
		if !strings.Contains(text, want) {
			t.Errorf("a's evidence lacks %s", want)
		}
	}
	for _, other := range []string{cmdB, routeB} {
		if strings.Contains(text, other) {
			t.Errorf("a's evidence holds b's %s", other)
		}
	}
	if strings.Contains(text, "conv-a") {
		t.Error("the evidence holds the raw conversation id")
	}

	// Without a conversation id: the anonymous scope, none of a's.
	anon := uris(listAll(t, a.Session, ""))
	if len(anon) == 0 || anon[0] != "hearth://conversations/anonymous/evidence" || slices.Contains(anon, "hearth://receipts/"+cmdA) {
		t.Errorf("anonymous list: %v", anon)
	}
	if r, err := readRes(a.Session, "", "hearth://conversations/anonymous/evidence"); err != nil {
		t.Errorf("anonymous evidence: %v", err)
	} else if _, err := ledger.VerifyBundle(strings.NewReader(r.Contents[0].Text)); err != nil {
		t.Errorf("anonymous evidence does not verify: %v", err)
	}

	// A bad cursor and a bad query parameter are invalid params naming the field.
	if _, err := a.Session.ListResources(ctx, &mcp.ListResourcesParams{Meta: convMeta("conv-a"), Cursor: "bm9wZQ"}); err == nil || !strings.Contains(err.Error(), "cursor") {
		t.Errorf("bad cursor: %v", err)
	}
	if _, err := readRes(a.Session, "conv-a", evA+"?after_seq=-1"); err == nil || !strings.Contains(err.Error(), "after_seq") {
		t.Errorf("bad after_seq: %v", err)
	}
}

// TestResourcesCapabilityAndTemplates: initialize advertises resources
// (without subscriptions), templates/list names the four URI shapes, and
// subscribe stays method-not-found.
func TestResourcesCapabilityAndTemplates(t *testing.T) {
	in := hearthtest.Start(t, nil)
	for _, version := range []string{"2025-06-18", ""} {
		c := hearthtest.ConnectVersion(t, in.URL, "caps", version)
		caps := c.Session.InitializeResult().Capabilities
		if caps.Resources == nil || caps.Resources.Subscribe || caps.Resources.ListChanged {
			t.Errorf("%q: resources capability %+v, want declared without subscribe or listChanged", version, caps.Resources)
		}
		tl, err := c.Session.ListResourceTemplates(context.Background(), nil)
		if err != nil {
			t.Fatalf("%q: templates/list: %v", version, err)
		}
		var got []string
		for _, rt := range tl.ResourceTemplates {
			got = append(got, rt.URITemplate)
		}
		want := []string{"hearth://artifacts/{artifact_id}{?offset}", "hearth://conversations/{conversation}/evidence{?after_seq}",
			"hearth://permits/{permit_id}", "hearth://receipts/{command_id}"}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%q: templates %v, want %v", version, got, want)
		}
		if version == "" {
			continue // 2026-07-28 has no resources/subscribe
		}
		err = c.Session.Subscribe(context.Background(), &mcp.SubscribeParams{URI: "hearth://artifacts/x"})
		var je *jsonrpc.Error
		if !errors.As(err, &je) || je.Code != jsonrpc.CodeMethodNotFound {
			t.Errorf("%q: subscribe: %v, want method not found", version, err)
		}
	}
}

// TestResourcesBypassFastPath: resources/list and resources/read reach
// the SDK (with the conversation's _meta), never the tools/call fast path.
func TestResourcesBypassFastPath(t *testing.T) {
	in := hearthtest.Start(t, nil)
	c := hearthtest.Connect(t, in.URL, "fast")
	before := mcpserver.FastCalls(in.App.MCP)
	list := listAll(t, c.Session, "fast")
	if len(list) == 0 {
		t.Fatal("empty list")
	}
	if _, err := readRes(c.Session, "fast", list[0].URI); err != nil {
		t.Fatal(err)
	}
	if n := mcpserver.FastCalls(in.App.MCP) - before; n != 0 {
		t.Fatalf("the fast path answered %d resource requests", n)
	}
}

// TestArtifactResourceBounded: a large artifact is read in parts of at
// most evidence.DefaultReadBytes, each naming the next, and the parts
// together are the artifact; binary content is a blob.
func TestArtifactResourceBounded(t *testing.T) {
	in := hearthtest.Start(t, nil)
	c := hearthtest.Connect(t, in.URL, "big")
	route := mcpserver.Route(map[string]any{"hearth/conversation": "big"})
	data := bytes.Repeat([]byte("0123456789abcdé\n"), (evidence.DefaultReadBytes*5/2)/17)
	m, err := in.App.Artifacts.Put(context.Background(), route, "big.txt", "text/plain", "test", data, false)
	if err != nil {
		t.Fatal(err)
	}
	var got []byte
	uri, parts := "hearth://artifacts/"+m.ID, 0
	for uri != "" {
		if parts++; parts > 10 {
			t.Fatal("too many parts")
		}
		r, err := readRes(c.Session, "big", uri)
		if err != nil {
			t.Fatalf("read %s: %v", uri, err)
		}
		rc := r.Contents[0]
		if len(rc.Text) > evidence.DefaultReadBytes || rc.Blob != nil {
			t.Fatalf("part %d: %d bytes of text, blob %d: want text of at most %d", parts, len(rc.Text), len(rc.Blob), evidence.DefaultReadBytes)
		}
		got = append(got, rc.Text...)
		uri, _ = rc.Meta["hearth/next"].(string)
	}
	if parts != 3 || !bytes.Equal(got, data) {
		t.Fatalf("%d parts, %d bytes reassembled of %d (equal %v)", parts, len(got), len(data), bytes.Equal(got, data))
	}

	bin, err := in.App.Artifacts.Put(context.Background(), route, "x.bin", "application/octet-stream", "test", []byte{0, 1, 2, 0xff}, false)
	if err != nil {
		t.Fatal(err)
	}
	r, err := readRes(c.Session, "big", "hearth://artifacts/"+bin.ID)
	if err != nil {
		t.Fatal(err)
	}
	if rc := r.Contents[0]; !bytes.Equal(rc.Blob, []byte{0, 1, 2, 0xff}) || rc.Text != "" {
		t.Fatalf("binary artifact: %+v", rc)
	}
	raw, _ := json.Marshal(r.Contents[0])
	if !strings.Contains(string(raw), `"blob":"AAEC/w=="`) {
		t.Fatalf("binary artifact on the wire: %s", raw)
	}
}

// TestResourcesNeverShowRawSessionID: a ChatGPT conversation (routed by
// _meta["openai/session"]) lists and reads its evidence under the route's
// hash; the raw session id appears in no URI, list or content.
func TestResourcesNeverShowRawSessionID(t *testing.T) {
	in := hearthtest.Start(t, nil)
	const session = "v1/raw-openai-session-id-123"
	c := hearthtest.Connect(t, in.URL, "")
	meta := mcp.Meta{"openai/session": session}
	r, err := c.TryCall("fs", map[string]any{"operation": "write", "path": filepath.Join(in.Root, "s.txt"), "data": "s"}, meta)
	if err != nil || r.State() != "completed" {
		t.Fatalf("fs.write: %v %v", err, r)
	}
	ctx := context.Background()
	list, err := c.Session.ListResources(ctx, &mcp.ListResourcesParams{Meta: meta})
	if err != nil {
		t.Fatal(err)
	}
	seen, _ := json.Marshal(list)
	if !strings.Contains(string(seen), "hearth://receipts/"+r.Str("command_id")) {
		t.Fatalf("the session's list lacks its receipt: %s", seen)
	}
	for _, res := range list.Resources {
		rr, err := c.Session.ReadResource(ctx, &mcp.ReadResourceParams{Meta: meta, URI: res.URI})
		if err != nil {
			t.Fatalf("read %s: %v", res.URI, err)
		}
		b, _ := json.Marshal(rr)
		seen = append(seen, b...)
	}
	if strings.Contains(string(seen), "raw-openai-session") {
		t.Fatalf("the raw session id appears in the resources: %s", seen)
	}
}
