package doctor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/config"
)

func TestDoctorWake(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-browser")
	run := func(edit func(*config.Wake)) string {
		var b strings.Builder
		d := &doctor{out: &b, cfg: config.Default()}
		edit(&d.cfg.Wake)
		d.checkWake()
		return b.String()
	}
	if out := run(func(w *config.Wake) { w.Armed, w.BrowserPath = true, missing }); !strings.HasPrefix(out, "warn  wake: automatic wake is armed, but the ChatGPT window cannot open") || !strings.Contains(out, missing) {
		t.Fatalf("armed without a browser: %q", out)
	}
	if out := run(func(w *config.Wake) { w.BrowserPath = missing }); !strings.HasPrefix(out, "ok    wake: automatic wake is off") {
		t.Fatalf("off without a browser: %q", out)
	}
	self := filepath.Join(t.TempDir(), "browser")
	if err := writeExecutable(self); err != nil {
		t.Fatal(err)
	}
	if out := run(func(w *config.Wake) { w.Armed, w.BrowserPath = true, self }); !strings.HasPrefix(out, "ok    wake: automatic wake is armed; the ChatGPT window uses "+self) {
		t.Fatalf("armed with a browser: %q", out)
	}
}

func writeExecutable(path string) error {
	return os.WriteFile(path, []byte("#!/bin/sh\n"), 0o700)
}
