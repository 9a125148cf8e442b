package govern

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hearth-dev/hearth/internal/risk"
)

// An exact rule for `tar xf release.tar` or `unzip -o release.zip`
// pins the archive (rulepins.go), but the folder it extracts into can
// change after: a symbolic link placed there (by a checkout, another
// archive) would carry the extraction elsewhere — into an autostart
// folder. Such a call is not covered by its rule and asks.

// maxMembers bounds the members of an archive read for the check; an
// archive with more asks.
const maxMembers = 100_000

// extractThroughLink returns, for a call of tar or unzip (by one of
// names) that extracts an archive, the first existing symbolic link in
// the destination folder that a member's path goes through or lands on,
// or the archive itself when its list of files cannot be read; "" when
// there is none, or the call does not extract.
func extractThroughLink(names []string, args []string, cwd string) string {
	var archive, dest string
	var ok bool
	switch {
	case slices.ContainsFunc(names, func(n string) bool { p := risk.ProgramName(n); return p == "tar" || p == "bsdtar" }):
		archive, dest, ok = tarExtraction(args)
	case slices.ContainsFunc(names, func(n string) bool { return risk.ProgramName(n) == "unzip" }):
		archive, dest, ok = unzipExtraction(args)
	}
	if !ok || archive == "" {
		return ""
	}
	if !filepath.IsAbs(archive) {
		archive = filepath.Join(cwd, archive)
	}
	if dest == "" {
		dest = cwd
	} else if !filepath.IsAbs(dest) {
		dest = filepath.Join(cwd, dest)
	}
	members, err := archiveMembers(archive)
	if err != nil {
		return archive
	}
	checked := map[string]bool{}
	for _, m := range members {
		m = filepath.FromSlash(strings.TrimLeft(m, "/"))
		parts := strings.Split(filepath.Clean(m), string(filepath.Separator))
		p := dest
		for _, part := range parts {
			if part == "" || part == "." {
				continue
			}
			p = filepath.Join(p, part)
			if checked[p] {
				continue
			}
			checked[p] = true
			fi, err := os.Lstat(p)
			if err != nil {
				break
			}
			if fi.Mode()&os.ModeSymlink != 0 {
				return p
			}
		}
	}
	return ""
}

// tarExtraction reads a tar call's arguments: whether it extracts, the
// archive (-f) and the folder (-C).
func tarExtraction(args []string) (archive, dest string, extract bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		next := func() string {
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		switch {
		case a == "--extract" || a == "--get":
			extract = true
		case strings.HasPrefix(a, "--file="):
			archive = strings.TrimPrefix(a, "--file=")
		case a == "--file":
			archive = next()
		case strings.HasPrefix(a, "--directory="):
			dest = strings.TrimPrefix(a, "--directory=")
		case a == "--directory" || a == "-C":
			dest = next()
		case strings.HasPrefix(a, "--"):
		case strings.HasPrefix(a, "-") || i == 0:
			// A cluster of letters (-xvf, or the old style xvf first);
			// an f takes the next argument, or the rest of the cluster.
			letters := strings.TrimPrefix(a, "-")
		cluster:
			for j, c := range letters {
				switch c {
				case 'x':
					extract = true
				case 'f':
					if rest := letters[j+1:]; rest != "" && strings.HasPrefix(a, "-") {
						archive = rest
						break cluster
					}
					archive = next()
				case 'C':
					dest = next()
				}
			}
		}
	}
	return archive, dest, extract
}

// unzipExtraction reads an unzip call's arguments: the archive (its
// first argument that is no option) and the folder (-d). unzip -l, -t,
// -v, -Z and -p list or test and extract nothing.
func unzipExtraction(args []string) (archive, dest string, extract bool) {
	extract = true
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-d":
			if i+1 < len(args) {
				i++
				dest = args[i]
			}
		case strings.HasPrefix(a, "-d"):
			dest = strings.TrimPrefix(a, "-d")
		case strings.HasPrefix(a, "-"):
			if strings.ContainsAny(strings.TrimPrefix(a, "-"), "ltvZp") {
				extract = false
			}
		case archive == "":
			archive = a
		}
	}
	return archive, dest, extract
}

// archiveMembers lists the paths in a zip or tar archive (plain, gzip or
// bzip2), or an error when it is none of these or has more than
// maxMembers.
func archiveMembers(path string) ([]string, error) {
	if zr, err := zip.OpenReader(path); err == nil {
		defer zr.Close()
		if len(zr.File) > maxMembers {
			return nil, io.ErrShortBuffer
		}
		out := make([]string, 0, len(zr.File))
		for _, f := range zr.File {
			out = append(out, f.Name)
		}
		return out, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	magic, _ := br.Peek(3)
	var r io.Reader = br
	switch {
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, err
		}
		r = gz
	case bytes.HasPrefix(magic, []byte("BZh")):
		r = bzip2.NewReader(br)
	}
	tr := tar.NewReader(r)
	var out []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if out = append(out, h.Name); len(out) > maxMembers {
			return nil, io.ErrShortBuffer
		}
	}
}
