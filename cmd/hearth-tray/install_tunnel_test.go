package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCopyTunnelClient(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "Programs", "Hearth")
	// Nothing came with this program: nothing to do.
	if err := copyTunnelClient(src, dst, io.Discard); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dst); err == nil {
		t.Fatal("an install without a tunnel-client created the directory for one")
	}
	for name, body := range map[string]string{"tunnel-client.exe": "MZ fake", "tunnel-client-LICENSE.txt": "terms", "notes.txt": "not copied"} {
		os.WriteFile(filepath.Join(src, name), []byte(body), 0o644)
	}
	if err := copyTunnelClient(src, dst, io.Discard); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"tunnel-client.exe": "MZ fake", "tunnel-client-LICENSE.txt": "terms"} {
		if b, err := os.ReadFile(filepath.Join(dst, name)); err != nil || string(b) != want {
			t.Errorf("installed %s: %q, %v", name, b, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dst, "notes.txt")); err == nil {
		t.Error("an unrelated file was copied")
	}
	// Installing from the installed copy itself copies nothing onto itself.
	var out strings.Builder
	if err := copyTunnelClient(dst, dst, &out); err != nil || out.Len() != 0 {
		t.Fatalf("install from the installed copy: %v %q", err, out.String())
	}
}
