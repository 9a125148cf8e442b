package fsops

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestDenyAtRuntime: a path denied after the Engine was built (as Hearth
// does when the operator pins a tunnel-client while it runs) is refused to
// the Engine's own copy of the Roots for reading and writing, pruned from
// a search, and its sibling stays reachable. Fs calls running while it is
// denied do not race with Deny.
func TestDenyAtRuntime(t *testing.T) {
	env := newTestEngine(t)
	ctx := context.Background()
	dir := env.path("bin")
	pinned, beside := filepath.Join(dir, "tunnel-client"), filepath.Join(dir, "notes.txt")
	writeFiles(t, map[string]string{pinned: "needle program", beside: "needle notes"})
	if _, err := env.e.Read(ctx, ReadInput{Path: pinned}); err != nil {
		t.Fatalf("read before Deny: %v", err)
	}

	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				env.e.Roots.Resolve(pinned)
				env.e.Search(ctx, SearchInput{Path: dir, Query: "needle"})
			}
		})
	}
	// A copy, as app keeps none but any holder of Roots might.
	roots := env.e.Roots
	err := roots.Deny(pinned)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if err := roots.Deny(pinned); err != nil {
		t.Fatalf("denying again: %v", err)
	}
	if n := len(roots.denied.load()); n != 2 {
		t.Errorf("denied list has %d entries after denying one path twice, want 2 (the data directory and the pin)", n)
	}

	if _, err := env.e.Read(ctx, ReadInput{Path: pinned}); ruleOf(err) != RuleDenied {
		t.Errorf("read of a denied file: %v", err)
	}
	_, err = env.e.Write(ctx, "r1", WriteInput{Path: pinned, Data: "planted", ExpectedSHA256: expectOf(t, "needle program")})
	if ruleOf(err) != RuleDenied {
		t.Errorf("write of a denied file: %v", err)
	}
	if _, err := env.e.Write(ctx, "r2", WriteInput{Path: beside, Data: "still mine", ExpectedSHA256: expectOf(t, "needle notes")}); err != nil {
		t.Errorf("write beside the denied file: %v", err)
	}
	res, err := env.e.Search(ctx, SearchInput{Path: dir, Query: "needle"})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range res.Matches {
		if strings.HasSuffix(m.Path, "tunnel-client") {
			t.Errorf("search reached the denied file: %+v", m)
		}
	}

	if err := roots.Deny("relative/tunnel-client"); err == nil || !strings.Contains(err.Error(), "relative/tunnel-client") || !strings.Contains(err.Error(), "absolute") {
		t.Errorf("Deny of a relative path: %v", err)
	}
	if err := (Roots{}).Deny(pinned); err == nil {
		t.Error("Deny on Roots not built by NewRoots succeeded")
	}
	var ce *ContainmentError
	if _, err := env.e.Stat(ctx, StatInput{Path: pinned}); !errors.As(err, &ce) || ce.Rule != RuleDenied {
		t.Errorf("stat of a denied file: %v", err)
	}
}

// expectOf is the Expect of a file whose content is s.
func expectOf(t *testing.T, s string) Expect {
	t.Helper()
	e, err := ExpectSHA(hashBytes([]byte(s)))
	if err != nil {
		t.Fatal(err)
	}
	return e
}
