package app_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/app"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/internal/update"
)

// TestUpdateWhenDoneDoesNotStopADetachedExec: the operator clicks "Update
// when they are done" while a detached machine.exec runs. Nothing is
// handed over while it runs, the page's words say what runs, the exec
// finishes with its own output (not blocked/unknown), and the update is
// handed over once Hearth is quiet; the ledger records the click and the
// start at the quiet moment, both naming the version handed over.
func TestUpdateWhenDoneDoesNotStopADetachedExec(t *testing.T) {
	skey, vkey, err := update.GenerateKey("hearth-release-test")
	if err != nil {
		t.Fatal(err)
	}
	// A package with a program in it: the test's hand-over only records
	// the plan.
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	if w, err := zw.Create(update.ProgramName()); err != nil {
		t.Fatal(err)
	} else {
		w.Write([]byte("#!/bin/sh\nexit 0\n"))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	pkg := zbuf.Bytes()
	sum := sha256.Sum256(pkg)
	var manifest []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/manifest":
			w.Write(manifest)
		default:
			w.Write(pkg)
		}
	}))
	defer srv.Close()
	m := update.Manifest{Version: "1.1.0", MinVersion: "1.0.0", Changes: "Faster.", Platforms: map[string]update.Artifact{
		update.Platform(): {URL: srv.URL + "/hearth.zip", Size: int64(len(pkg)), SHA256: hex.EncodeToString(sum[:])}}}
	if manifest, err = update.SignManifest(m, skey); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var plans []update.Plan
	in := hearthtest.StartWith(t, func(c *config.Config) {
		hearthtest.Trusted(c)
		c.Update.URL = srv.URL + "/manifest"
	}, func(o *app.Options) {
		o.Version, o.UpdateKey = "1.0.0", vkey
		o.Handoff = func(p update.Plan) { mu.Lock(); plans = append(plans, p); mu.Unlock() }
	})
	ctx := context.Background()
	deadline := time.Now().Add(20 * time.Second)
	for in.App.Updates.State().Offer == nil {
		if time.Now().After(deadline) {
			t.Fatalf("no offer: %+v", in.App.Updates.State())
		}
		time.Sleep(20 * time.Millisecond)
	}

	c := hearthtest.Connect(t, in.URL, "update-when-done")
	marks := t.TempDir()
	started, release := filepath.Join(marks, "started"), filepath.Join(marks, "release")
	r := c.Call("machine", map[string]any{"operation": "exec", "command": "sh", "args": []string{"-c",
		"touch " + started + "; while [ ! -f " + release + " ]; do sleep 0.05; done; echo finished"}, "detach": true})
	id, _ := r.Get("future_id").(string)
	if id == "" {
		t.Fatalf("detached exec: %s", r.Raw)
	}
	for _, err := os.Stat(started); err != nil; _, err = os.Stat(started) {
		if time.Now().After(deadline) {
			t.Fatal("the exec never started")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if busy := in.App.UpdateBusy(ctx); busy != "1 task is running" {
		t.Fatalf("busy: %q", busy)
	}
	if err := in.App.InstallUpdate(ctx, "Ann", true); err != nil {
		t.Fatal(err)
	}
	if st := in.App.Updates.State(); !st.Waiting {
		t.Fatalf("not waiting: %+v", st)
	}
	mu.Lock()
	n := len(plans)
	mu.Unlock()
	if n != 0 {
		t.Fatal("handed over while the exec ran")
	}
	os.WriteFile(release, nil, 0o600)
	var arrival map[string]any
	for arrival == nil {
		if time.Now().After(deadline.Add(20 * time.Second)) {
			t.Fatal("the exec's result never arrived")
		}
		for _, a := range c.Call("machine", map[string]any{"operation": "host_info"}).Arrivals() {
			if a["future_id"] == id {
				arrival = a
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if hearthtest.Get(arrival, "envelope.state") != "completed" || hearthtest.Get(arrival, "envelope.result.stdout.text") != "finished\n" {
		t.Fatalf("the exec did not finish by itself: %v", arrival)
	}
	for {
		mu.Lock()
		n := len(plans)
		mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline.Add(40 * time.Second)) {
			t.Fatalf("never handed over: %+v", in.App.Updates.State())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Both ends in the ledger, naming the version handed over: the click
	// (newest second) and the start at the quiet moment.
	entries, err := in.App.Ledger.Newest(ctx, ledger.KindFilter{Kinds: []string{app.KindUpdateInstall}}, 2, 0)
	if err != nil || len(entries) != 2 {
		t.Fatalf("ledger: %v %v", entries, err)
	}
	for i, want := range []string{`"when":"started when done"`, `"when":"when done"`} {
		if d := string(entries[i].Data); !strings.Contains(d, want) || !strings.Contains(d, `"to":"`+plans[0].To+`"`) || plans[0].To != "1.1.0" {
			t.Fatalf("ledger entry %d: %s (handed over %s)", i, d, plans[0].To)
		}
	}
}
