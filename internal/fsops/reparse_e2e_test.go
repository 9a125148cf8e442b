package fsops

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The reparse tags and file attributes of OneDrive items as Windows
// reports them: a file or folder on this PC, and a file online only.
const (
	tagCloud     = 0x9000001A
	tagCloud1    = 0x9000101A
	attrsOnPC    = 0x20 | 0x400              // archive, reparse point
	attrsOffline = 0x400 | 0x1000 | 0x400000 // reparse point, offline, recall on data access
)

// fakeOneDrive is a fake of what Go on Windows says of OneDrive items,
// which cannot exist here: a OneDrive file needs Windows's cloud-files
// filter driver, which neither Linux nor Wine has. For the paths it
// holds, a stat (Lstat, Stat, an opened file's) and a directory entry say
// irregular, the folder mark kept, as Go since 1.23 says of a cloud
// placeholder; their reparse tag and attributes are a cloud file's.
type fakeOneDrive map[string]cloudItem

type cloudItem struct{ tag, attrs uint32 }

func (f fakeOneDrive) info(p string, info fs.FileInfo) fs.FileInfo {
	if _, ok := f[p]; ok {
		return irregularInfo{info}
	}
	return info
}

func (f fakeOneDrive) entry(p string, de fs.DirEntry) fs.DirEntry {
	if _, ok := f[p]; ok {
		return irregularEntry{de}
	}
	return de
}

func (f fakeOneDrive) reparse(p string) (uint32, uint32, bool) {
	it, ok := f[p]
	return it.tag, it.attrs, ok
}

// irregularInfo and irregularEntry are a file or folder as Go on Windows
// says of a cloud placeholder: its type, and the irregular mark.
type irregularInfo struct{ fs.FileInfo }

func (i irregularInfo) Mode() fs.FileMode { return i.FileInfo.Mode() | fs.ModeIrregular }

type irregularEntry struct{ fs.DirEntry }

func (d irregularEntry) Type() fs.FileMode { return d.DirEntry.Type() | fs.ModeIrregular }

func (d irregularEntry) Info() (fs.FileInfo, error) {
	info, err := d.DirEntry.Info()
	if err != nil {
		return nil, err
	}
	return irregularInfo{info}, nil
}

// TestOneDriveItemsThroughTheEngine: in a Documents folder kept in
// OneDrive, where every file and folder is a cloud placeholder (Go marks
// each irregular since 1.23), fs.read reads a file and a document, fs.stat
// says file (hashed) or folder, fs.list names files and folders, fs.search
// finds text in the files and inside a OneDrive folder, and fs.write
// replaces a file keeping its undo copy; a file online only is stated
// without its hash and left unread by the search (reading it has Windows
// download it), while fs.read, which a person asked for, reads it.
func TestOneDriveItemsThroughTheEngine(t *testing.T) {
	ctx := context.Background()
	env := newTestEngine(t)
	docs := env.path("OneDrive", "Documents")
	note := filepath.Join(docs, "note.txt")
	away := filepath.Join(docs, "away.txt")
	taxes := filepath.Join(docs, "Taxes")
	year := filepath.Join(taxes, "2025.txt")
	letter := filepath.Join(docs, "letter.docx")
	writeFiles(t, map[string]string{
		note: "the invoice from the plumber\n",
		away: "an invoice kept online\n",
		year: "invoice total 1200\n",
	})
	if _, err := env.e.DocxWrite(ctx, "r:chat", DocxWriteInput{Path: letter, Markdown: "# Dear Ann\n\nThe invoice is paid.\n"}); err != nil {
		t.Fatal(err)
	}
	env.e.seams.windows = fakeOneDrive{
		docs:   {tagCloud, attrsOnPC},
		note:   {tagCloud, attrsOnPC},
		away:   {tagCloud1, attrsOffline},
		taxes:  {tagCloud, attrsOnPC},
		year:   {tagCloud, attrsOnPC},
		letter: {tagCloud, attrsOnPC},
	}

	r, err := env.e.Read(ctx, ReadInput{Path: note})
	if err != nil || r.Data != "the invoice from the plumber\n" || r.SHA256 != hashBytes([]byte(r.Data)) {
		t.Errorf("fs.read of a OneDrive file: %+v %v", r, err)
	}
	if r, err := env.e.Read(ctx, ReadInput{Path: away}); err != nil || r.Data != "an invoice kept online\n" {
		t.Errorf("fs.read of a OneDrive file online only: %+v %v", r, err)
	}
	if r, err := env.e.Read(ctx, ReadInput{Path: letter}); err != nil || r.DocumentPart == nil || !strings.Contains(r.Data, "Dear Ann") {
		t.Errorf("fs.read of a OneDrive document: %+v %v", r, err)
	}

	for _, c := range []struct {
		path, typ, sha string
	}{
		{note, TypeFile, hashBytes([]byte("the invoice from the plumber\n"))},
		{away, TypeFile, ""},
		{taxes, TypeDir, ""},
		{docs, TypeDir, ""},
	} {
		st, err := env.e.Stat(ctx, StatInput{Path: c.path})
		if err != nil || !st.Exists || st.Type != c.typ || st.SHA256 != c.sha {
			t.Errorf("fs.stat %s: %+v %v, want type %s sha256 %q", c.path, st, err, c.typ, c.sha)
		}
	}

	l, err := env.e.List(ctx, ListInput{Path: docs})
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]string{}
	for _, ent := range l.Entries {
		types[ent.Name] = ent.Type
	}
	want := map[string]string{"note.txt": TypeFile, "away.txt": TypeFile, "Taxes": TypeDir, "letter.docx": TypeFile}
	for name, typ := range want {
		if types[name] != typ {
			t.Errorf("fs.list: %s is %q, want %q (%v)", name, types[name], typ, types)
		}
	}
	if _, err := env.e.List(ctx, ListInput{Path: note}); err == nil || !strings.Contains(err.Error(), "is a file, not a directory") {
		t.Errorf("fs.list of a OneDrive file: %v", err)
	}

	s, err := env.e.Search(ctx, SearchInput{Path: docs, Query: "invoice", Documents: true})
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, m := range s.Matches {
		found[m.Path+" "+m.Kind] = true
	}
	for _, p := range []string{note + " content", year + " content", letter + " document"} {
		if !found[p] {
			t.Errorf("fs.search did not find the text of %s: %+v", p, s)
		}
	}
	if found[away+" content"] || s.Skipped["online_only"] != 1 {
		t.Errorf("fs.search read the file online only, or did not say it skipped it: %+v", s)
	}

	// The Changes page shows a change from the file as it is now, but
	// never reads a file online only for it (Windows would download it).
	if data, ok, err := env.e.Content(ctx, note, hashBytes([]byte("the invoice from the plumber\n")), 1<<20); err != nil || !ok || string(data) != "the invoice from the plumber\n" {
		t.Errorf("the content of a OneDrive file on this PC: %q %v %v", data, ok, err)
	}
	if data, ok, err := env.e.Content(ctx, away, hashBytes([]byte("an invoice kept online\n")), 1<<20); err != nil || ok {
		t.Errorf("the content of a OneDrive file online only was read: %q %v %v", data, ok, err)
	}

	w, err := env.e.Write(ctx, "r:chat", WriteInput{Path: note, Data: "paid\n"})
	if err != nil || w.PreviousSHA256 == nil || *w.PreviousSHA256 != hashBytes([]byte("the invoice from the plumber\n")) {
		t.Fatalf("fs.write over a OneDrive file: %+v %v", w, err)
	}
	if got, _ := os.ReadFile(note); string(got) != "paid\n" {
		t.Fatalf("after fs.write: %q", got)
	}
}

// TestSearchWalksAFolderFastwalkLeaves: fastwalk goes only into an entry
// whose type is exactly a folder; a OneDrive folder, which Go on Windows
// marks irregular too, is walked by the search itself, once.
func TestSearchWalksAFolderFastwalkLeaves(t *testing.T) {
	ctx := context.Background()
	env := newTestEngine(t)
	taxes := env.path("Documents", "Taxes")
	year := filepath.Join(taxes, "2025", "total.txt")
	writeFiles(t, map[string]string{year: "invoice total 1200\n"})
	env.e.seams.windows = fakeOneDrive{taxes: {tagCloud, attrsOnPC}}
	noIgnore := false
	s, err := env.e.newSearch(ctx, SearchInput{Path: env.path("Documents"), Query: "invoice", RespectIgnore: &noIgnore})
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Lstat(taxes)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.visit(taxes, irregularEntry{fs.FileInfoToDirEntry(info)}, nil); err != nil {
		t.Fatal(err)
	}
	res := s.result("invoice")
	if len(res.Matches) != 1 || res.Matches[0].Path != year || res.FilesSearched != 1 {
		t.Fatalf("the search did not walk the OneDrive folder once: %+v", res)
	}
}
