package fortest_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const (
	module      = "github.com/hearth-dev/hearth"
	fortestPath = module + "/internal/fortest"
)

// saysForTests is how a comment says that what it documents is there for
// tests ("for tests", "tests only", "only tests set"…).
var saysForTests = regexp.MustCompile(`(?i)\b(for tests|for a test|tests? only|only tests|test-only)\b`)

// notFixtures are the shipped packages whose names end in "test" and
// which are no test's fixture, each with why.
var notFixtures = map[string]string{
	module + "/internal/fortest":  "guards test access: the program calls its Must, which refuses outside a test",
	module + "/internal/selftest": "the program's own self-test of the machine it runs on",
}

// shippedFile is one parsed Go file (tests aside) of a package the program
// is built from.
type shippedFile struct {
	rel string // slash path from the repository's root
	f   *ast.File
}

// TestSeamsFollowTheConvention: in every package the program is built from
// (what cmd/ imports, on any OS), test access follows the one convention of
// docs/ARCHITECTURE.md ("Test access by one convention"):
//   - no field, parameter, result or variable is a testHook…;
//   - the type seams, and a variable of it, are declared in fortest.go; a
//     struct holds its seams in one field named seams; a struct field
//     whose comment says it is for tests is one of a seams type;
//   - a …ForTest function is in fortest.go and begins with fortest.Must();
//   - no test of the package replaces a package-level variable of it (a
//     function variable swapped for a test), the seams aside;
//   - no fixture package (dispatchtest, hearthtest…) is among them.
func TestSeamsFollowTheConvention(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, files := shipped(t, fset, filepath.Join("..", ".."))
	if len(pkgs) < 20 || len(files) < 200 {
		t.Fatalf("found %d packages, %d files the program is built from; the scan is broken", len(pkgs), len(files))
	}
	t.Logf("%d packages, %d files the program is built from", len(pkgs), len(files))
	var bad []string
	for _, p := range pkgs {
		last := p[strings.LastIndex(p, "/")+1:]
		if _, ok := notFixtures[p]; strings.HasSuffix(last, "test") && !ok {
			bad = append(bad, p+": a test's fixture package is imported by the program")
		}
	}
	for _, sf := range files {
		checkFile(sf, func(pos token.Pos, msg string) {
			bad = append(bad, sf.rel+":"+strconv.Itoa(fset.Position(pos).Line)+": "+msg)
		})
	}
	bad = append(bad, swappedVars(t, fset, filepath.Join("..", ".."), files)...)
	slices.Sort(bad)
	for _, b := range bad {
		t.Error(b)
	}
}

// shipped parses the Go files (tests aside, every OS's) of the packages
// the program is built from: those under cmd/ and, one by one, the
// module's packages they import.
func shipped(t *testing.T, fset *token.FileSet, root string) (pkgs []string, files []shippedFile) {
	t.Helper()
	cmds, err := os.ReadDir(filepath.Join(root, "cmd"))
	if err != nil {
		t.Fatal(err)
	}
	var queue []string
	seen := map[string]bool{}
	for _, c := range cmds {
		if c.IsDir() {
			queue = append(queue, module+"/cmd/"+c.Name())
		}
	}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if seen[p] {
			continue
		}
		seen[p] = true
		pkgs = append(pkgs, p)
		rel := strings.TrimPrefix(strings.TrimPrefix(p, module), "/")
		entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, filepath.Join(root, filepath.FromSlash(rel), name), nil, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, shippedFile{rel: rel + "/" + name, f: f})
			for _, imp := range f.Imports {
				if ip, _ := strconv.Unquote(imp.Path.Value); strings.HasPrefix(ip, module+"/") {
					queue = append(queue, ip)
				}
			}
		}
	}
	return pkgs, files
}

// swappedVars lists the assignments, in a package's own tests, to a
// package-level variable of its program code (a function variable a
// test replaces, like "var lstat = os.Lstat"): a seam outside the seams.
// A package-level variable of the seams type is the one exception.
func swappedVars(t *testing.T, fset *token.FileSet, root string, files []shippedFile) []string {
	t.Helper()
	vars := map[string]map[string]bool{} // folder → its package-level variables
	for _, sf := range files {
		dir := filepath.Dir(filepath.FromSlash(sf.rel))
		if vars[dir] == nil {
			vars[dir] = map[string]bool{}
		}
		for _, d := range sf.f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.VAR {
				for _, spec := range g.Specs {
					if vs := spec.(*ast.ValueSpec); !isSeams(vs.Type) {
						for _, id := range vs.Names {
							vars[dir][id.Name] = true
						}
					}
				}
			}
		}
	}
	var bad []string
	for dir, names := range vars {
		tests, err := filepath.Glob(filepath.Join(root, dir, "*_test.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range tests {
			// With object resolution: a name a test file declares itself
			// resolves; one of another file of the package does not.
			f, err := parser.ParseFile(fset, p, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(f.Name.Name, "_test") {
				continue
			}
			ast.Inspect(f, func(n ast.Node) bool {
				as, ok := n.(*ast.AssignStmt)
				if !ok || as.Tok != token.ASSIGN {
					return true
				}
				for _, lhs := range as.Lhs {
					if id, ok := lhs.(*ast.Ident); ok && id.Obj == nil && id.Name != "_" && names[id.Name] {
						rel := filepath.ToSlash(filepath.Join(dir, filepath.Base(p)))
						bad = append(bad, rel+":"+strconv.Itoa(fset.Position(id.Pos()).Line)+": a test replaces the package-level "+id.Name+": make it a field of the package's seams (fortest.go)")
					}
				}
				return true
			})
		}
	}
	return bad
}

// checkFile reports every break of the convention in one shipped file.
func checkFile(sf shippedFile, report func(token.Pos, string)) {
	f := sf.f
	inFortest := strings.HasSuffix(sf.rel, "/fortest.go")
	mustName := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == fortestPath {
			mustName = "fortest"
			if imp.Name != nil {
				mustName = imp.Name.Name
			}
		}
	}
	hook := func(id *ast.Ident, what string) {
		if strings.Contains(strings.ToLower(id.Name), "testhook") {
			report(id.Pos(), "the "+what+" "+id.Name+" is a test hook: put it in the package's seams (fortest.go)")
		}
	}
	names := func(fl *ast.FieldList, what string) {
		if fl == nil {
			return
		}
		for _, fd := range fl.List {
			for _, id := range fd.Names {
				hook(id, what)
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncType:
			names(n.Params, "parameter")
			names(n.Results, "result")
		case *ast.ValueSpec:
			for _, id := range n.Names {
				hook(id, "variable")
				if isSeams(n.Type) && !inFortest {
					report(id.Pos(), "a variable of the seams type outside fortest.go")
				}
			}
		case *ast.TypeSpec:
			if n.Name.Name == "seams" && !inFortest {
				report(n.Pos(), "the seams type is declared outside fortest.go")
			}
			if st, ok := n.Type.(*ast.StructType); ok {
				checkStruct(n.Name.Name, st, hook, report)
			}
		case *ast.FuncDecl:
			if !strings.HasSuffix(n.Name.Name, "ForTest") {
				return true
			}
			if !inFortest {
				report(n.Pos(), n.Name.Name+" is declared outside the package's fortest.go")
			}
			if n.Body == nil || len(n.Body.List) == 0 || !callsMust(n.Body.List[0], mustName) {
				report(n.Pos(), n.Name.Name+" does not begin with fortest.Must()")
			}
		}
		return true
	})
}

// checkStruct reports the fields of the struct type name that break the
// convention.
func checkStruct(name string, st *ast.StructType, hook func(*ast.Ident, string), report func(token.Pos, string)) {
	seamsFields := 0
	for _, fd := range st.Fields.List {
		for _, id := range fd.Names {
			hook(id, "field")
		}
		if isSeams(fd.Type) {
			seamsFields++
			if len(fd.Names) != 1 || fd.Names[0].Name != "seams" {
				report(fd.Pos(), "a field of the seams type on "+name+" is not named seams")
			}
		}
		if name != "seams" && (saysForTests.MatchString(fd.Doc.Text()) || saysForTests.MatchString(fd.Comment.Text())) {
			report(fd.Pos(), "a field for tests on "+name+": put it in the package's seams (fortest.go)")
		}
	}
	if seamsFields > 1 {
		report(st.Pos(), name+" holds more than one field of the seams type")
	}
}

// isSeams reports whether e is the type seams (or a pointer to it).
func isSeams(e ast.Expr) bool {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	id, ok := e.(*ast.Ident)
	return ok && id.Name == "seams"
}

// callsMust reports whether s is the statement fortest.Must(), the
// package imported as name.
func callsMust(s ast.Stmt, name string) bool {
	es, ok := s.(*ast.ExprStmt)
	if !ok || name == "" {
		return false
	}
	call, ok := es.X.(*ast.CallExpr)
	if !ok || len(call.Args) != 0 {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Must" {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && x.Name == name
}
