package tray

import (
	"fmt"
	"net/url"

	"github.com/hearth-dev/hearth/internal/httpbound"
)

// checkBrowsable accepts only what the tray ever opens: an http URL on a
// loopback host (the control panel). Nothing else reaches the shell.
func checkBrowsable(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || !httpbound.LoopbackHost(u.Host) || u.User != nil {
		return fmt.Errorf("refusing to open %q: not a loopback http URL", raw)
	}
	return nil
}
