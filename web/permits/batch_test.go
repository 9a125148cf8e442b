package permits

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/callpath"
	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/web/ui"
)

// TestBatchSentence: a file operation's card says it in one sentence —
// the verb, the count (files and folders, plural right), the folders as
// the person knows them (known folders by name, wherever Windows put
// them; several sources as "3 folders"), and the items that made it ask
// ("including setup.exe", at most three, then "and N more") — on
// Windows' paths (drive letters, backslashes, case) and on Linux's.
func TestBatchSentence(t *testing.T) {
	win := ui.Folders{Windows: true, Home: `C:\Users\Ann`, Known: []ui.KnownFolder{
		{Name: "Documents", Path: `C:\Users\Ann\OneDrive\Documents`},
		{Name: "Downloads", Path: `D:\Downloads`},
	}}
	linux := ui.Folders{Home: "/home/ann"}
	winDirs := map[string]bool{`C:\Users\Ann\OneDrive\Documents\Invoices`: true, `D:\Downloads\Old scans`: true, `D:\Downloads\Tools`: true}
	linuxDirs := map[string]bool{"/home/ann/Documents/Invoices": true}
	type move struct{ from, to string }
	batch := func(dir string, n int, to string, exe string) []move {
		var ms []move
		for i := range n {
			ms = append(ms, move{fmt.Sprintf(`%s%sinvoice %02d.pdf`, dir, sepOf(dir), i), to})
		}
		if exe != "" {
			ms = append(ms, move{dir + sepOf(dir) + exe, to})
		}
		return ms
	}
	input := func(ms []move, trash bool) string {
		var items []map[string]string
		for _, m := range ms {
			if trash {
				items = append(items, map[string]string{"path": m.from})
			} else {
				items = append(items, map[string]string{"from": m.from, "to": m.to})
			}
		}
		if len(items) == 1 {
			b, _ := json.Marshal(items[0])
			return string(b)
		}
		b, _ := json.Marshal(map[string]any{"items": items})
		return string(b)
	}
	invoices := `C:\Users\Ann\OneDrive\Documents\Invoices`
	for _, c := range []struct {
		name, primitive string
		f               ui.Folders
		dirs            map[string]bool
		moves           []move
		trash           bool
		asks            []callpath.Ask
		want            string
		why             string
	}{
		{"the batch with a program", "fs.move", win, winDirs, batch(`D:\Downloads`, 36, invoices, "setup.exe"), false,
			[]callpath.Ask{{Item: 36, Path: invoices + `\setup.exe`, Said: "write a new program"}},
			`move 37 files from Downloads to Documents\Invoices, including setup.exe`,
			"setup.exe: it would write a new program."},
		{"one item", "fs.move", win, winDirs, batch(`D:\Downloads`, 0, invoices, "setup.exe"), false,
			[]callpath.Ask{{Item: 0, Path: invoices + `\setup.exe`, Said: "write a new program"}},
			`move setup.exe from Downloads to Documents\Invoices`, "setup.exe: it would write a new program."},
		{"one item, a long path and another case", "fs.move", win, winDirs, []move{{`\\?\d:\downloads\setup.exe`, `c:\users\ann\onedrive\documents\invoices\`}}, false, nil,
			`move setup.exe from Downloads to Documents\invoices`, ""},
		{"a rename", "fs.move", win, winDirs, []move{{`D:\Downloads\scan.pdf`, `D:\Downloads\Invoice 2024.pdf`}}, false, nil,
			`rename scan.pdf to Invoice 2024.pdf in Downloads`, ""},
		{"a move with a new name", "fs.move", win, winDirs, []move{{`D:\Downloads\scan.pdf`, invoices + `\March.pdf`}}, false, nil,
			`move scan.pdf from Downloads to Documents\Invoices as March.pdf`, ""},
		{"a copy of files and a folder from three folders", "fs.copy", win, winDirs, []move{
			{`D:\Downloads\a.pdf`, invoices}, {`C:\Users\Ann\Desktop\b.pdf`, invoices}, {`E:\Scans\c.pdf`, invoices}, {`D:\Downloads\Tools`, invoices}}, false,
			[]callpath.Ask{{Item: 3, Path: invoices + `\Tools\bin\setup.exe`, Said: "write a new program"}},
			`copy 3 files and 1 folder from 3 folders to Documents\Invoices, including Tools (which holds setup.exe)`,
			"Tools (which holds setup.exe): it would write a new program."},
		{"many that ask", "fs.move", win, winDirs, []move{
			{`D:\Downloads\a.exe`, invoices}, {`D:\Downloads\b.exe`, invoices}, {`D:\Downloads\c.exe`, invoices}, {`D:\Downloads\d.exe`, invoices}, {`D:\Downloads\e.exe`, invoices}, {`D:\Downloads\f.pdf`, invoices}}, false,
			[]callpath.Ask{{Item: 0, Path: `x\a.exe`, Said: "write a new program"}, {Item: 1, Path: `x\b.exe`, Said: "write a new program"}, {Item: 1, Path: `x\b.exe`, Said: "again"}, {Item: 2, Path: `x\c.exe`, Said: "write a new program"}, {Item: 3, Path: `x\d.exe`, Said: "write a new program"}, {Item: 4, Path: `x\e.exe`, Said: "write a new program"}},
			`move 6 files from Downloads to Documents\Invoices, including a.exe, b.exe, c.exe and 2 more`,
			"a.exe: it would write a new program; b.exe: it would write a new program; c.exe: it would write a new program; and 2 more items (each is under Details)."},
		{"sorted into folders", "fs.move", win, winDirs, []move{
			{`D:\Downloads\a.pdf`, invoices + `\2023\`}, {`D:\Downloads\b.pdf`, invoices + `\2024\`}}, false, nil,
			`move 2 files from Downloads to 2 folders in Documents\Invoices`, ""},
		{"one sent out of its folder with ..", "fs.move", win, winDirs, []move{
			{`D:\Downloads\a.pdf`, invoices + `\2023\`}, {`D:\Downloads\b.exe`, invoices + `\..\..\..\AppData\Roaming\Microsoft\Windows\Start Menu\Programs\Startup\`}}, false, nil,
			`move 2 files from Downloads to 2 folders in your home folder`, ""},
		{"one sent out of its folder with .. and /", "fs.move", win, winDirs, []move{
			{`D:\Downloads\.\b.exe`, invoices + `/../../../AppData/Roaming/Microsoft/Windows/Start Menu/Programs/Startup/`}}, false, nil,
			`move b.exe from Downloads to AppData\Roaming\Microsoft\Windows\Start Menu\Programs\Startup`, ""},
		{"on Linux, one sent out of its folder with ..", "fs.move", linux, linuxDirs, []move{
			{"/home/ann/Downloads/a.pdf", "/home/ann/Documents/Invoices/2024/"}, {"/home/ann/Downloads/b.sh", "/home/ann/Documents/Invoices/../../.config/autostart/"}}, false, nil,
			`move 2 files from Downloads to 2 folders in your home folder`, ""},
		{"on Linux, .. above the root", "fs.copy", linux, linuxDirs, []move{{"/home/ann/Downloads/b.sh", "/home/ann/Documents/../../../../etc/profile.d/"}}, false, nil,
			`copy b.sh from Downloads to /etc/profile.d`, ""},
		{"to the bin", "fs.trash", win, winDirs, batch(`D:\Downloads`, 2, "", "setup.exe"), true,
			[]callpath.Ask{{Item: 2, Path: `D:\Downloads\setup.exe`, Said: "change a program that other programs start"}},
			`put 3 files from Downloads in the Recycle Bin, including setup.exe`, "setup.exe: it would change a program that other programs start."},
		{"a folder to the bin", "fs.trash", win, winDirs, []move{{`D:\Downloads\Old scans`, ""}}, true, nil,
			`put Old scans from Downloads in the Recycle Bin`, ""},
		{"a folder made", "fs.mkdir", win, winDirs, []move{{invoices + `\2025`, ""}}, true, nil,
			`make the folder 2025 in Documents\Invoices`, ""},
		{"on Linux", "fs.move", linux, linuxDirs, batch("/home/ann/Downloads", 36, "/home/ann/Documents/Invoices", "setup.exe"), false,
			[]callpath.Ask{{Item: 36, Path: "/home/ann/Documents/Invoices/setup.exe", Said: "write a new program"}},
			`move 37 files from Downloads to Documents/Invoices, including setup.exe`, "setup.exe: it would write a new program."},
		{"on Linux, outside the home", "fs.copy", linux, linuxDirs, []move{{"/media/usb/photos/2024/a.jpg", "/home/ann/Pictures/"}}, false, nil,
			`copy a.jpg from /…/photos/2024 to Pictures`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, ok := NewBatch(c.primitive, input(c.moves, c.trash), c.asks, c.f, func(p string) bool { return c.dirs[p] }, "Recycle Bin")
			if !ok {
				t.Fatal("not a file operation's card")
			}
			if b.Sentence != c.want {
				t.Errorf("sentence\n got %q\nwant %q", b.Sentence, c.want)
			}
			if b.Why != c.why {
				t.Errorf("why\n got %q\nwant %q", b.Why, c.why)
			}
			if len(b.Items) != len(c.moves) {
				t.Errorf("%d items listed, want %d", len(b.Items), len(c.moves))
			}
		})
	}
	if _, ok := NewBatch("fs.write", `{"path":"/a"}`, nil, linux, func(string) bool { return false }, "trash"); ok {
		t.Error("a write has a file operation's card")
	}
}

// TestBatchItems: Details lists each item from where to where, and why
// the ones that ask do.
func TestBatchItems(t *testing.T) {
	win := ui.Folders{Windows: true, Home: `C:\Users\Ann`}
	in := `{"items":[{"from":"C:\\Users\\Ann\\Downloads\\a.pdf","to":"C:\\Users\\Ann\\Documents"},{"from":"C:\\Users\\Ann\\Downloads\\setup.exe","to":"C:\\Users\\Ann\\Documents"}]}`
	b, _ := NewBatch("fs.move", in, []callpath.Ask{{Item: 1, Path: `C:\Users\Ann\Documents\setup.exe`, Said: "write a new program"}}, win, func(string) bool { return false }, "Recycle Bin")
	want := []BatchItem{
		{From: `C:\Users\Ann\Downloads\a.pdf`, To: `C:\Users\Ann\Documents\a.pdf`},
		{From: `C:\Users\Ann\Downloads\setup.exe`, To: `C:\Users\Ann\Documents\setup.exe`, Asks: "write a new program"},
	}
	if fmt.Sprint(b.Items) != fmt.Sprint(want) {
		t.Errorf("items\n got %+v\nwant %+v", b.Items, want)
	}
	if got := b.Count(); got != "2 items, 1 of them asks" {
		t.Errorf("count %q", got)
	}
	if strings.Contains(b.Sentence, `C:\`) {
		t.Errorf("the sentence names a full path: %q", b.Sentence)
	}
}

func sepOf(dir string) string {
	if strings.Contains(dir, `\`) {
		return `\`
	}
	return "/"
}

// TestBatchReasonWithoutAsks: a file operation's permit that kept no
// item that asks (one made before they were kept, or one whose items
// governance did not list) still says why Hearth asks, from the permit's
// own reason and subject, on the card's main line; one that kept them
// says theirs.
func TestBatchReasonWithoutAsks(t *testing.T) {
	dir := t.TempDir()
	sorted := filepath.Join(dir, "sorted")
	in, _ := json.Marshal(map[string]any{"items": []map[string]string{
		{"from": filepath.Join(dir, "a.pdf"), "to": sorted + string(filepath.Separator)},
		{"from": filepath.Join(dir, "setup.exe"), "to": sorted + string(filepath.Separator)},
	}})
	p := govern.Permit{ID: "pmt_1", Primitive: "fs.move", Input: string(in), Digest: strings.Repeat("ab", 32),
		CreatedAt: time.Now(), ExpiresAt: time.Now().Add(15 * time.Minute),
		Said: "write a new program", Subject: filepath.Join(sorted, "setup.exe")}
	for _, c := range []struct {
		name string
		p    func(govern.Permit) govern.Permit
		why  string
	}{
		{"its subject", func(p govern.Permit) govern.Permit { return p }, "setup.exe: it would write a new program."},
		{"no subject", func(p govern.Permit) govern.Permit { p.Subject = ""; return p }, "one of the items: it would write a new program."},
		{"one item, no subject", func(p govern.Permit) govern.Permit {
			p.Subject, p.Input = "", `{"from":`+strconv.Quote(filepath.Join(dir, "run.sh"))+`,"to":`+strconv.Quote(sorted+string(filepath.Separator))+`}`
			return p
		}, "run.sh: it would write a new program."},
		{"the items that ask", func(p govern.Permit) govern.Permit {
			p.Asks = []callpath.Ask{{Item: 0, Path: filepath.Join(sorted, "a.pdf"), Said: "change a hidden file"}}
			return p
		}, "a.pdf: it would change a hidden file."},
	} {
		t.Run(c.name, func(t *testing.T) {
			it := NewItem(c.p(p))
			if it.Batch == nil {
				t.Fatal("not a file operation's card")
			}
			if it.Batch.Why != c.why {
				t.Errorf("why\n got %q\nwant %q", it.Batch.Why, c.why)
			}
			html := render(t, View{Pending: []Item{it}})
			if !strings.Contains(html, `data-testid="permit-why">Hearth asks because of `+c.why+"<") {
				t.Errorf("the card does not say why it asks (%q)", c.why)
			}
		})
	}
}
