package fsops

import (
	"context"
	"crypto/rand"
	"os"
	"testing"

	"github.com/hearth-dev/hearth/internal/atomicfile"
)

// The benchmarks put fs read and write of a 64 KiB file beside the plain
// standard-library baseline, so the cost of containment, hashing, receipts
// and durability is visible as a ratio.

func BenchmarkRead64K(b *testing.B) {
	env := newTestEngine(b)
	p := env.path("bench.bin")
	data := make([]byte, 64<<10)
	rand.Read(data)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.Run("fsops.Read", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			res, err := env.e.Read(ctx, ReadInput{Path: p, Encoding: EncodingBase64})
			if err != nil || res.Length != len(data) {
				b.Fatal(err)
			}
		}
	})
	b.Run("os.ReadFile", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if got, err := os.ReadFile(p); err != nil || len(got) != len(data) {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkWrite64K(b *testing.B) {
	env := newTestEngine(b)
	data := make([]byte, 64<<10)
	rand.Read(data)
	ctx := context.Background()
	in := WriteInput{Path: env.path("bench.txt"), Data: string(data)}
	b.Run("fsops.Write", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := env.e.Write(ctx, "bench", in); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("WriteAtomic", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		p := env.path("plain.txt")
		for b.Loop() {
			if _, err := atomicfile.Write(p, data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("os.WriteFile", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		p := env.path("unsafe.txt")
		for b.Loop() {
			if err := os.WriteFile(p, data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	})
}
