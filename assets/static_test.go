package assets

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"testing"
)

func TestStaticFiles(t *testing.T) {
	st, err := Static()
	if err != nil {
		t.Fatal(err)
	}
	js, err := fs.ReadFile(st, "htmx.min.js")
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(js); hex.EncodeToString(sum[:]) != HTMXSHA256 {
		t.Errorf("htmx.min.js is not the vendored htmx %s (sha256 %x)", HTMXVersion, sum)
	}
	for _, name := range []string{"panel.css", "setup.js", "live.js"} {
		if _, err := fs.ReadFile(st, name); err != nil {
			t.Fatal(err)
		}
	}
}
