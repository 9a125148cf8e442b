package govern_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/internal/startup/startuptest"
	"github.com/hearth-dev/hearth/internal/store"
)

// TestNewChecksItsParts: the governor is not built without what it needs
// to journal and decide, and the refusal names the missing part.
func TestNewChecksItsParts(t *testing.T) {
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	skey, _, err := ledger.LoadOrCreateKey(ledger.FileKeyStore{Path: filepath.Join(t.TempDir(), "ledger.key")})
	if err != nil {
		t.Fatal(err)
	}
	l, err := ledger.Open(db, skey)
	if err != nil {
		t.Fatal(err)
	}
	futures, err := dispatch.NewFutureReader(db)
	if err != nil {
		t.Fatal(err)
	}
	good := govern.Options{DB: db, Ledger: l, Futures: futures, Startup: startuptest.Index(t), DefaultMode: config.ModeAsk, PermitTTL: time.Minute}
	for _, tc := range []struct {
		name string
		edit func(*govern.Options)
		want string
	}{
		{"no database", func(o *govern.Options) { o.DB = nil }, "DB"},
		{"no ledger", func(o *govern.Options) { o.Ledger = nil }, "Ledger"},
		{"no future reader", func(o *govern.Options) { o.Futures = nil }, "Futures"},
		{"no startup index", func(o *govern.Options) { o.Startup = nil }, "Startup"},
		{"no permit lifetime", func(o *govern.Options) { o.PermitTTL = 0 }, "PermitTTL"},
		{"unknown mode", func(o *govern.Options) { o.DefaultMode = "yolo" }, "DefaultMode"},
		{"no mode", func(o *govern.Options) { o.DefaultMode = "" }, "DefaultMode"},
	} {
		o := good
		tc.edit(&o)
		if g, err := govern.New(o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: New = %v, %v; want an error naming %s", tc.name, g, err, tc.want)
		}
	}
	g, err := govern.New(good)
	if err != nil {
		t.Fatal(err)
	}
	if g.Log == nil {
		t.Fatal("a governor built without a Log must still have one (discarding)")
	}
	st, err := g.Status(context.Background())
	if err != nil || st.Mode != config.ModeAsk {
		t.Fatalf("the built governor's status: %+v, %v", st, err)
	}
}
