//go:build !windows

package govern_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// The file operations (fs.move, copy, mkdir, trash) through the real MCP
// server, dispatcher and governance in the default configuration: each
// file they carry is judged as a write at its destination and, for a move
// or a trash, as a removal at its source.

// docContent is a document of kind ext whose start is that kind's own.
func docContent(ext string, i int) string {
	body := fmt.Sprintf(" document %d of the tidy test\n", i)
	switch ext {
	case "pdf":
		return "%PDF-1.4\n%" + body
	case "docx", "xlsx":
		// A package free of macros, as Office writes one.
		var b bytes.Buffer
		z := zip.NewWriter(&b)
		for _, part := range []string{"[Content_Types].xml", "docProps/app.xml"} {
			w, _ := z.Create(part)
			w.Write([]byte("<x>" + body + "</x>"))
		}
		z.Close()
		return b.String()
	case "jpg":
		return "\xff\xd8\xff\xe0" + body
	}
	return body
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// fsCall calls fs and reports whether it asked the operator (answered
// pending on a permit); an answer pending only because the machine is
// slow is waited for.
func fsCall(t *testing.T, c *hearthtest.Client, args map[string]any) (*hearthtest.Result, bool) {
	t.Helper()
	r := c.Call("fs", args)
	if r.State() != "pending" {
		return r, false
	}
	if r.Get("permit_id") != nil {
		return r, true
	}
	env, _ := c.WaitArrival(r.Str("future_id"), r)["envelope"].(map[string]any)
	raw, _ := json.Marshal(env)
	return &hearthtest.Result{Env: env, Raw: raw}, false
}

// TestTidyDownloadsAsksNothingAndUndoAllRestores is the fatigue test of
// the file operations: "tidy my Downloads" — 200 mixed documents sorted
// into folders by type and year, the duplicates trashed — asks the
// operator 0 times, and the operator's Undo all of that chat puts every
// file back in its place (checked by path and SHA-256) and removes the
// folders it made.
func TestTidyDownloadsAsksNothingAndUndoAllRestores(t *testing.T) {
	in, home := askHome(t)
	ctx := context.Background()
	downloads := filepath.Join(home, "Downloads")
	exts := []string{"pdf", "docx", "xlsx", "jpg", "txt"}
	want := map[string]string{}
	var mkdirs, moves, trashes []any
	made := map[string]bool{}
	for i := range 200 {
		ext := exts[i%len(exts)]
		name, content := fmt.Sprintf("scan %03d.%s", i, ext), docContent(ext, i)
		dup := i%10 == 9
		if dup {
			prev := exts[(i-1)%len(exts)]
			name, content = fmt.Sprintf("scan %03d (1).%s", i-1, prev), docContent(prev, i-1)
			ext = prev
		}
		p := filepath.Join(downloads, name)
		if err := os.MkdirAll(downloads, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		year := 2022 + i%3
		mt := time.Date(year, time.Month(1+i%12), 3, 10, 0, 0, 0, time.UTC)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
		want[p] = sha(content)
		if dup {
			trashes = append(trashes, map[string]any{"path": p})
			continue
		}
		folder := filepath.Join(home, "Documents", "Sorted", strings.ToUpper(ext), strconv.Itoa(year))
		if !made[folder] {
			made[folder] = true
			mkdirs = append(mkdirs, map[string]any{"path": folder})
		}
		moves = append(moves, map[string]any{"from": p, "to": folder})
	}
	c := hearthtest.Connect(t, in.URL, "tidy-downloads")
	asked := 0
	// What a model does: list what is there, then one call per kind of
	// work.
	if r, ask := fsCall(t, c, map[string]any{"operation": "list", "path": downloads, "sort": "modified", "limit": 1000}); ask || r.State() != "completed" || r.Num("result.total") != 200 {
		t.Fatalf("list: %s", r.Raw)
	}
	for _, call := range []map[string]any{
		{"operation": "mkdir", "items": mkdirs},
		{"operation": "move", "items": moves},
		{"operation": "trash", "items": trashes},
	} {
		r, ask := fsCall(t, c, call)
		if ask {
			asked++
			ps, _ := in.App.Operator.Permits(ctx, "pending")
			for _, p := range ps {
				t.Logf("fs.%s asked: %s (%s: %s)", call["operation"], p.Case, p.Subject, p.Said)
			}
			continue
		}
		if r.State() != "completed" || r.Str("result.status") != "completed" {
			t.Fatalf("fs.%s: %s", call["operation"], r.Raw)
		}
	}
	if asked != 0 {
		t.Fatalf("tidying 200 documents asked %d times", asked)
	}
	if ps, err := in.App.Operator.Permits(ctx, "pending"); err != nil || len(ps) != 0 {
		t.Fatalf("permits are waiting after tidying documents: %v %+v", err, ps)
	}
	if des, _ := os.ReadDir(downloads); len(des) != 0 {
		t.Fatalf("Downloads still holds %d entries", len(des))
	}

	chats, err := in.App.FS.Chats(ctx)
	if err != nil || len(chats) != 1 {
		t.Fatalf("chats %+v %v", chats, err)
	}
	if chats[0].Changes != 3 {
		t.Fatalf("the chat's three calls are %d changes on the page, want 3", chats[0].Changes)
	}
	rep, err := in.App.FS.UndoChat(ctx, "alice", chats[0].Key)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Files {
		if f.Outcome != "restored" && f.Outcome != "trashed" {
			t.Errorf("%s: %s (%s)", f.Path, f.Outcome, f.Why)
		}
	}
	for p, sum := range want {
		b, err := os.ReadFile(p)
		if err != nil || sha(string(b)) != sum {
			t.Errorf("%s not back as it was: %v", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(home, "Documents")); err == nil {
		t.Error("the folders the chat made are still there")
	}
}

// TestFileOpsAskByWhatMoves: a batch that carries a program asks once,
// naming it; a move into the autostart folder asks; a trash of .bashrc or
// of a program asks; nothing is done while they wait; read-only refuses
// even a document.
func TestFileOpsAskByWhatMoves(t *testing.T) {
	in, home := askHome(t)
	ctx := context.Background()
	write := func(rel, content string, mode os.FileMode) string {
		t.Helper()
		p := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var items []any
	for i := range 36 {
		p := write(fmt.Sprintf("Downloads/invoice %02d.pdf", i), docContent("pdf", i), 0o644)
		items = append(items, map[string]any{"from": p, "to": filepath.Join(home, "Documents", "Invoices")})
	}
	setup := write("Downloads/setup.exe", "MZ\x90\x00\x03\x00\x00\x00 a program", 0o644)
	items = append(items, map[string]any{"from": setup, "to": filepath.Join(home, "Documents", "Invoices")})
	desktop := write("Documents/notes.desktop", "[Desktop Entry]\nExec=/bin/true\n", 0o644)
	bashrc := write(".bashrc", "export A=1\n", 0o644)
	tool := write("bin/tidy-tool", "#!/bin/sh\necho hi\n", 0o755)

	c := hearthtest.Connect(t, in.URL, "ask-by-what-moves")
	for _, tc := range []struct {
		name  string
		args  map[string]any
		names string // the permit's subject names it
		still string // a file that must not have moved while it waits
	}{
		{"a batch with a program", map[string]any{"operation": "move", "items": items}, "setup.exe", setup},
		{"a move into autostart", map[string]any{"operation": "move", "from": desktop, "to": filepath.Join(home, ".config", "autostart", "notes.desktop")}, "autostart", desktop},
		{"a trash of .bashrc", map[string]any{"operation": "trash", "path": bashrc}, ".bashrc", bashrc},
		{"a trash of a program", map[string]any{"operation": "trash", "path": tool}, "tidy-tool", tool},
		{"a copy of a program", map[string]any{"operation": "copy", "from": tool, "to": filepath.Join(home, "Documents", "tool copy")}, "tool", tool},
	} {
		r, ask := fsCall(t, c, tc.args)
		if !ask {
			t.Errorf("%s did not ask: %s", tc.name, r.Raw)
			continue
		}
		ps, err := in.App.Operator.Permits(ctx, "pending")
		if err != nil || len(ps) == 0 {
			t.Fatalf("%s: no permit: %v", tc.name, err)
		}
		if p := ps[0]; !strings.Contains(p.Subject+" "+p.Said, tc.names) {
			t.Errorf("%s: the card says %q / %q, not naming %s", tc.name, p.Subject, p.Said, tc.names)
		}
		if _, err := os.Stat(tc.still); err != nil {
			t.Errorf("%s: moved while it waits: %v", tc.name, err)
		}
		// The permit keeps the items that ask, for the card that names
		// them: of the 37, only the program, with why.
		if tc.name == "a batch with a program" {
			if a := ps[0].Asks; len(a) != 1 || a[0].Item != 36 || filepath.Base(a[0].Path) != "setup.exe" || a[0].Said != ps[0].Said {
				t.Errorf("the batch's permit keeps as the items that ask %+v, want item 36, setup.exe, %q", a, ps[0].Said)
			}
		} else if tc.args["items"] == nil && (len(ps[0].Asks) != 1 || ps[0].Asks[0].Item != 0) {
			t.Errorf("%s: the permit keeps as the items that ask %+v, want its one item", tc.name, ps[0].Asks)
		}
	}
	if _, err := os.Stat(filepath.Join(home, "Documents", "Invoices")); err == nil {
		t.Error("the batch with a program moved something before the operator decided")
	}

	// A batch of documents alone runs without asking.
	r, ask := fsCall(t, c, map[string]any{"operation": "move", "items": items[:36]})
	if ask || r.Str("result.status") != "completed" || r.Num("result.done") != 36 {
		t.Fatalf("a document batch: asked %v: %s", ask, r.Raw)
	}

	if err := in.App.Operator.SetPolicy(ctx, "alice", config.ModeReadOnly); err != nil {
		t.Fatal(err)
	}
	doc := filepath.Join(home, "Documents", "Invoices", "invoice 00.pdf")
	r, _ = fsCall(t, c, map[string]any{"operation": "move", "from": doc, "to": filepath.Join(home, "Documents", "x.pdf")})
	if r.State() != "blocked" {
		t.Fatalf("read-only: %s", r.Raw)
	}
	if _, err := os.Stat(doc); err != nil {
		t.Fatalf("read-only moved the file: %v", err)
	}
}
