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

// renamesThatAreNotReplaces lists the files that may rename a file
// themselves (os.Rename, or a system call that renames), each with why: a rename there moves a file aside, into a
// trash or into a name nothing had, rather than replacing a file's content
// (which goes through this package, so that it is synced, retried and
// never seen half-written).
var renamesThatAreNotReplaces = map[string]string{
	"internal/atomicfile/atomicfile_notwindows.go": "the atomic writer's own rename",
	"cmd/hearth-tray/install_windows.go":           "moves the running program aside, since Windows cannot replace a running exe",
	"cmd/hearth-tray/tray_windows.go":              "rotates the tray's log (moves it to .1)",
	"internal/tunnel/logfile.go":                   "rotates the tunnel log (moves each file one number up)",
	"internal/fsops/rename_linux.go":               "fs.move's rename where the file system lacks RENAME_NOREPLACE, into a name checked to be free",
	"internal/atomicfile/atomicfile_windows.go":    "the atomic writer's own rename on Windows (MoveFileEx, retried while another program holds the file)",
	"internal/fsops/rename_windows.go":             "fs.move's rename: MoveFileEx without MOVEFILE_REPLACE_EXISTING, which never replaces",
	"internal/fsops/rename_fallback.go":            "fs.move's rename where no no-replace rename exists: a folder onto an empty folder it made itself (refused once anything is put there)",
	"internal/update/handoff.go":                   "the updater's swap: the installed program aside, the new one in, and back on a rollback",
	"internal/backup/backup.go":                    "names the copy SQLite wrote (VACUUM INTO) once it verified; nothing had that name",
	"internal/backup/restore.go":                   "moves the live database aside and a verified copy into its place, and back if that fails",
	"internal/artifacts/artifacts.go":              "an artifact is a new file under a fresh id, written once and never replaced",
}

// renamePackages and renameFuncs are the calls that rename a file: the
// os package's and the system calls' under their own names.
var (
	renamePackages = map[string]bool{"os": true, "syscall": true, "golang.org/x/sys/unix": true, "golang.org/x/sys/windows": true}
	renameFuncs    = map[string]bool{"Rename": true, "Renameat": true, "Renameat2": true, "RenameFile": true,
		"MoveFile": true, "MoveFileEx": true, "MoveFileTransacted": true, "MoveFileWithProgress": true, "ReplaceFile": true}
)

// TestRenamesGoThroughAtomicfile: no Go source (tests and testdata aside)
// renames a file (os.Rename, or a system call that renames) except the
// files above, so a file Hearth replaces is
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
		// The packages that can rename a file, by the name this file
		// imports them under.
		pkgs := map[string]bool{}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if !renamePackages[path] {
				continue
			}
			name := path[strings.LastIndex(path, "/")+1:]
			if imp.Name != nil {
				name = imp.Name.Name
			}
			pkgs[name] = true
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok || !renameFuncs[sel.Sel.Name] {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && pkgs[x.Name] {
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
		t.Fatal("found no rename at all; the scan is broken")
	}
	var bad []string
	for file, at := range found {
		if _, ok := renamesThatAreNotReplaces[file]; !ok {
			bad = append(bad, at...)
		}
	}
	sort.Strings(bad)
	for _, at := range bad {
		t.Errorf("%s: a rename outside internal/atomicfile: replace a file with atomicfile.WriteWith (or, for a move that replaces nothing, list the file in renamesThatAreNotReplaces with why)", at)
	}
	for file := range renamesThatAreNotReplaces {
		if found[file] == nil {
			t.Errorf("renamesThatAreNotReplaces lists %s, which no longer renames a file: remove it", file)
		}
	}
}
