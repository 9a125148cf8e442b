package web_test

import (
	"html"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/web/changes"
)

var chatLinkHref = regexp.MustCompile(`href="(/changes\?chat=[^"]+)"[^>]*data-testid="chat-link"`)

// TestUndoOfCreatedFilesSaysTheyWentToTheTrash: a chat creates two files
// (one of them twice) and rewrites one the person had (through the real
// MCP server and fs tool, then the real panel); the page counts and
// offers Undo only for the changes that can be undone on their own; Undo all puts the rewritten one back
// and moves the two created ones to the trash; the Redo line says exactly
// that, never "You put 3 files back". No diff on the page shows a hunk
// header ("@@ -0,0 +1,1 @@").
func TestUndoOfCreatedFilesSaysTheyWentToTheTrash(t *testing.T) {
	f := newFixture(t, nil)
	b := f.login(t)
	c := hearthtest.Connect(t, f.in.URL, "conv-trash-words")
	mine := filepath.Join(f.in.Root, "mine.txt")
	if err := os.WriteFile(mine, []byte("my words\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, w := range []map[string]any{
		{"operation": "write", "path": filepath.Join(f.in.Root, "new1.txt"), "data": "one\n"},
		{"operation": "write", "path": filepath.Join(f.in.Root, "new2.txt"), "data": "two\n"},
		{"operation": "write", "path": mine, "data": "the chat's words\n"},
		{"operation": "write", "path": filepath.Join(f.in.Root, "new1.txt"), "data": "one more\n"},
	} {
		if r := c.Final("fs", w); r.State() != "completed" {
			t.Fatalf("write: %s", r.Raw)
		}
	}
	m := chatLinkHref.FindStringSubmatch(f.get(t, b, "/changes"))
	if m == nil {
		t.Fatal("no chat on the Changes page")
	}
	link := html.UnescapeString(m[1])
	page := f.get(t, b, link)
	if strings.Contains(page, "@@") {
		t.Fatalf("a diff on the Changes page shows a hunk header:\n%s", page)
	}
	// new1.txt's first change is no longer as the file is: it cannot be
	// undone on its own, so it has no Undo button and is not counted.
	if n := strings.Count(page, `data-testid="undo-one-button"`); n != 3 || !strings.Contains(mainText(page), "3 changes can still be undone") ||
		strings.Count(page, `data-testid="change-later"`) != 1 {
		t.Fatalf("%d Undo buttons for 4 changes of which 3 can be undone:\n%.600s", n, strings.Join(strings.Fields(mainText(page)), " "))
	}
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	key := u.Query().Get("chat")
	if r := f.post(t, b, "/changes/undo-all", "operator", "Ann", "chat", key); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("undo all: %d %s", r.StatusCode, r.body)
	}
	page = f.get(t, b, link)
	words := mainText(page[strings.Index(page, `data-testid="redo-words"`)-4:])
	want := "You put 1 file back and moved 2 files the chat had created to the " + changes.TrashName()
	if !strings.Contains(words, want) || strings.Contains(words, "You put 3 files back") {
		t.Fatalf("the Redo line does not say what the undo did (want %q):\n%.400s", want, strings.Join(strings.Fields(words), " "))
	}
}
