package session

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/artifacts"
	"github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/store"
)

// testEnv is a Manager over a real database, ledger and artifact store.
type testEnv struct {
	t   testing.TB
	dir string
	db  *store.DB
	led *ledger.Ledger
	m   *Manager
}

var convA = &primitive.Call{Route: "route-a", CommandID: "cmd_test"}

func testOptions() Options {
	return Options{MaxSessions: 4, BufferBytes: 1 << 20, TranscriptBytes: 4 << 20, IdleTimeout: time.Minute, MaxReadBytes: 16 << 10}
}

func newEnv(t testing.TB, edit func(*Options)) *testEnv {
	t.Helper()
	dir := t.TempDir()
	db, err := store.Open(context.Background(), filepath.Join(dir, "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	e := &testEnv{t: t, dir: dir, db: db}
	skey, _, err := ledger.LoadOrCreateKey(ledger.FileKeyStore{Path: filepath.Join(dir, "ledger.key")})
	if err != nil {
		t.Fatal(err)
	}
	if e.led, err = ledger.Open(db, skey); err != nil {
		t.Fatal(err)
	}
	e.m = e.manager(edit)
	return e
}

// manager builds and starts a Manager over the env's database, stopped
// at the end of the test.
func (e *testEnv) manager(edit func(*Options)) *Manager {
	e.t.Helper()
	o := testOptions()
	o.DB, o.Ledger, o.Artifacts = e.db, e.led, &artifacts.Store{DB: e.db, Dir: filepath.Join(e.dir, "artifacts")}
	if edit != nil {
		edit(&o)
	}
	m, err := New(o)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := m.Start(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(m.Stop)
	return m
}

func (e *testEnv) start(command string, args ...string) *Info {
	e.t.Helper()
	info, err := e.m.StartSession(context.Background(), convA, StartInput{Command: command, Args: args})
	if err != nil {
		e.t.Fatalf("start %s: %v", command, err)
	}
	return info
}

func (e *testEnv) send(id, text string, keys ...string) *SendResult {
	e.t.Helper()
	r, err := e.m.Send(context.Background(), convA, id, text, keys)
	if err != nil {
		e.t.Fatalf("send %q %v: %v", text, keys, err)
	}
	return r
}

// readUntil reads from offset until want appears, failing after 20 s.
func (e *testEnv) readUntil(id string, offset int64, want string) *ReadResult {
	e.t.Helper()
	r, err := e.m.Read(context.Background(), convA, ReadInput{SessionID: id, Offset: &offset, WaitMS: 20_000, Until: want})
	if err != nil {
		e.t.Fatalf("read until %q: %v", want, err)
	}
	if !strings.Contains(r.Text, want) {
		e.t.Fatalf("read until %q: got %q", want, r.Text)
	}
	return r
}

// closedEntries are the ledger's session_closed entries, oldest first.
func (e *testEnv) closedEntries() []map[string]any {
	e.t.Helper()
	es, err := e.led.Tail(context.Background(), 1000)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []map[string]any
	for _, en := range es {
		if en.Kind != KindClosed {
			continue
		}
		var d map[string]any
		if err := json.Unmarshal(en.Data, &d); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

func wantFailure(t testing.TB, err error, code string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want a %s failure, got none", code)
	}
	if pe := primitive.AsError(err); pe.Code != code {
		t.Fatalf("want code %s, got %s: %v", code, pe.Code, err)
	}
}
