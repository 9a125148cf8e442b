package fsops

import (
	"io/fs"
	"os"
)

// What an item is — a file, a folder, a link or something else — is
// decided here, once, for every operation (read, stat, list, search, the
// hashes and changed-since checks, write, move, copy, trash).
//
// Since Go 1.23, on Windows, os.Lstat, os.Stat, (*os.File).Stat and a
// directory entry's Type mark irregular every reparse point but a symbolic
// link, an AF_UNIX socket and a deduplicated file: a junction, and as well
// every OneDrive file and folder (a cloud placeholder, tags 0x9000001A and
// its kin, on this PC or not), a file Windows compressed (WOF, 0x80000017),
// an app execution alias. Only a symbolic link and a junction point
// somewhere; the others are the file or folder itself. So:
//
//   - An item looked at without following its last name (Lstat, a
//     directory entry) that is irregular is, unless its reparse tag is a
//     link's (linkTag), the plain file or folder it is (plainMode); a link
//     stays a link (irregular to isLink, "other" to typeOf), so the rules
//     that refuse or contain links are unchanged. Its tag is read by
//     reparseTag, which opens the item for no access: a list or a stat never
//     reads a file (nor has Windows fetch a OneDrive file) to name its type.
//   - An item looked at following links (os.Stat, an opened file's Stat)
//     that is irregular is the file or folder itself, with no tag to read
//     (followedMode): Windows followed every name surrogate (symbolic link,
//     junction) to get there, so the mark can only come from a tag of
//     another kind.
//
// Nothing is read that was not before: a read opens the item as it always
// did (an app execution alias fails to open by itself), and a OneDrive
// file that is not on this PC (offline) is downloaded by Windows only when
// a person's read asks for its content (fs.read, a write's snapshot), never
// for a stat's hash, a search or a page's changed-since check.
//
// Off Windows Go marks nothing irregular, so the decisions change nothing
// there; tests make them meet Windows's answers through seams.windows.

// The file attributes of a OneDrive file that is not on this PC: reading
// its content has Windows download it first.
const (
	fileAttributeOffline            = 0x1000
	fileAttributeRecallOnDataAccess = 0x400000
)

// linkTag reports whether an item with the reparse tag tag is a link.
// Since Go 1.23 os.Lstat marks every Windows reparse point irregular but
// a symbolic link (and a deduplicated file): a junction, and as well a
// OneDrive file (a cloud placeholder, tags 0x9000001A and its kin), an
// app execution alias or a file of another file-system filter. A link is
// a tag Windows calls a name surrogate (its bit 0x20000000), as os.Stat
// does when it decides what to follow: a symbolic link, a junction, and
// as well a WSL symbolic link (0xA000001D) or a container's link
// (0xA0001027), which Hearth cannot follow but must not take for the file
// itself. The others are the file or folder itself, carried, copied and
// trashed as such.
func linkTag(tag uint32) bool {
	return tag&reparseTagNameSurrogate != 0
}

// reparseTagNameSurrogate is the bit of a reparse tag that says the item
// stands for another name. Named here, not taken from x/sys/windows, so
// the decision is the same, and tested, on every system.
const reparseTagNameSurrogate = 0x20000000

// plainMode is the mode of an item that os.Lstat (or its directory entry)
// says is mode and whose reparse tag is tag: irregular no more unless the
// tag is a link's.
func plainMode(mode fs.FileMode, tag uint32) fs.FileMode {
	if linkTag(tag) {
		return mode
	}
	return mode &^ fs.ModeIrregular
}

// followedMode is the mode of an item that os.Stat or an opened file's
// Stat says is mode: links were followed to reach it, so an irregular mark
// comes from a reparse point that is the item itself.
func followedMode(mode fs.FileMode) fs.FileMode { return mode &^ fs.ModeIrregular }

// offlineAttributes reports whether Windows file attributes attrs are a
// file's that is not on this PC (a OneDrive file online only).
func offlineAttributes(attrs uint32) bool {
	return attrs&(fileAttributeOffline|fileAttributeRecallOnDataAccess) != 0
}

// itemView looks at items by the decisions above. Its zero value looks
// through the OS; an engine's (Engine.view) goes through seams.windows in
// a test.
type itemView struct{ win windowsItems }

// view is how the engine looks at items.
func (e *Engine) view() itemView { return itemView{e.seams.windows} }

// lstat is os.Lstat of p as Hearth sees it (plain).
func (v itemView) lstat(p string) (fs.FileInfo, error) {
	info, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if v.win != nil {
		info = v.win.info(p, info)
	}
	return v.plain(p, info), nil
}

// plain is info, an lstat of p (or the Info of p's directory entry), with
// the irregular mark taken off when p is a reparse point that is not a
// link (plainMode).
func (v itemView) plain(p string, info fs.FileInfo) fs.FileInfo {
	if !v.unmarked(p, info.Mode()) {
		return info
	}
	return plainItem{info}
}

// unmarked reports whether the item p, which an lstat or its directory
// entry says is of mode, loses its irregular mark (plainMode): it has
// one, and its reparse tag is not a link's.
func (v itemView) unmarked(p string, mode fs.FileMode) bool {
	if mode&fs.ModeIrregular == 0 {
		return false
	}
	tag, ok := v.tag(p)
	return ok && plainMode(mode, tag) != mode
}

// stat is os.Stat of p as Hearth sees it (followed).
func (v itemView) stat(p string) (fs.FileInfo, error) {
	info, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	return v.followed(p, info), nil
}

// opened is the Stat of f, a file opened following links, as Hearth sees
// it (followed).
func (v itemView) opened(f *os.File) (fs.FileInfo, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return v.followed(f.Name(), info), nil
}

// followed is info, what a stat of p following links says, with the
// irregular mark taken off (followedMode).
func (v itemView) followed(p string, info fs.FileInfo) fs.FileInfo {
	if v.win != nil {
		info = v.win.info(p, info)
	}
	if followedMode(info.Mode()) == info.Mode() {
		return info
	}
	return plainItem{info}
}

// entry is de, the directory entry of p, as Hearth sees it: its Type and
// Info without the irregular mark when p is a reparse point that is not a
// link (plainMode).
func (v itemView) entry(p string, de fs.DirEntry) fs.DirEntry {
	if v.win != nil {
		de = v.win.entry(p, de)
	}
	if !v.unmarked(p, de.Type()) {
		return de
	}
	return plainEntry{de}
}

// offline reports whether p, which a stat or a directory entry says is
// info, is a file not on this PC (offlineAttributes), whose content only a
// person's read should have Windows download.
func (v itemView) offline(p string, info fs.FileInfo) bool {
	if v.win != nil {
		_, attrs, ok := v.win.reparse(p)
		return ok && offlineAttributes(attrs)
	}
	attrs, ok := fileAttributes(info)
	return ok && offlineAttributes(attrs)
}

// tag is p's reparse tag (reparseTag).
func (v itemView) tag(p string) (uint32, bool) {
	if v.win != nil {
		tag, _, ok := v.win.reparse(p)
		return tag, ok
	}
	return reparseTag(p)
}

// lstatItem is os.Lstat of p as Hearth sees it, through the OS.
func lstatItem(p string) (fs.FileInfo, error) { return itemView{}.lstat(p) }

// plainInfo is itemView.plain through the OS.
func plainInfo(p string, info fs.FileInfo) fs.FileInfo { return itemView{}.plain(p, info) }

// plainItem is a FileInfo whose mode lacks the irregular mark.
type plainItem struct{ fs.FileInfo }

func (i plainItem) Mode() fs.FileMode { return i.FileInfo.Mode() &^ fs.ModeIrregular }

// plainEntry is a DirEntry whose type and info lack the irregular mark.
type plainEntry struct{ fs.DirEntry }

func (d plainEntry) Type() fs.FileMode { return d.DirEntry.Type() &^ fs.ModeIrregular }

func (d plainEntry) Info() (fs.FileInfo, error) {
	info, err := d.DirEntry.Info()
	if err != nil {
		return nil, err
	}
	return plainItem{info}, nil
}
