//go:build linux || windows

package peeruser

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// holdEnv, when set in the environment of this test binary, makes it the
// child of TestHeldByChildProcess: it connects to the address it names,
// prints its own end and holds the connection until its stdin closes.
const holdEnv = "PEERUSER_TEST_HOLD_ADDR"

func TestMain(m *testing.M) {
	if addr := os.Getenv(holdEnv); addr != "" {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "hold:", err)
			os.Exit(2)
		}
		fmt.Println(c.LocalAddr().String())
		io.Copy(io.Discard, os.Stdin)
		c.Close()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestHeldByChildProcess: a connection made by a real child process is
// held by the child's pid and not by this process's; a connection this
// process made itself is held by this process and not by the child. This
// is how Hearth tells the tunnel-client it runs from any other local
// program.
func TestHeldByChildProcess(t *testing.T) {
	for _, addr := range loopbackAddrs(t) {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()

		child, childEnd, fromChild := startHolder(t, ln)
		if fromChild.RemoteAddr().String() != childEnd {
			t.Fatalf("%s: accepted %s, the child holds %s", addr, fromChild.RemoteAddr(), childEnd)
		}

		mine, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer mine.Close()
		fromMe, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		defer fromMe.Close()

		cases := []struct {
			name string
			conn net.Conn
			pid  int
			want bool
		}{
			{"child's connection, child's pid", fromChild, child.Process.Pid, true},
			{"child's connection, this pid", fromChild, os.Getpid(), false},
			{"own connection, this pid", fromMe, os.Getpid(), true},
			{"own connection, child's pid", fromMe, child.Process.Pid, false},
		}
		noIPv6PIDs := strings.HasPrefix(addr, "[") && ipv6PIDsUnknown()
		if noIPv6PIDs {
			t.Logf("%s: Wine reports no owning pid in its IPv6 TCP table; every connection must then be held by nobody", addr)
		}
		for _, c := range cases {
			if noIPv6PIDs {
				c.want = false
			}
			got, err := ConnHeldBy(c.conn, c.pid)
			if err != nil || got != c.want {
				t.Errorf("%s: %s: ConnHeldBy = %v, %v; want %v", addr, c.name, got, err, c.want)
			}
		}
	}
}

// TestHeldByRefusesNoProcess: pid 0 or less is refused, naming it.
func TestHeldByRefusesNoProcess(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if ok, err := ConnHeldBy(s, 0); ok || err == nil || !strings.Contains(err.Error(), "process id 0") {
		t.Errorf("ConnHeldBy(pid 0) = %v, %v; want an error naming process id 0", ok, err)
	}
}

// loopbackAddrs are IPv4 loopback and, where there is one, IPv6.
func loopbackAddrs(t *testing.T) []string {
	addrs := []string{"127.0.0.1:0"}
	if ln, err := net.Listen("tcp", "[::1]:0"); err == nil {
		ln.Close()
		addrs = append(addrs, "[::1]:0")
	} else {
		t.Logf("no IPv6 loopback here (%v): IPv4 only", err)
	}
	return addrs
}

// startHolder starts this test binary as a child that connects to ln and
// holds the connection until its stdin closes (holdEnv), and returns the
// child, its end's address as it says it, and the accepted connection;
// the child and the connection end with the test.
func startHolder(t *testing.T, ln net.Listener) (*exec.Cmd, string, net.Conn) {
	t.Helper()
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), holdEnv+"="+ln.Addr().String())
	stdin, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		child.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("%s: the child did not say its address: %v", ln.Addr(), err)
	}
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return child, strings.TrimSpace(line), c
}
