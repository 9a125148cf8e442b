package risk_test

import (
	"archive/zip"
	"bytes"
	"testing"

	"github.com/hearth-dev/hearth/internal/risk"
)

// TestOnlyDocumentsAreOrdinary: below the home, with no hidden name and
// outside the system's folders, a write is ordinary only when the file
// is a document by its extension. Code, settings (also those a program
// that runs commands reads and that are not hidden on Windows), unknown
// kinds and names without an extension ask; files that run when opened
// ask as such, on both OSes.
func TestOnlyDocumentsAreOrdinary(t *testing.T) {
	lin := risk.NewWritesFor(false, env(map[string]string{"HOME": "/home/u"}), nil)
	win := risk.NewWritesFor(true, env(map[string]string{"USERPROFILE": `C:\Users\Ann`, "LOCALAPPDATA": `C:\Users\Ann\AppData\Local`,
		"APPDATA": `C:\Users\Ann\AppData\Roaming`, "PATHEXT": ".COM;.EXE;.BAT;.CMD"}), nil)
	for _, c := range []struct {
		w    *risk.Writes
		path string
		want risk.Why
	}{
		{lin, "/home/u/Documents/letter.pdf", ""},
		{lin, "/home/u/Documents/Budget 2026.XLSX", ""},
		{lin, "/home/u/Pictures/IMG_0001.jpg", ""},
		{lin, "/home/u/Downloads/data.csv", ""},
		{lin, "/home/u/Music/song.flac", ""},
		{lin, "/home/u/Videos/clip.mp4", ""},
		{lin, "/home/u/Downloads/photos.zip", ""},
		{lin, "/home/u/notes/todo.md", ""},
		{lin, "/home/u/proj/main.go", risk.WhyNotDocument},
		{lin, "/home/u/proj/lefthook.yml", risk.WhyNotDocument},
		{lin, "/home/u/proj/package.json", risk.WhyNotDocument},
		{lin, "/home/u/proj/Makefile", risk.WhyNotDocument},
		{lin, "/home/u/proj/page.html", risk.WhyNotDocument},
		{lin, "/home/u/Documents/old.doc", risk.WhyOpens},
		{lin, "/home/u/Documents/x.unknownkind", risk.WhyNotDocument},
		{lin, "/home/u/tools/tidy.ahk", risk.WhyOpens},
		{lin, "/home/u/tools/tidy.au3", risk.WhyOpens},
		{lin, "/home/u/Desktop/Files.desktop", risk.WhyOpens},
		{lin, "/home/u/Templates/New.desktop", risk.WhyOpens},
		{lin, "/home/u/Documents/notes.txt.{3050F4D8-98B5-11CF-BB82-00AA00BDCE0B}", risk.WhyOpens},
		{win, `C:\Users\Ann\_vimrc`, risk.WhyNotDocument},
		{win, `C:\Users\Ann\vimfiles\plugin\x.vim`, risk.WhyNotDocument},
		{win, `C:\Users\Ann\pip\pip.ini`, risk.WhyNotDocument},
		{win, `C:\Users\Ann\scoop\shims\git.shim`, risk.WhyNotDocument},
		{win, `C:\Users\Ann\src\app\lefthook.yml`, risk.WhyNotDocument},
		{win, `C:\Users\Ann\src\app\package.json`, risk.WhyNotDocument},
		{win, `C:\Users\Ann\Documents\report.docx`, ""},
		{win, `C:\Users\Ann\Documents\Notes.TXT`, ""},
		{win, `C:\Users\Ann\Desktop\tidy.ahk`, risk.WhyOpens},
		{win, `C:\Users\Ann\Documents\run.au3`, risk.WhyOpens},
		{win, `C:\Users\Ann\Documents\dark.theme`, risk.WhyOpens},
		{win, `C:\Users\Ann\Documents\dark.themepack`, risk.WhyOpens},
		{win, `C:\Users\Ann\Documents\dark.deskthemepack`, risk.WhyOpens},
		{win, `C:\Users\Ann\Documents\notes.txt.{3050F4D8-98B5-11CF-BB82-00AA00BDCE0B}`, risk.WhyOpens},
	} {
		why, ok := c.w.Classify(risk.FileFacts{Path: c.path, Root: "/home/u", NewHead: []byte("abcd")})
		if c.w == win {
			why, ok = c.w.Classify(risk.FileFacts{Path: c.path, Root: `C:\Users\Ann`, NewHead: []byte("abcd")})
		}
		if c.path == "/home/u/Downloads/photos.zip" || c.path == "/home/u/Documents/Budget 2026.XLSX" || c.path == `C:\Users\Ann\Documents\report.docx` {
			why, ok = c.w.Classify(risk.FileFacts{Path: c.path, Root: "/home/u", NewHead: []byte("PK\x03\x04")})
			if c.w == win {
				why, ok = c.w.Classify(risk.FileFacts{Path: c.path, Root: `C:\Users\Ann`, NewHead: []byte("PK\x03\x04")})
			}
		}
		if why != c.want || ok != (c.want == "") {
			t.Errorf("%s: %q (ordinary %v), want %q", c.path, why, ok, c.want)
		}
	}
	// Every macro-enabled Office type asks, whatever its content.
	for _, ext := range []string{".xlsm", ".docm", ".pptm", ".ppsm", ".xla", ".xlam", ".dotm", ".potm", ".ppam", ".sldm"} {
		for _, w := range []*risk.Writes{lin, win} {
			p, root := "/home/u/Documents/book"+ext, "/home/u"
			if w == win {
				p, root = `C:\Users\Ann\Documents\book`+ext, `C:\Users\Ann`
			}
			if why, ok := w.Classify(risk.FileFacts{Path: p, Root: root, NewHead: []byte("PK\x03\x04")}); ok || why != risk.WhyOpens {
				t.Errorf("%s: %q (ordinary %v), want opens", p, why, ok)
			}
			if risk.IsDocumentName(p) {
				t.Errorf("%s is a document by name", p)
			}
		}
	}
}

// pkg is an Office package (a zip) with the named parts.
func pkg(t *testing.T, parts ...string) []byte {
	t.Helper()
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	for _, p := range parts {
		w, err := z.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte("<x/>"))
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestOfficeContentMustAgree: an .xlsx or .docx is a document only when
// its content is a package without a macro part (its central directory
// read, nothing else): a vbaProject.bin in any folder, a macro sheet, an
// ActiveX control or an OpenDocument Basic folder, or content that is
// not a zip (Office opens a renamed legacy file, macros and all, by its
// content) makes it ask as a file that runs when opened; a program
// named as a picture asks as a new program.
func TestOfficeContentMustAgree(t *testing.T) {
	w := risk.NewWritesFor(false, env(map[string]string{"HOME": "/home/u"}), nil)
	plain := pkg(t, "[Content_Types].xml", "xl/workbook.xml", "xl/worksheets/sheet1.xml")
	for _, c := range []struct {
		name    string
		path    string
		content []byte
		want    risk.Why
	}{
		{"plain workbook", "/home/u/Documents/b.xlsx", plain, ""},
		{"empty new file", "/home/u/Documents/b.xlsx", []byte{}, ""},
		{"vbaProject.bin", "/home/u/Documents/b.xlsx", pkg(t, "[Content_Types].xml", "xl/vbaProject.bin"), risk.WhyOpens},
		{"vbaProject.bin in Word", "/home/u/Documents/d.docx", pkg(t, "[Content_Types].xml", "word/vbaProject.bin"), risk.WhyOpens},
		{"vbaProject elsewhere, other case", "/home/u/Documents/d.docx", pkg(t, "custom/VBAPROJECT.BIN"), risk.WhyOpens},
		{"macro sheet", "/home/u/Documents/b.xlsx", pkg(t, "xl/macrosheets/sheet1.xml"), risk.WhyOpens},
		{"ActiveX", "/home/u/Documents/p.pptx", pkg(t, "ppt/activeX/activeX1.bin"), risk.WhyOpens},
		{"OpenDocument Basic", "/home/u/Documents/s.ods", pkg(t, "content.xml", "Basic/Standard/Module1.xml"), risk.WhyOpens},
		{"OpenDocument plain", "/home/u/Documents/s.ods", pkg(t, "mimetype", "content.xml"), ""},
		{"legacy content renamed", "/home/u/Documents/d.docx", []byte("\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"), risk.WhyOpens},
		{"a program named as a picture", "/home/u/Pictures/a.jpg", []byte("MZ\x90\x00"), risk.WhyNewProgram},
	} {
		f := risk.FileFacts{Path: c.path, Root: "/home/u", NewHead: c.content[:min(len(c.content), risk.HeadSize)]}
		if risk.NeedsPackageCheck(c.path) {
			f.NewMacros = risk.PackageMacrosBytes(c.content)
		}
		why, ok := w.Classify(f)
		if why != c.want || ok != (c.want == "") {
			t.Errorf("%s (%s): %q (ordinary %v), want %q", c.name, c.path, why, ok, c.want)
		}
	}
	if !risk.PackageMacrosBytes([]byte("PK\x03\x04 not really a zip")) {
		t.Error("a broken package counts as free of macros")
	}
	if risk.NeedsPackageCheck("/home/u/a.pdf") || !risk.NeedsPackageCheck(`C:\x\A.DOCX`) {
		t.Error("NeedsPackageCheck is wrong about a PDF or a DOCX")
	}
}

// TestRunsWhenOpened: one test for writes and ui.open: the table (on
// every OS), PATHEXT on Windows, a CLSID name, the execute bit off
// Windows, and program content; documents and plain names do not.
func TestRunsWhenOpened(t *testing.T) {
	lin := risk.NewOpensFor(false, env(nil))
	win := risk.NewOpensFor(true, env(map[string]string{"PATHEXT": ".COM;.EXE;.BAT;.CMD;.VBS;.JS;.WS;.MSC;.PY;.HEARTHX"}))
	for _, c := range []struct {
		o    *risk.Opens
		path string
		exec bool
		head string
		want bool
	}{
		{lin, "/home/u/x.ahk", false, "", true},
		{lin, "/home/u/Desktop/app.desktop", false, "[Des", true},
		{lin, "/home/u/tool", true, "", true},
		{lin, "/home/u/tool", false, "#!/b", true},
		{lin, "/home/u/tool", false, "\x7fELF", true},
		{lin, "/home/u/notes.txt", false, "Dear", false},
		{lin, "/home/u/report.xlsm", false, "PK\x03\x04", true},
		{win, `C:\Users\Ann\x.HEARTHX`, false, "", true},
		{win, `C:\Users\Ann\x.ws`, false, "", true},
		{win, `C:\Users\Ann\x.theme`, false, "", true},
		{win, `C:\Users\Ann\x.txt.{3050f4d8-98b5-11cf-bb82-00aa00bdce0b}`, false, "", true},
		{win, `C:\Users\Ann\tool`, true, "", false},
		{win, `C:\Users\Ann\photo.jpg`, false, "\xff\xd8\xff\xe0", false},
	} {
		if got := c.o.Runs(c.path, c.exec, []byte(c.head)); got != c.want {
			t.Errorf("%s (exec %v, %q): runs when opened %v, want %v", c.path, c.exec, c.head, got, c.want)
		}
	}
	if lin.ByName("/home/u/x.hearthx") {
		t.Error("PATHEXT counts off Windows")
	}
}
