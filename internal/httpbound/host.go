package httpbound

import (
	"net"
	"strings"
)

// LoopbackHost reports whether a request's Host names this computer:
// 127.0.0.1, ::1 or localhost, with any port. Anything else (another
// name that resolves here, as in DNS rebinding) is refused. The control
// panel and the tray's control endpoint check their requests with it.
func LoopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	switch strings.ToLower(host) {
	case "localhost", "127.0.0.1", "::1":
		return true
	}
	return false
}
