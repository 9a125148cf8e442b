package atomicfile_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// renamesThatAreNotReplaces lists the files that may call os.Rename
// themselves, each with why: a rename there moves a file aside, into a
// trash or into a name nothing had, rather than replacing a file's content
// (which goes through this package, so that it is synced, retried and
// never seen half-written).
var renamesThatAreNotReplaces = map[string]string{
	"internal/atomicfile/atomicfile_notwindows.go": "the atomic writer's own rename",
	"cmd/hearth-tray/install_windows.go":           "moves the running program aside, since Windows cannot replace a running exe",
	"cmd/hearth-tray/tray_windows.go":              "rotates the tray's log (moves it to .1)",
	"internal/tunnel/logfile.go":                   "rotates the tunnel log (moves each file one number up)",
	"internal/fsops/rename_linux.go":               "fs.move's rename where the file system lacks RENAME_NOREPLACE, into a name checked to be free",
	"internal/fsops/rename_other.go":               "fs.move's rename on systems without a no-replace rename, into a name checked to be free",
	"internal/update/handoff.go":                   "the updater's swap: the installed program aside, the new one in, and back on a rollback",
	"internal/backup/backup.go":                    "names the copy SQLite wrote (VACUUM INTO) once it verified; nothing had that name",
	"internal/backup/restore.go":                   "moves the live database aside and a verified copy into its place, and back if that fails",
	"internal/artifacts/artifacts.go":              "an artifact is a new file under a fresh id, written once and never replaced",
}

// TestRenamesGoThroughAtomicfile: no Go source (tests and testdata aside)
// calls os.Rename except the files above, so a file Hearth replaces is
// replaced by the one writer (WriteWith, Write, WriteFrom), never by a
// hand-written "temp file, then rename".
func TestRenamesGoThroughAtomicfile(t *testing.T) {
	root := filepath.Join("..", "..")
	found := map[string][]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		os := "os"
		for _, imp := range f.Imports {
			if imp.Path.Value == `"os"` && imp.Name != nil {
				os = imp.Name.Name
			}
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "Rename" {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == os {
				found[rel] = append(found[rel], rel+":"+strconv.Itoa(fset.Position(sel.Pos()).Line))
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) == 0 {
		t.Fatal("found no os.Rename at all; the scan is broken")
	}
	var bad []string
	for file, at := range found {
		if _, ok := renamesThatAreNotReplaces[file]; !ok {
			bad = append(bad, at...)
		}
	}
	sort.Strings(bad)
	for _, at := range bad {
		t.Errorf("%s: os.Rename outside internal/atomicfile: replace a file with atomicfile.WriteWith (or, for a move that replaces nothing, list the file in renamesThatAreNotReplaces with why)", at)
	}
	for file := range renamesThatAreNotReplaces {
		if found[file] == nil {
			t.Errorf("renamesThatAreNotReplaces lists %s, which no longer calls os.Rename: remove it", file)
		}
	}
}
