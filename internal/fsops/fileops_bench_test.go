package fsops

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// The cost of a batch of moves against mv over the same files: 1,000
// small documents moved into one folder of the same volume, with a
// receipt each (fs.move), and the operator's undo of that chat.

const benchFiles = 1000

// benchSet makes benchFiles documents in dir and returns their paths.
func benchSet(b *testing.B, dir string) []string {
	b.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	paths := make([]string, benchFiles)
	for i := range paths {
		paths[i] = filepath.Join(dir, fmt.Sprintf("invoice %04d.pdf", i))
		if err := os.WriteFile(paths[i], []byte(fmt.Sprintf("%%PDF-1.4 invoice %d\n", i)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return paths
}

// BenchmarkMove1000 is one fs.move of 1,000 files (the engine's call,
// without MCP), a receipt per file.
func BenchmarkMove1000(b *testing.B) {
	env := newTestEngine(b)
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		src, dst := env.path("Downloads", fmt.Sprint(i)), env.path("Documents", fmt.Sprint(i))
		paths := benchSet(b, src)
		items := make([]FileOpItem, len(paths))
		for k, p := range paths {
			items[k] = FileOpItem{From: p, To: dst + string(filepath.Separator)}
		}
		b.StartTimer()
		res, err := env.e.FileOp(context.Background(), fmt.Sprintf("r:bench%d", i), ActionMove, FileOpInput{Items: items})
		if err != nil || res.Status != "completed" {
			b.Fatalf("%v %v", res.Status, err)
		}
	}
}

// BenchmarkUndoMove1000 is the operator's Undo all of a chat that moved
// 1,000 files: every file moved back, a receipt each.
func BenchmarkUndoMove1000(b *testing.B) {
	env := newTestEngine(b)
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		route := fmt.Sprintf("r:bench%d", i)
		src, dst := env.path("Downloads", fmt.Sprint(i)), env.path("Documents", fmt.Sprint(i))
		paths := benchSet(b, src)
		items := make([]FileOpItem, len(paths))
		for k, p := range paths {
			items[k] = FileOpItem{From: p, To: dst + string(filepath.Separator)}
		}
		if res, err := env.e.FileOp(context.Background(), route, ActionMove, FileOpInput{Items: items}); err != nil || res.Status != "completed" {
			b.Fatalf("%v %v", res.Status, err)
		}
		b.StartTimer()
		rep, err := env.e.UndoChat(context.Background(), "bench", route)
		if err != nil || rep.Count(OutcomeRestored) != benchFiles {
			b.Fatalf("undo: %d restored, %v", rep.Count(OutcomeRestored), err)
		}
	}
}

// BenchmarkMv1000 is mv over the same files: one exec of mv with the
// 1,000 files and the folder.
func BenchmarkMv1000(b *testing.B) {
	if runtime.GOOS == "windows" {
		b.Skip("no mv")
	}
	mv, err := exec.LookPath("mv")
	if err != nil {
		b.Skip("no mv")
	}
	base := b.TempDir()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		src, dst := filepath.Join(base, "Downloads", fmt.Sprint(i)), filepath.Join(base, "Documents", fmt.Sprint(i))
		paths := benchSet(b, src)
		if err := os.MkdirAll(dst, 0o755); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if out, err := exec.Command(mv, append(append([]string{"-n"}, paths...), dst)...).CombinedOutput(); err != nil {
			b.Fatalf("mv: %v %s", err, out)
		}
	}
}

// BenchmarkMvEach1000 is mv started once per file, as a model driving
// machine.exec would (each call one program started).
func BenchmarkMvEach1000(b *testing.B) {
	if runtime.GOOS == "windows" {
		b.Skip("no mv")
	}
	mv, err := exec.LookPath("mv")
	if err != nil {
		b.Skip("no mv")
	}
	base := b.TempDir()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		src, dst := filepath.Join(base, "Downloads", fmt.Sprint(i)), filepath.Join(base, "Documents", fmt.Sprint(i))
		paths := benchSet(b, src)
		if err := os.MkdirAll(dst, 0o755); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		for _, p := range paths {
			if out, err := exec.Command(mv, "-n", p, dst).CombinedOutput(); err != nil {
				b.Fatalf("mv: %v %s", err, out)
			}
		}
	}
}
