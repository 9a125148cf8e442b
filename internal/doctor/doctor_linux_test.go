package doctor

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// noOpenDuringDoctor runs doctor on home and fails if anything opens file
// meanwhile (inotify IN_OPEN; the file is created first if missing).
func noOpenDuringDoctor(t *testing.T, home, file string) {
	t.Helper()
	f, err := os.OpenFile(file, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if _, err := unix.InotifyAddWatch(fd, file, unix.IN_OPEN); err != nil {
		t.Fatal(err)
	}
	out, code := doctorCLI(t, home)
	if code != 0 {
		t.Fatalf("doctor: exit %d\n%s", code, out)
	}
	buf := make([]byte, 4096)
	n, err := unix.Read(fd, buf)
	if err == unix.EAGAIN {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if n > 0 {
		t.Fatalf("%s was opened while doctor ran", file)
	}
}
