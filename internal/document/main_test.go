package document

import (
	"os"
	"testing"
)

// testCache is one compilation cache for the PDF engine of every test of
// the package, so only the first compiles PDFium.
var testCache string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "hearth-pdf-cache-")
	if err != nil {
		panic(err)
	}
	testCache = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
