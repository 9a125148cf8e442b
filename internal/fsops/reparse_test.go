package fsops

import (
	"io/fs"
	"testing"
	"time"
)

// TestLinkTag: of the reparse tags, only a symbolic link's and a mount
// point's (a junction's) make a link that a move or a trash carries
// itself; a OneDrive file (a cloud placeholder), an app execution alias,
// a deduplicated file are the file itself.
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
		{"WSL symbolic link", 0xA000001D, false},
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
