package web_test

import (
	"context"
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// TestCardListsPinnedFilesAndNamesTheOneThatChanged: the card of a
// program call lists the files Always allow pins (the program's and the
// script its argument names); after the script is rewritten, the same
// call asks again and its card names the script. A build program's card
// says its rule trusts the folder; a git rule with no arguments is
// listed as any git command.
func TestCardListsPinnedFilesAndNamesTheOneThatChanged(t *testing.T) {
	f := newFixture(t, nil)
	b := f.login(t)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "tidy.ahk")
	if err := os.WriteFile(script, []byte("MsgBox tidy\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	call := map[string]any{"operation": "exec", "command": "cat", "args": []string{"tidy.ahk"}, "cwd": dir}
	r := hearthtest.Connect(t, f.in.URL, "pins-1").Call("machine", call)
	pid, _ := r.Get("permit_id").(string)
	if pid == "" {
		t.Fatalf("cat under ask must wait for a permit: %s", r.Raw)
	}
	page := f.get(t, b, "/permits")
	if !strings.Contains(page, `data-testid="permit-pins"`) || !strings.Contains(page, `<code data-testid="permit-pin">`+html.EscapeString(script)+`</code>`) {
		t.Fatalf("the card does not list %s among the files Always allow pins:\n%s", script, page)
	}
	f.post(t, b, "/permits/"+pid+"/approve", "operator", "Ada", "scope", "always", "program", "cat", "arg", "tidy.ahk", "cwd_root", dir)
	if err := os.WriteFile(script, []byte("Run, calc.exe\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = hearthtest.Connect(t, f.in.URL, "pins-2").Final("machine", call)
	if r.State() != "pending" || r.Get("permit_id") == nil {
		t.Fatalf("cat of the rewritten script ran under its rule: %s", r.Raw)
	}
	page = f.get(t, b, "/permits")
	if !strings.Contains(page, `data-testid="permit-pin-changed"`) || !strings.Contains(page, "<code>"+html.EscapeString(script)+"</code> changed since you chose Always allow") {
		t.Fatalf("the card does not say %s changed:\n%s", script, page)
	}

	r = hearthtest.Connect(t, f.in.URL, "pins-3").Call("machine", map[string]any{"operation": "exec", "command": "go", "args": []string{"vet", "./..."}, "cwd": dir})
	if r.Get("permit_id") == nil {
		t.Fatalf("go vet under ask must wait for a permit: %s", r.Raw)
	}
	if page = f.get(t, b, "/permits"); !strings.Contains(page, `data-testid="trusts-folder-note"`) {
		t.Fatalf("a build program's card does not say its rule trusts the folder:\n%s", page)
	}

	if _, err := f.in.App.Operator.AddRule(context.Background(), "ada", "git", ""); err != nil {
		t.Fatal(err)
	}
	if page = f.get(t, b, "/permits"); !strings.Contains(page, "any git command, including ones that write anywhere") {
		t.Fatalf("a git rule with no arguments is not listed as any git command:\n%s", page)
	}
}
