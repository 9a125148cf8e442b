//go:build !windows

package doctor

import (
	"testing"

	"github.com/hearth-dev/hearth/internal/app"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/peeruser"
)

// TestDoctorLoopback: doctor proves the same-user check on a test
// connection, and warns while loopback_same_user is false.
func TestDoctorLoopback(t *testing.T) {
	home := freshHome(t)
	out, _ := doctorCLI(t, home)
	me, err := peeruser.Self()
	if err != nil {
		t.Fatal(err)
	}
	wantLine(t, out, "ok    loopback: only "+me.String()+" is served (owner found by "+peeruser.Method()+"; checked with a test connection)")

	addrs := freeAddrs(t, 2)
	hearthtest.WriteConfig(t, home, func(c *config.Config) {
		c.MCPAddr, c.PanelAddr = addrs[0], addrs[1]
		c.LoopbackSameUser = false
	})
	out, _ = doctorCLI(t, home)
	wantLine(t, out, "warn  loopback: "+app.AnyAccountWarning)
}
