package httpbound

import "testing"

func TestLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1": true, "127.0.0.1:3001": true, "localhost": true, "LOCALHOST:80": true,
		"[::1]": true, "[::1]:3001": true, "::1": true, "127.0.0.1:": true,
		"localhost.": false, "0.0.0.0": false, "": false, "evil.example:3001": false, "127.0.0.2": false,
	} {
		if got := LoopbackHost(host); got != want {
			t.Errorf("LoopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}
