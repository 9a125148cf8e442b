package peeruser

import (
	"bytes"
	"encoding/hex"
	"io"
	"log/slog"
	"net"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/windows"
)

// TestWindowsOwnerAdmitsSameUser: the real TCP table and token code finds
// this process as the owner of its own loopback connection, on IPv4 and
// IPv6.
func TestWindowsOwnerAdmitsSameUser(t *testing.T) {
	me, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("this process runs as %s", me)
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0"} {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			if addr == "[::1]:0" {
				t.Logf("no IPv6 loopback here: %v", err)
				continue
			}
			t.Fatal(err)
		}
		defer ln.Close()
		client, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer client.Close()
		server, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		defer server.Close()
		local, remote := ends(server)
		ipv6 := !remote.Addr().Is4()
		table, err := tcpTable(ipv6)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := tableRows(table, ipv6)
		if err != nil {
			t.Fatal(err)
		}
		size := tcpRow4Len
		if ipv6 {
			size = tcpRow6Len
		}
		t.Logf("%s: %s -> %s; table %s", addr, remote, local, hex.EncodeToString(table[:min(len(table), 4+len(rows)*size)]))
		pid, ok := peerPID(rows, local, remote)
		if ok && pid == 0 && ipv6 && underWine() {
			// Wine 8 leaves every pid of its IPv6 table 0; Owner then
			// refuses (no process to ask), which is safe.
			t.Logf("%s: Wine reports no owning pid in its IPv6 TCP table; only the row lookup is checked", addr)
			if _, err := ConnOwner(server); err == nil {
				t.Errorf("%s: a row with pid 0 gave an owner", addr)
			}
			continue
		}
		if !ok || pid != uint32(os.Getpid()) {
			t.Errorf("%s: peer pid %d (found %v), want this process %d; rows %+v", addr, pid, ok, os.Getpid(), rows)
			continue
		}
		// processAccount, not Owner's shortcut for this process's own pid.
		got, err := processAccount(pid)
		if err != nil || got.ID != me.ID {
			t.Errorf("%s: token user of pid %d = %v, %v; want %v", addr, pid, got, err, me)
		}
		if got, err := ConnOwner(server); err != nil || got.ID != me.ID {
			t.Errorf("%s: ConnOwner = %v, %v; want %v", addr, got, err, me)
		}
	}
}

func underWine() bool {
	return windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
}

// TestWindowsGuardAdmitsSameUser: a Guard serves this process's own
// connection (a refused one would read the 403 answer instead).
func TestWindowsGuardAdmitsSameUser(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	g, err := Guard(ln, "test", slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := g.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	client.SetReadDeadline(time.Now().Add(30 * time.Second))
	select {
	case c := <-accepted:
		c.Close()
	case <-time.After(30 * time.Second):
		b, _ := io.ReadAll(client)
		t.Fatalf("not admitted: read %q; log %s", b, logs.String())
	}
}

// TestWindowsListedSID: the session manager's account of this process is
// this process's token user (Wine may list processes without accounts).
func TestWindowsListedSID(t *testing.T) {
	me, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	sid, err := listedSID(uint32(os.Getpid()))
	if err != nil && underWine() {
		t.Skipf("Wine: %v", err)
	}
	if err != nil || sid != me.ID {
		t.Fatalf("listedSID = %q, %v; want %s", sid, err, me.ID)
	}
}

// ipv6PIDsUnknown: Wine 8 leaves every pid of its IPv6 TCP table 0.
func ipv6PIDsUnknown() bool { return underWine() }
