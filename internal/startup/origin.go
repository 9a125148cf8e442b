package startup

import (
	"os"
	"strings"
)

// origin is one thing a look at the sources reads: a file, a folder of
// entry files, a registry key. Its stamp changes whenever what read
// would give may have; read gives the entries it holds and the origins
// it leads to (a folder's files, a file's includes).
type origin struct {
	key string
	// depth is how many includes away from an entry's own file it is
	// (maxDepth bounds it); a folder's files are at the folder's depth.
	depth int
	stamp func() string
	read  func() ([]Entry, []origin)
}

// parser reads the entries of one file; it may give origins one level
// further (at depth+1), the files the file includes.
type parser func(h host, path string, depth int, b []byte) ([]Entry, []origin)

// fileOrigin is the file at p read by parse.
func fileOrigin(h host, p string, depth int, parse parser) origin {
	return origin{key: "file:" + p, depth: depth,
		stamp: func() string { return fileStamp(p) },
		read: func() ([]Entry, []origin) {
			b, err := readFile(p)
			if err != nil {
				return nil, nil
			}
			return parse(h, p, depth, b)
		}}
}

// dirOrigin is the folder at p: child makes the origin of each name in
// it that is read (a file or a folder), ok false for a name it skips.
func dirOrigin(h host, p string, depth int, child func(name string, dir bool) (origin, bool)) origin {
	return origin{key: "dir:" + p, depth: depth,
		stamp: func() string { return dirStamp(p) },
		read: func() ([]Entry, []origin) {
			des, err := os.ReadDir(p)
			if err != nil {
				return nil, nil
			}
			var out []origin
			for _, de := range des {
				dir := de.IsDir()
				if de.Type()&os.ModeSymlink != 0 {
					dir = isDir(h.join(p, de.Name()))
				}
				if o, ok := child(de.Name(), dir); ok {
					out = append(out, o)
				}
			}
			return nil, out
		}}
}

// filesIn is the folder at p with each file whose name ends in one of
// suffixes (without case; any file when none) read by parse.
func filesIn(h host, p string, parse parser, suffixes ...string) origin {
	return dirOrigin(h, p, 0, func(name string, dir bool) (origin, bool) {
		if dir || !hasSuffix(name, suffixes) {
			return origin{}, false
		}
		return fileOrigin(h, h.join(p, name), 0, parse), true
	})
}

// hasSuffix reports whether name ends in one of suffixes, without case;
// true when there are none.
func hasSuffix(name string, suffixes []string) bool {
	if len(suffixes) == 0 {
		return true
	}
	l := strings.ToLower(name)
	for _, s := range suffixes {
		if strings.HasSuffix(l, s) {
			return true
		}
	}
	return false
}

// entryOrigin is an origin read by read and stamped by stamp (a
// registry key's).
func entryOrigin(key string, stamp func() string, read func() ([]Entry, []origin)) origin {
	return origin{key: key, stamp: stamp, read: read}
}
