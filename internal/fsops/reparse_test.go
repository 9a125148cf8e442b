package fsops

import (
	"io/fs"
	"testing"
	"time"
)

// TestLinkTag: of the reparse tags, the name surrogates — a symbolic
// link's, a mount point's (a junction's), a WSL symbolic link's — make a
// link that a move or a trash carries itself and that a read or a search
// does not take for the file; a OneDrive file (a cloud placeholder), an
// app execution alias, a deduplicated file are the file itself.
func TestLinkTag(t *testing.T) {
	for _, c := range []struct {
		name string
		tag  uint32
		link bool
	}{
		{"symbolic link", 0xA000000C, true},
		{"junction", 0xA0000003, true},
		{"OneDrive file", 0x9000001A, false},
		{"OneDrive file (cloud 3)", 0x9000301A, false},
		{"app execution alias", 0x8000001B, false},
		{"deduplicated file", 0x80000013, false},
		{"WSL symbolic link", 0xA000001D, true},
	} {
		if got := linkTag(c.tag); got != c.link {
			t.Errorf("linkTag(%#x) (%s) = %v, want %v", c.tag, c.name, got, c.link)
		}
	}
}

// irregular is what os.Lstat says of a Windows reparse point since Go
// 1.23 (a junction, a OneDrive file alike): a file or folder marked
// irregular.
type irregular struct{ dir bool }

func (irregular) Name() string       { return "item" }
func (irregular) Size() int64        { return 7 }
func (irregular) ModTime() time.Time { return time.Time{} }
func (i irregular) IsDir() bool      { return i.dir }
func (irregular) Sys() any           { return nil }
func (i irregular) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | fs.ModeIrregular | 0o777
	}
	return fs.ModeIrregular | 0o666
}

// TestPlainModeOfAReparsePoint: a OneDrive file or folder, which Go
// marks irregular as it does a junction, is a plain file or folder to
// the file operations (a file is regular, neither is a link), so a move
// or a trash carries its content; a junction stays a link. (Wine cannot
// make a reparse point, so the decision is tested without one.)
func TestPlainModeOfAReparsePoint(t *testing.T) {
	for _, dir := range []bool{false, true} {
		info := irregular{dir}
		cloud := plainItem{info}
		if plainMode(info.Mode(), 0x9000001A) != cloud.Mode() {
			t.Fatalf("plainMode and plainItem differ")
		}
		if isLink(cloud) {
			t.Errorf("a OneDrive item (folder %v) is a link: %v", dir, cloud.Mode())
		}
		if !dir && !cloud.Mode().IsRegular() {
			t.Errorf("a OneDrive file is not a plain file: %v", cloud.Mode())
		}
		if dir && !cloud.IsDir() {
			t.Errorf("a OneDrive folder is not a folder: %v", cloud.Mode())
		}
		if m := plainMode(info.Mode(), 0xA0000003); m != info.Mode() || !isLink(info) {
			t.Errorf("a junction (folder %v) is no longer a link: %v", dir, m)
		}
	}
}

// TestWhatHearthSeesOfAReparsePoint: what Hearth sees of an item that
// os.Lstat or a directory entry says is mode, with the reparse tag tag,
// as Go on Windows says since 1.23: a OneDrive file or folder (on this PC
// or not), a file Windows compressed (CompactOS), an app execution alias
// are the file or folder they are; a junction stays a link (irregular,
// "other", isLink), refused and contained as links are.
func TestWhatHearthSeesOfAReparsePoint(t *testing.T) {
	const file, dir = fs.ModeIrregular | 0o666, fs.ModeDir | fs.ModeIrregular | 0o777
	for _, c := range []struct {
		name string
		mode fs.FileMode
		tag  uint32
		typ  string
		link bool
	}{
		{"OneDrive file", file, 0x9000001A, TypeFile, false},
		{"OneDrive file (cloud 1)", file, 0x9000101A, TypeFile, false},
		{"OneDrive file (cloud F)", file, 0x9000F01A, TypeFile, false},
		{"OneDrive folder", dir, 0x9000001A, TypeDir, false},
		{"OneDrive folder (cloud 3)", dir, 0x9000301A, TypeDir, false},
		{"compressed system file (WOF)", file, 0x80000017, TypeFile, false},
		{"app execution alias", file, 0x8000001B, TypeFile, false},
		{"junction", file, 0xA0000003, TypeOther, true},
		{"symbolic link seen irregular", file, 0xA000000C, TypeOther, true},
		{"WSL symbolic link", file, 0xA000001D, TypeOther, true},
		{"container's link", file, 0xA0001027, TypeOther, true},
		{"another name surrogate", file, 0xA0000019, TypeOther, true},
	} {
		m := plainMode(c.mode, c.tag)
		if got := typeOf(m); got != c.typ {
			t.Errorf("%s (%v, tag %#x): type %s, want %s", c.name, c.mode, c.tag, got, c.typ)
		}
		if got := isLink(modeInfo(m)); got != c.link {
			t.Errorf("%s (%v, tag %#x): isLink %v, want %v", c.name, c.mode, c.tag, got, c.link)
		}
		if m.Perm() != c.mode.Perm() {
			t.Errorf("%s: permissions %v, want %v", c.name, m.Perm(), c.mode.Perm())
		}
	}
}

// TestWhatHearthSeesOfAnOpenedFile: an item reached following links
// (os.Stat, an opened file's Stat) that Go says is irregular is the file
// or folder itself: Windows followed every symbolic link and junction to
// get there, so only the item's own tag (a OneDrive file's) can mark it.
// Other types are left as they are.
func TestWhatHearthSeesOfAnOpenedFile(t *testing.T) {
	for _, c := range []struct {
		mode fs.FileMode
		typ  string
	}{
		{fs.ModeIrregular | 0o666, TypeFile},
		{fs.ModeIrregular | 0o444, TypeFile},
		{fs.ModeDir | fs.ModeIrregular | 0o777, TypeDir},
		{0o644, TypeFile},
		{fs.ModeDir | 0o755, TypeDir},
		{fs.ModeNamedPipe | 0o666, TypeOther},
		{fs.ModeDevice | fs.ModeCharDevice | 0o666, TypeOther},
		{fs.ModeSocket | 0o666, TypeOther},
	} {
		m := followedMode(c.mode)
		if got := typeOf(m); got != c.typ || m.Perm() != c.mode.Perm() {
			t.Errorf("opened %v: %v (%s), want %s", c.mode, m, got, c.typ)
		}
	}
}

// TestOfflineAttributes: a OneDrive file online only (offline, or recall
// on data access) is one whose read has Windows download it; one on this
// PC (kept or just used) is not.
func TestOfflineAttributes(t *testing.T) {
	for _, c := range []struct {
		name    string
		attrs   uint32
		offline bool
	}{
		{"online only", 0x400 | 0x1000 | 0x400000, true},
		{"recall on data access alone", 0x400 | 0x400000, true},
		{"offline alone", 0x1000, true},
		{"on this PC", 0x20 | 0x400, false},
		{"always keep on this device (pinned)", 0x20 | 0x400 | 0x80000, false},
		{"folder not yet listed (recall on open)", 0x10 | 0x400 | 0x40000, false},
		{"plain file", 0x20, false},
	} {
		if got := offlineAttributes(c.attrs); got != c.offline {
			t.Errorf("%s (%#x): offline %v, want %v", c.name, c.attrs, got, c.offline)
		}
	}
}

// modeInfo is a FileInfo of mode m.
type modeInfo fs.FileMode

func (m modeInfo) Name() string       { return "item" }
func (m modeInfo) Size() int64        { return 0 }
func (m modeInfo) ModTime() time.Time { return time.Time{} }
func (m modeInfo) IsDir() bool        { return fs.FileMode(m).IsDir() }
func (m modeInfo) Sys() any           { return nil }
func (m modeInfo) Mode() fs.FileMode  { return fs.FileMode(m) }
