package fsops

import (
	"io/fs"
	"os"
)

// The reparse tags that make a Windows item a link: a symbolic link and
// a mount point (a junction). Named here, not taken from x/sys/windows,
// so the decision below is the same, and tested, on every system.
const (
	reparseTagSymlink    = 0xA000000C
	reparseTagMountPoint = 0xA0000003
)

// linkTag reports whether an item with the reparse tag tag is a link.
// Since Go 1.23 os.Lstat marks every Windows reparse point irregular but
// a symbolic link (and a deduplicated file): a junction, and as well a
// OneDrive file (a cloud placeholder, tags 0x9000001A and its kin), an
// app execution alias or a file of another file-system filter. Only the
// first two point somewhere; the others are the file or folder itself,
// carried, copied and trashed as such.
func linkTag(tag uint32) bool {
	return tag == reparseTagSymlink || tag == reparseTagMountPoint
}

// lstatItem is os.Lstat with a Windows reparse point that is not a link
// seen as the plain file or folder it is (plainInfo).
func lstatItem(p string) (fs.FileInfo, error) {
	info, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	return plainInfo(p, info), nil
}

// plainInfo is info, an lstat of p, with the irregular mark taken off
// when p is a Windows reparse point that is not a link (linkTag): such
// an item is moved, copied and trashed as its content is, where a link
// is carried itself.
func plainInfo(p string, info fs.FileInfo) fs.FileInfo {
	if info.Mode()&fs.ModeIrregular == 0 {
		return info
	}
	tag, ok := reparseTag(p)
	if !ok || plainMode(info.Mode(), tag) == info.Mode() {
		return info
	}
	return plainItem{info}
}

// plainMode is the mode of an item that os.Lstat says is mode and whose
// reparse tag is tag: irregular no more unless the tag is a link's.
func plainMode(mode fs.FileMode, tag uint32) fs.FileMode {
	if linkTag(tag) {
		return mode
	}
	return mode &^ fs.ModeIrregular
}

// plainItem is a FileInfo whose mode lacks the irregular mark.
type plainItem struct{ fs.FileInfo }

func (i plainItem) Mode() fs.FileMode { return i.FileInfo.Mode() &^ fs.ModeIrregular }
