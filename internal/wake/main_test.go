package wake

import (
	"os"
	"testing"
)

// crtChildArg makes the test binary the small child of the Windows pipe
// test (spawn_windows_test.go): it reads descriptor 3 and writes 4.
const crtChildArg = "wake-crt-pipe-child"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == crtChildArg {
		os.Exit(crtPipeChild())
	}
	os.Exit(m.Run())
}
