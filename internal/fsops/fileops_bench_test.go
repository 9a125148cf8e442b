package fsops

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// The cost of a batch of moves against mv over the same files: 1,000
// small documents moved into one folder of the same volume, with a
// receipt each (fs.move), and the operator's undo of that chat. Each
// reports the processor time of what it measures (cpu-ms/op) beside the
// clock's.

const benchFiles = 1000

// cpuMeter sums the processor time of a benchmark's timed parts.
type cpuMeter struct{ sum, at time.Duration }

func (m *cpuMeter) start() { m.at = cpuUsed() }
func (m *cpuMeter) stop()  { m.sum += cpuUsed() - m.at }

func (m *cpuMeter) report(b *testing.B) {
	if m.sum > 0 && b.N > 0 {
		b.ReportMetric(float64(m.sum)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
	}
}

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
	var cpu cpuMeter
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		src, dst := env.path("Downloads", fmt.Sprint(i)), env.path("Documents", fmt.Sprint(i))
		paths := benchSet(b, src)
		items := make([]FileOpItem, len(paths))
		for k, p := range paths {
			items[k] = FileOpItem{From: p, To: dst + string(filepath.Separator)}
		}
		b.StartTimer()
		cpu.start()
		res, err := env.e.FileOp(context.Background(), fmt.Sprintf("r:bench%d", i), ActionMove, FileOpInput{Items: items})
		cpu.stop()
		if err != nil || res.Status != "completed" {
			b.Fatalf("%v %v", res.Status, err)
		}
	}
	cpu.report(b)
}

// BenchmarkUndoMove1000 is the operator's Undo all of a chat that moved
// 1,000 files: every file moved back, a receipt each.
func BenchmarkUndoMove1000(b *testing.B) {
	env := newTestEngine(b)
	var cpu cpuMeter
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
		cpu.start()
		rep, err := env.e.UndoChat(context.Background(), "bench", route)
		cpu.stop()
		if err != nil || rep.Count(OutcomeRestored) != benchFiles {
			b.Fatalf("undo: %d restored, %v", rep.Count(OutcomeRestored), err)
		}
	}
	cpu.report(b)
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
	var cpu cpuMeter
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		src, dst := filepath.Join(base, "Downloads", fmt.Sprint(i)), filepath.Join(base, "Documents", fmt.Sprint(i))
		paths := benchSet(b, src)
		if err := os.MkdirAll(dst, 0o755); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		cpu.start()
		if out, err := exec.Command(mv, append(append([]string{"-n"}, paths...), dst)...).CombinedOutput(); err != nil {
			b.Fatalf("mv: %v %s", err, out)
		}
		cpu.stop()
	}
	cpu.report(b)
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
	var cpu cpuMeter
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		src, dst := filepath.Join(base, "Downloads", fmt.Sprint(i)), filepath.Join(base, "Documents", fmt.Sprint(i))
		paths := benchSet(b, src)
		if err := os.MkdirAll(dst, 0o755); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		cpu.start()
		for _, p := range paths {
			if out, err := exec.Command(mv, "-n", p, dst).CombinedOutput(); err != nil {
				b.Fatalf("mv: %v %s", err, out)
			}
		}
		cpu.stop()
	}
	cpu.report(b)
}
