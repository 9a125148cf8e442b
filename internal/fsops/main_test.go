package fsops

import (
	"os"
	"testing"
)

// testPDFCache is one compilation cache for the PDF engine of every test
// engine of the package, so only the first compiles PDFium.
var testPDFCache string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "hearth-pdf-cache-")
	if err != nil {
		panic(err)
	}
	testPDFCache = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// setSeams sets the package's seams (fortest.go) for the rest of t, which
// must not run in parallel: they are process-wide.
func setSeams(t *testing.T, s seams) {
	t.Helper()
	processSeams = s
	t.Cleanup(func() { processSeams = seams{} })
}
