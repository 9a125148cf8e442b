package demo

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hearth-dev/hearth/internal/ledger"
)

// conversationEvidence reads the demo conversation's evidence the way a
// model would, as an MCP resource (resources/list names it, resources/read
// returns it in parts), and verifies every part offline against the
// ledger's key. It returns how many entries the parts hold.
func (d *demo) conversationEvidence(ctx context.Context) (int64, int, error) {
	meta := mcp.Meta{"hearth/conversation": d.c.conversation}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	list, err := d.c.session.ListResources(ctx, &mcp.ListResourcesParams{Meta: meta})
	if err != nil {
		return 0, 0, fmt.Errorf("resources/list: %w", err)
	}
	if len(list.Resources) == 0 || !strings.HasSuffix(list.Resources[0].URI, "/evidence") {
		return 0, 0, fmt.Errorf("resources/list does not begin with the conversation's evidence: %d resources", len(list.Resources))
	}
	var entries int64
	parts := 0
	for uri := list.Resources[0].URI; uri != ""; parts++ {
		if parts == 1000 {
			return 0, 0, fmt.Errorf("the evidence does not end after %d parts", parts)
		}
		res, err := d.c.session.ReadResource(ctx, &mcp.ReadResourceParams{Meta: meta, URI: uri})
		if err != nil {
			return 0, 0, fmt.Errorf("resources/read %s: %w", uri, err)
		}
		if len(res.Contents) != 1 {
			return 0, 0, fmt.Errorf("resources/read %s: %d contents", uri, len(res.Contents))
		}
		rep, err := ledger.VerifyBundle(strings.NewReader(res.Contents[0].Text), ledger.ExpectKey(d.app().Ledger.PublicKey()))
		if err != nil {
			return 0, 0, fmt.Errorf("offline verification of %s: %w", uri, err)
		}
		entries += rep.Entries
		uri, _ = res.Contents[0].Meta["hearth/next"].(string)
	}
	if entries == 0 {
		return 0, 0, fmt.Errorf("the conversation's evidence holds no entries")
	}
	return entries, parts, nil
}
