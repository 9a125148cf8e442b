package startup_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/risk"
	"github.com/hearth-dev/hearth/internal/startup"
)

// benchHome makes a home with a realistic set of things that start by
// themselves: 12 autostart entries and 6 user units each running a
// script, a .bashrc and .profile sourcing 4 files (one sourcing
// another), a .gitconfig with two includes, an ssh config with an
// Include glob, and 4 .pth files in the user site-packages.
func benchHome(b *testing.B) string {
	b.Helper()
	home, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	put := func(rel, content string) {
		p := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 12 {
		put(fmt.Sprintf(".config/autostart/app%02d.desktop", i), fmt.Sprintf("[Desktop Entry]\nType=Application\nName=App %d\nExec=/usr/bin/python3 ~/apps/app%02d/main.py --tray %%U\n", i, i))
	}
	for i := range 6 {
		put(fmt.Sprintf(".config/systemd/user/svc%d.service", i), fmt.Sprintf("[Unit]\nDescription=svc\n[Service]\nExecStartPre=-%%h/bin/pre%d.sh\nExecStart=/bin/sh %%h/bin/svc%d.sh\n[Install]\nWantedBy=default.target\n", i, i))
	}
	put(".bashrc", "# bashrc\nexport PATH=$HOME/bin:$PATH\n[ -f ~/.bash_aliases ] && . ~/.bash_aliases\nsource ~/dotfiles/prompt.sh\n. \"$HOME/dotfiles/env.sh\"\nalias ll='ls -l'\n")
	put(".profile", "if [ -n \"$BASH_VERSION\" ]; then\n  . \"$HOME/.bashrc\"\nfi\n")
	put("dotfiles/prompt.sh", "source ~/dotfiles/colors.sh\nPS1='$ '\n")
	put(".gitconfig", "[user]\n\tname = Ann\n[include]\n\tpath = ~/dotfiles/git/aliases\n[includeIf \"gitdir:~/work/\"]\n\tpath = ~/dotfiles/git/work\n[core]\n\teditor = vim\n")
	put(".ssh/config", "Include ~/.ssh/config.d/*\nHost *\n  ServerAliveInterval 30\n")
	put(".ssh/config.d/work", "Host work\n  HostName example.invalid\n")
	for i := range 4 {
		put(fmt.Sprintf(".local/lib/python3.12/site-packages/__editable__.proj%d.pth", i), filepath.Join(home, "src", fmt.Sprintf("proj%d", i))+"\n")
	}
	// As a home is: its files changed long ago (a file changed within
	// the last two seconds is read again at every look).
	old := time.Now().Add(-time.Hour)
	err = filepath.WalkDir(home, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, old, old)
	})
	if err != nil {
		b.Fatal(err)
	}
	return home
}

// BenchmarkWriteCheck measures the persistence-place part of one write
// check of an ordinary file (the case of almost every write) in a home
// with a realistic startup index: the table's places and the allowlist
// alone (index=none, today's check without the index), the same with the
// index consulted at the refresh time Hearth uses (index=kept; the
// index's own match alone: index=kept_match_only), and with
// the index looked at again at every check (index=look: the cost of a
// look, paid at most every startup.Refresh); index=first_read is the
// first check of a new index, which reads and parses every source.
func BenchmarkWriteCheck(b *testing.B) {
	if runtime.GOOS == "windows" {
		b.Skip("the Linux sources")
	}
	home := benchHome(b)
	env := func(k string) string {
		switch k {
		case "HOME":
			return home
		case "PATH":
			return "/usr/bin:/bin"
		}
		return ""
	}
	places := risk.NewPlacesResolved(env, risk.RealPrefix)
	writes := risk.NewWrites(env, risk.RealPrefix)
	p := filepath.Join(home, "Documents", "notes.txt")
	f := risk.FileFacts{Path: p, Root: home, Exists: true, Head: []byte("text")}
	check := func(x *startup.Index) {
		if _, ok := places.Match(p); ok {
			b.Fatal("caught")
		}
		if x != nil {
			if _, ok := x.Match(p); ok {
				b.Fatal("caught by the index")
			}
		}
		if _, ok := writes.Classify(f); !ok {
			b.Fatal("not ordinary")
		}
	}
	index := func(refresh time.Duration) *startup.Index {
		x, err := startup.New(startup.Options{Env: env, Real: risk.RealPrefix, Refresh: refresh})
		if err != nil {
			b.Fatal(err)
		}
		if n := len(x.Entries()); n < 20 {
			b.Fatalf("only %d entries", n)
		}
		if _, ok := x.Match(filepath.Join(home, "apps", "app03", "main.py")); !ok {
			b.Fatal("the index misses an autostart entry's script")
		}
		return x
	}
	b.Run("index=none", func(b *testing.B) {
		for b.Loop() {
			check(nil)
		}
	})
	b.Run("index=kept", func(b *testing.B) {
		x := index(startup.Refresh)
		for b.Loop() {
			check(x)
		}
	})
	b.Run("index=kept_match_only", func(b *testing.B) {
		x := index(startup.Refresh)
		for b.Loop() {
			if _, ok := x.Match(p); ok {
				b.Fatal("caught by the index")
			}
		}
	})
	b.Run("index=first_read", func(b *testing.B) {
		for b.Loop() {
			x, err := startup.New(startup.Options{Env: env, Real: risk.RealPrefix, Refresh: startup.Refresh})
			if err != nil {
				b.Fatal(err)
			}
			if _, ok := x.Match(p); ok {
				b.Fatal("caught by the index")
			}
		}
	})
	b.Run("index=look", func(b *testing.B) {
		x := index(0)
		for b.Loop() {
			check(x)
		}
	})
}
