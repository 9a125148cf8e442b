//go:build !windows

package govern_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/risk"
	"github.com/hearth-dev/hearth/internal/startup"
)

// put writes content at path, making its folders.
func put(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFilesWhatStartsByItselfNamesAsk: through the real MCP server,
// dispatcher and governance, in ask mode, a write of a file that
// something the user already starts runs or includes waits for the
// operator, its file untouched, and the card says which entry runs it:
// the script an autostart entry runs through python3, a systemd user
// unit's script, a file .bashrc sources, a file ~/.gitconfig includes, a
// file ~/.ssh/config includes, and usercustomize.py in a folder a .pth
// of the user site-packages puts on Python's path.
func TestFilesWhatStartsByItselfNamesAsk(t *testing.T) {
	in, home := askHome(t)
	ctx := context.Background()
	put(t, filepath.Join(home, ".config", "autostart", "tray.desktop"), "[Desktop Entry]\nType=Application\nName=Tray\nExec=/usr/bin/python3 ~/apps/tray/tray.py\n")
	put(t, filepath.Join(home, ".config", "systemd", "user", "sync.service"), "[Service]\nExecStart=/bin/sh %h/tools/sync.sh\n")
	put(t, filepath.Join(home, ".bashrc"), "[ -f ~/dotfiles/aliases.sh ] && . ~/dotfiles/aliases.sh\n")
	put(t, filepath.Join(home, ".gitconfig"), "[include]\n\tpath = ~/dotfiles/git-extra.conf\n")
	put(t, filepath.Join(home, ".ssh", "config"), "Include ~/dotfiles/ssh-hosts.conf\n")
	put(t, filepath.Join(home, ".local", "lib", "python3.12", "site-packages", "__editable__.proj.pth"), filepath.Join(home, "src", "proj")+"\n")
	cases := []struct{ path, data, says string }{
		{filepath.Join(home, "apps", "tray", "tray.py"), "print('tray')\n", "change tray.py, which the autostart entry “Tray” runs every time you sign in"},
		{filepath.Join(home, "tools", "sync.sh"), "echo sync\n", "the user service “sync.service”"},
		{filepath.Join(home, "dotfiles", "aliases.sh"), "alias ll='ls -l'\n", "the shell start-up file “~/.bashrc”"},
		{filepath.Join(home, "dotfiles", "git-extra.conf"), "[core]\n\tfsmonitor = ~/x.sh\n", "git takes as its settings (through “~/.gitconfig”)"},
		{filepath.Join(home, "dotfiles", "ssh-hosts.conf"), "Host *\n  ProxyCommand sh -c id\n", "ssh takes as its settings (through “~/.ssh/config”)"},
		{filepath.Join(home, "src", "proj", "usercustomize.py"), "import os\n", "change usercustomize.py, which Python runs every time it starts"},
	}
	for _, c := range cases[:1] {
		put(t, c.path, "print('mine')\n")
	}
	cl := hearthtest.Connect(t, in.URL, "startup-index")
	for _, c := range cases {
		was, _ := os.ReadFile(c.path)
		r := cl.Call("fs", map[string]any{"operation": "write", "path": c.path, "data": c.data})
		if r.State() != "pending" || r.Get("permit_id") == nil {
			t.Errorf("%s in ask mode must wait for a permit: %s", c.path, r.Raw)
		}
		if now, _ := os.ReadFile(c.path); string(now) != string(was) {
			t.Errorf("%s changed before the operator allowed it", c.path)
		}
	}
	pending, err := in.App.Operator.Permits(ctx, "pending")
	if err != nil {
		t.Fatal(err)
	}
	said := map[string]string{}
	for _, p := range pending {
		said[p.Subject] = p.Said
		if p.Case != string(risk.CasePersist) {
			t.Errorf("the card for %s is of case %s, want %s", p.Subject, p.Case, risk.CasePersist)
		}
	}
	for _, c := range cases {
		if !strings.Contains(said[c.path], c.says) {
			t.Errorf("the card for %s says %q, want it to say %q", c.path, said[c.path], c.says)
		}
	}
}

// TestStartupEntryAddedWhileRunningCounts: an autostart entry added while
// Hearth runs makes a write of the script it names ask at the next call
// (after the index's refresh time), where the same write ran before.
func TestStartupEntryAddedWhileRunningCounts(t *testing.T) {
	in, home := askHome(t)
	cl := hearthtest.Connect(t, in.URL, "startup-later")
	// A document by its name (writing it asks only once an entry names
	// it): python3 runs a file of any name.
	script := filepath.Join(home, "apps", "clock", "clock.txt")
	write := func(data string) *hearthtest.Result {
		return cl.Call("fs", map[string]any{"operation": "write", "path": script, "data": data})
	}
	if r := write("print(1)\n"); r.State() != "completed" {
		t.Fatalf("a script nothing starts, before the entry: %s", r.Raw)
	}
	put(t, filepath.Join(home, ".config", "autostart", "clock.desktop"), "[Desktop Entry]\nName=Clock\nExec=python3 "+script+"\n")
	time.Sleep(startup.Refresh + 50*time.Millisecond)
	if r := write("print(2)\n"); r.State() != "pending" {
		t.Fatalf("the script an autostart entry added while Hearth runs names must ask: %s", r.Raw)
	}
}

// TestStartupFileAsksInsideAnAllowedFolder: a folder the operator allowed
// (which lets hidden files and programs there run without asking) does
// not cover a file the startup index names: boot.py in a project
// folder, which an autostart entry runs (nothing about its name or
// folder makes it a persistence place), still asks, and the card says
// which entry runs it.
func TestStartupFileAsksInsideAnAllowedFolder(t *testing.T) {
	in, home := askHome(t)
	ctx := context.Background()
	proj := filepath.Join(home, "code", "proj")
	put(t, filepath.Join(home, ".config", "autostart", "boot.desktop"), "[Desktop Entry]\nName=Morning boot\nExec=python3 "+filepath.Join(proj, "boot.py")+"\n")
	cl := hearthtest.Connect(t, in.URL, "startup-folder")
	write := func(p, data string) *hearthtest.Result {
		return cl.Call("fs", map[string]any{"operation": "write", "path": p, "data": data})
	}
	if r := write(filepath.Join(proj, ".gitignore"), "bin/\n"); r.State() != "pending" {
		t.Fatalf("a hidden file must ask before any rule: %s", r.Raw)
	}
	pending, err := in.App.Operator.Permits(ctx, "pending")
	if err != nil || len(pending) != 1 {
		t.Fatalf("%v %+v", err, pending)
	}
	folder, ok := in.App.Gov.OfferedWorkspace(pending[0])
	if !ok || folder != proj {
		t.Fatalf("the card offers %q (%v), want %s", folder, ok, proj)
	}
	if _, err := in.App.Operator.AddWorkspace(ctx, "alice", pending[0], folder); err != nil {
		t.Fatal(err)
	}
	if r := write(filepath.Join(proj, "build.sh"), "#!/bin/sh\ngo build\n"); r.State() != "completed" {
		t.Fatalf("a program in the allowed folder must run: %s", r.Raw)
	}
	if r := write(filepath.Join(proj, "notes.py"), "print(1)\n"); r.State() != "completed" {
		t.Fatalf("a script nothing runs in the allowed folder must run: %s", r.Raw)
	}
	boot := filepath.Join(proj, "boot.py")
	if r := write(boot, "import os\n"); r.State() != "pending" {
		t.Fatalf("boot.py, which an autostart entry runs, must ask inside an allowed folder: %s", r.Raw)
	}
	pending, err = in.App.Operator.Permits(ctx, "pending")
	if err != nil {
		t.Fatal(err)
	}
	var said string
	for _, p := range pending {
		if p.Subject == boot {
			said = p.Said
		}
	}
	if !strings.Contains(said, "Morning boot") {
		t.Fatalf("the card for boot.py says %q, want it to name the autostart entry “Morning boot”", said)
	}
}
