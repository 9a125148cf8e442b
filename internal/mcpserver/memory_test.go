package mcpserver_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// memoryCalls is how many calls TestMemoryDoesNotGrowWithCalls serves
// before its first measure and between the two, and the growth it allows:
// room for the heap's noise, a fifth of what a leak of 2 KiB per call
// would add, so that a leak of 1 KiB per call fails it. Under the race
// detector (calls are several times slower) a quarter as many calls, and a
// quarter of the room.
func memoryCalls() (warm, more int, room uint64) {
	if raceEnabled {
		return 1_000, 4_000, 2 << 20
	}
	return 5_000, 20_000, 8 << 20
}

// TestMemoryDoesNotGrowWithCalls serves read and write calls (fs.stat,
// fs.read, fs.write, machine.host_info, detached) from four go-sdk clients over
// loopback to a real Hearth, in ever new conversations and without one,
// and checks that the live heap after a collection, once the first calls
// have warmed every cache, does not grow with the calls that follow.
func TestMemoryDoesNotGrowWithCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("serves tens of thousands of calls")
	}
	in := hearthtest.Start(t, hearthtest.Trusted)
	ctx := context.Background()
	const clients = 4
	var sessions [clients]*mcp.ClientSession
	for c := range clients {
		if err := os.WriteFile(filepath.Join(in.Root, fmt.Sprintf("read-%d.txt", c)), []byte("a file to read\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		cl := mcp.NewClient(&mcp.Implementation{Name: "memory", Version: "1"}, nil)
		s, err := cl.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: in.URL, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		defer s.Close()
		sessions[c] = s
	}
	next := 0 // calls served so far
	serve := func(n int) {
		t.Helper()
		var wg sync.WaitGroup
		for c := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := next + c; i < next+n; i += clients {
					if !call(t, sessions[c], in.Root, c, i) {
						return
					}
				}
			}()
		}
		wg.Wait()
		next += n
		if t.Failed() {
			t.FailNow()
		}
	}
	warm, more, room := memoryCalls()
	serve(warm)
	before := liveHeap()
	serve(more)
	after := liveHeap()
	t.Logf("live heap after %d calls: %.1f MiB; after %d more: %.1f MiB (%+.0f bytes per call)",
		warm, mib(before), more, mib(after), (float64(after)-float64(before))/float64(more))
	if after > before+room {
		t.Fatalf("the live heap grew from %.1f MiB to %.1f MiB over %d calls (more than %.1f MiB): something keeps memory per call",
			mib(before), mib(after), more, mib(room))
	}
}

// call makes call number i from client c: fs.stat and fs.read, one call
// in eight machine.host_info (half of those detached: the result arrives
// on a later call of the conversation), one in thirty-two fs.write (few:
// each write is made durable on disk); in a conversation that changes
// every ten calls, one call in eight in none (i%8 == 5, never a detached
// call).
func call(t *testing.T, s *mcp.ClientSession, root string, c, i int) bool {
	t.Helper()
	tool, args := "fs", map[string]any{}
	switch {
	case i%32 == 31:
		args = map[string]any{"operation": "write", "path": filepath.Join(root, fmt.Sprintf("write-%d.txt", c)), "data": fmt.Sprintf("version %d\n", i)}
	case i%8 == 3:
		tool, args = "machine", map[string]any{"operation": "host_info"}
		if i%16 == 3 {
			args["detach"] = true
		}
	case i%2 == 0:
		args = map[string]any{"operation": "stat", "path": filepath.Join(root, fmt.Sprintf("read-%d.txt", c))}
	default:
		args = map[string]any{"operation": "read", "path": filepath.Join(root, fmt.Sprintf("read-%d.txt", c))}
	}
	meta := mcp.Meta{"hearth/conversation": fmt.Sprintf("memory-%d", i/10)}
	if i%8 == 5 {
		meta = nil
	}
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args, Meta: meta})
	if err != nil {
		t.Errorf("call %d (%s %v): %v", i, tool, args["operation"], err)
		return false
	}
	if res.IsError {
		t.Errorf("call %d (%s %v) failed: %+v", i, tool, args["operation"], res.StructuredContent)
		return false
	}
	return true
}

// liveHeap is the heap still reachable after a full collection.
func liveHeap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func mib(n uint64) float64 { return float64(n) / (1 << 20) }
