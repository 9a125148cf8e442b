package update

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/instance"
)

// fakeRoleEnv makes this test binary, started again by a test, play a
// program in a hand-over (TestSwapRunningProgram): where no hearth-tray
// can be built (a Windows test binary under Wine has no go command), the
// swap, the start and the health check still meet a real process.
const fakeRoleEnv = "HEARTH_UPDATE_FAKE_ROLE"

func TestMain(m *testing.M) {
	switch os.Getenv(fakeRoleEnv) {
	case "":
		os.Exit(m.Run())
	case "sleep":
		// The running old program: it only holds its file.
		time.Sleep(2 * time.Minute)
		os.Exit(0)
	case "exit":
		fmt.Fprintln(os.Stderr, "fake new version: cannot start")
		os.Exit(3)
	case "healthy":
		fakeHealthy()
	case "apply":
		// A Hearth handing over to a new version that never becomes
		// healthy (TestHandoverKilledDuringHealthWait kills it).
		Apply(context.Background(), Plan{From: "1.3.0", To: "1.4.0", NewExe: os.Getenv("HEARTH_UPDATE_FAKE_STAGED")}, Handoff{
			Exe: os.Getenv("HEARTH_UPDATE_FAKE_EXE"), DataDir: os.Getenv("HEARTH_UPDATE_FAKE_DATA"),
			Env: []string{"PATH=" + os.Getenv("PATH")}, HealthWithin: 2 * time.Minute,
		})
		os.Exit(0)
	}
	os.Exit(2)
}

// fakeHealthy publishes instance.json in HEARTH_HOME with its process id
// and HEARTH_UPDATE_FAKE_VERSION, as Hearth does once listening, and
// answers the panel's icon.
func fakeHealthy() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		os.Exit(4)
	}
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/static/icon.png" {
			w.Write([]byte("png"))
			return
		}
		http.NotFound(w, r)
	}))
	panel := "http://" + ln.Addr().String() + "/"
	if err := instance.WriteInfo(os.Getenv("HEARTH_HOME"), instance.Info{PID: os.Getpid(), PanelURL: panel, Version: os.Getenv("HEARTH_UPDATE_FAKE_VERSION")}); err != nil {
		os.Exit(5)
	}
	time.Sleep(2 * time.Minute)
	os.Exit(0)
}
