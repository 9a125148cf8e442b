package risk_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hearth-dev/hearth/internal/risk"
)

// BenchmarkMatchOrdinary measures the persistence check of an ordinary
// file, the case of almost every write: each location is resolved
// through symlinks on every check.
func BenchmarkMatchOrdinary(b *testing.B) {
	home := b.TempDir()
	os.MkdirAll(filepath.Join(home, ".config", "autostart"), 0o700)
	ps := risk.NewPlaces(func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	})
	p := filepath.Join(home, "src", "notes.txt")
	for b.Loop() {
		if _, ok := ps.Match(p); ok {
			b.Fatal("caught")
		}
	}
}

// BenchmarkClassifyOrdinary measures the allowlist's check of an
// ordinary file, the case of almost every write (the folders resolved at
// most every RefreshEvery).
func BenchmarkClassifyOrdinary(b *testing.B) {
	home := b.TempDir()
	w := risk.NewWrites(func(k string) string {
		if k == "HOME" || k == "USERPROFILE" {
			return home
		}
		return ""
	}, risk.RealPrefix)
	f := risk.FileFacts{Path: filepath.Join(home, "src", "site", "notes.txt"), Root: home, Exists: true, Head: []byte("text")}
	for b.Loop() {
		if _, ok := w.Classify(f); !ok {
			b.Fatal("not ordinary")
		}
	}
}

// BenchmarkIdentityKept measures telling what a program is once the
// answer for its path, size and modification time is kept: the cost on
// every exec call after the first.
func BenchmarkIdentityKept(b *testing.B) {
	shell, _ := realShell(b)
	p := copyAs(b, shell, b.TempDir(), "tool", nil)
	ids := risk.NewIdentities(os.Getenv)
	if _, err := ids.Names(p); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := ids.Names(p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIdentityFirst measures the first look at a program (compared
// with every known program), the cost when a program is new or changed.
func BenchmarkIdentityFirst(b *testing.B) {
	shell, _ := realShell(b)
	p := copyAs(b, shell, b.TempDir(), "tool", nil)
	ids := risk.NewIdentities(os.Getenv)
	if _, err := ids.Names(p); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		ids.Forget()
		if _, err := ids.Names(p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIdentityFolders measures reading the program folders (every
// few minutes, and on the first exec call), with the first look at one
// program.
func BenchmarkIdentityFolders(b *testing.B) {
	shell, _ := realShell(b)
	p := copyAs(b, shell, b.TempDir(), "tool", nil)
	for b.Loop() {
		if _, err := risk.NewIdentities(os.Getenv).Names(p); err != nil {
			b.Fatal(err)
		}
	}
}
