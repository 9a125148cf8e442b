package store_test

import (
	"context"
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/store"
)

// updateOwners rewrites the owner table of docs/ARCHITECTURE.md from
// ownerList: go test ./internal/store/ -run TestOwnerTableInDocs -update
var updateOwners = flag.Bool("update", false, "rewrite the owner table of docs/ARCHITECTURE.md")

// ownerList names, for every table of the schema, the one package that
// writes and reads it (docs/ARCHITECTURE.md, "Who owns which table", is
// generated from it). Every other package asks the owner through its
// methods; other packages' tests use the owner's fixture package (its
// `…test` package below it). A new table is added here, with its owner,
// in the change that creates it.
var ownerList = []struct {
	pkg    string
	tables []string
}{
	{"internal/dispatch", []string{"futures", "future_deps", "arrivals", "cursors"}},
	{"internal/govern", []string{"commands", "permits", "rules", "folder_rules", "unknowns", "flagged_writes", "settings"}},
	{"internal/ledger", []string{"ledger_entries", "ledger_hashes", "ledger_checkpoints", "ledger_exports"}},
	{"internal/artifacts", []string{"artifacts"}},
	{"internal/fsops", []string{"fs_receipts", "fs_receipts_pruned", "fs_touched_dirs", "fs_priors"}},
	{"internal/jobs", []string{"jobs"}},
	{"internal/runs", []string{"runs", "events", "call_history", "continuations"}},
	{"internal/recipes", []string{"recipes", "recipe_runs"}},
	{"internal/wake", []string{"wake_bindings"}},
	{"internal/store", []string{"store_probe"}},
}

// tableNotes says, for a table whose name does not, what it holds; the
// doc's owner table shows it beside the name.
var tableNotes = map[string]string{
	"jobs":        "the job view beside each job's future",
	"store_probe": "a scratch row that tells whether a full disk has room again",
}

// owners is ownerList as table → owning package.
var owners = func() map[string]string {
	m := map[string]string{}
	for _, o := range ownerList {
		for _, t := range o.tables {
			m[t] = o.pkg
		}
	}
	return m
}()

// sharedSQL lists the few places where a package other than the owner
// names a table in SQL, each with why. "package table" → reason.
var sharedSQL = map[string]string{
	// settings is a key/value table; session keeps its open sessions under
	// its own key prefix, which no other package reads.
	"internal/session settings": "session's own keys (session/…) of the key/value table",
	// The test harness checks the schema itself.
	"internal/hearthtest sqlite_master": "SQLite's own catalogue, read by the test harness",
}

// sharedTestSQL lists the packages whose tests may name any table: the
// schema's owner tests its migrations on rows of every table, as an
// earlier Hearth left them.
var sharedTestSQL = map[string]string{
	"internal/store": "the migrations' tests build and read rows of every table as an earlier schema had them",
}

// TestEveryTableHasOneOwner: every table of a freshly migrated database
// has an owning package (ownerList), and no Go source outside that
// package and its fixture package — tests included, and the code under
// internal/store — has an SQL string naming it, unless sharedSQL says why
// (or, for internal/store's migration tests, sharedTestSQL). Another
// package's test sets up and checks the owner's rows through the owner's
// fixture package. The scan sees SQL in any case, table names quoted or
// qualified by main., and SQL built by joining strings (+, fmt.Sprintf,
// strings.Join of constants). A change to one table's meaning then means
// reading one package.
func TestEveryTableHasOneOwner(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.R.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		t.Fatal(err)
	}
	schema := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		schema[name] = true
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	if len(schema) < 10 {
		t.Fatalf("the schema has %d tables: %v", len(schema), schema)
	}
	for name := range schema {
		if owners[name] == "" {
			t.Errorf("table %s has no owner: add it to ownerList (internal/store/owners_test.go) with the package that reads and writes it", name)
		}
	}
	for name := range owners {
		if !schema[name] {
			t.Errorf("ownerList names table %s, which the schema does not have", name)
		}
	}

	bad, seen := checkUses(sqlUses(t, filepath.Join("..", "..")), schema)
	for _, b := range bad {
		t.Error(b)
	}
	for key := range sharedSQL {
		if !seen[key] {
			t.Errorf("sharedSQL lists %q, which no source needs any more: remove it", key)
		}
	}
	if len(sharedSQL) > 5 {
		t.Errorf("sharedSQL has %d entries; a table's SQL belongs in its owner", len(sharedSQL))
	}
}

// checkUses sorts the uses into the refused ones (bad, as messages) and
// the sharedSQL keys that were needed.
func checkUses(uses []sqlUse, schema map[string]bool) (bad []string, seen map[string]bool) {
	seen = map[string]bool{}
	once := map[string]bool{} // a string naming a table twice (INSERT … SELECT) is one use
	for _, u := range uses {
		if once[u.pos+" "+u.table] {
			continue
		}
		once[u.pos+" "+u.table] = true
		owner, known := owners[u.table]
		if !known && !schema[u.table] && u.table != "sqlite_master" {
			continue // a word after FROM in a sentence, not a table
		}
		if u.pkg == owner || isFixturePackage(u.pkg, owner) {
			continue
		}
		key := u.pkg + " " + u.table
		if _, ok := sharedSQL[key]; ok {
			seen[key] = true
			continue
		}
		if u.test {
			if _, ok := sharedTestSQL[u.pkg]; ok {
				continue
			}
			bad = append(bad, u.pos+": the test names table "+u.table+" in SQL; its owner is "+owner+": use "+fixturePackage(owner)+" (add a function to it if none fits) instead of raw SQL")
			continue
		}
		bad = append(bad, u.pos+": "+u.pkg+" names table "+u.table+" in SQL; its owner is "+owner+": ask it through a method")
	}
	sort.Strings(bad)
	return bad, seen
}

// fixturePackage names the owner's fixture package
// (internal/dispatch/dispatchtest for internal/dispatch).
func fixturePackage(owner string) string {
	if owner == "" {
		return "the owner's fixture package"
	}
	return owner + "/" + path.Base(owner) + "test"
}

// isFixturePackage reports whether pkg is the owner's fixture package: a
// package named …test below the owner (internal/dispatch/dispatchtest).
func isFixturePackage(pkg, owner string) bool {
	return owner != "" && strings.HasPrefix(pkg, owner+"/") && strings.HasSuffix(pkg, "test")
}

// ownerFiles names, for a table whose owner keeps some of its SQL in
// one file, that file: "table" for every statement on the table, "table
// CLAUSE" for the statements whose CLAUSE (UPDATE, INSERT's INTO, …)
// names it. Inside the owner a table's row type, insert, lookups and list
// live together (govern/permits.go), and each move of a future's state is
// written once (dispatch/futures_state.go), not as an UPDATE repeated in
// every file that needs it. The owner's tests are free to set up rows.
var ownerFiles = map[string]string{
	"permits":        "internal/govern/permits.go",
	"futures UPDATE": "internal/dispatch/futures_state.go",
}

// TestOwnerKeepsTableSQLInOneFile: within a table's owner, the SQL that
// ownerFiles places in one file is in no other of its files (tests aside).
func TestOwnerKeepsTableSQLInOneFile(t *testing.T) {
	bad, seen := checkOwnerFiles(sqlUses(t, filepath.Join("..", "..")))
	for _, b := range bad {
		t.Error(b)
	}
	for key, file := range ownerFiles {
		if !seen[key] {
			t.Errorf("ownerFiles places %q in %s, which has no such SQL: the scan or the list is out of date", key, file)
		}
	}
}

// checkOwnerFiles returns the uses of the owner's production files that
// ownerFiles places in another file (as messages), and the ownerFiles
// keys whose file was seen holding its SQL.
func checkOwnerFiles(uses []sqlUse) (bad []string, seen map[string]bool) {
	seen = map[string]bool{}
	for _, u := range uses {
		if u.test || u.pkg != owners[u.table] {
			continue
		}
		for _, key := range []string{u.table, u.table + " " + u.clause} {
			file, ok := ownerFiles[key]
			if !ok {
				continue
			}
			if u.file == file {
				seen[key] = true
				continue
			}
			what := "SQL on " + u.table
			if key != u.table {
				what = u.clause + " of " + u.table
			}
			bad = append(bad, u.pos+": "+what+" belongs in "+file+": call a function there (add one if none fits) instead")
		}
	}
	sort.Strings(bad)
	return bad, seen
}

// TestOwnerFilesSeeAStrayStatement: an UPDATE of futures, or any SQL on
// permits, in another file of its owner is refused, in whatever form the
// scan reads; a read of futures elsewhere is not.
func TestOwnerFilesSeeAStrayStatement(t *testing.T) {
	src := map[string]string{
		"internal/dispatch/stray.go": "package dispatch\n\nvar _ = []string{\n\t\"update futures set state = 'queued' where id = ?\",\n\t\"SELECT id FROM futures\",\n}\n",
		"internal/govern/stray.go":   "package govern\n\nvar _ = \"SELECT id FROM \" + \"main.permits\"\n",
	}
	dir := sourceTree(t, src)
	bad, _ := checkOwnerFiles(scanUses(t, dir))
	want := []string{
		"internal/dispatch/stray.go:4: UPDATE of futures belongs in internal/dispatch/futures_state.go: call a function there (add one if none fits) instead",
		"internal/govern/stray.go:3: SQL on permits belongs in internal/govern/permits.go: call a function there (add one if none fits) instead",
	}
	if strings.Join(bad, "\n") != strings.Join(want, "\n") {
		t.Errorf("refused:\n%s\nwant:\n%s", strings.Join(bad, "\n"), strings.Join(want, "\n"))
	}
}

// TestTestsGoThroughFixtures: a test's raw SQL on another package's
// table is refused like shipped code's, with the fixture package to use
// instead; the owner's own tests, its fixture package and the migration
// tests of internal/store are not.
func TestTestsGoThroughFixtures(t *testing.T) {
	src := map[string]string{
		"internal/web/panel_test.go":                   "package web\n\nvar _ = \"UPDATE futures SET state = 'queued'\"\n",
		"internal/dispatch/futures_test.go":            "package dispatch\n\nvar _ = \"UPDATE futures SET state = 'queued'\"\n",
		"internal/dispatch/dispatchtest/rows.go":       "package dispatchtest\n\nvar _ = \"INSERT INTO futures(id) VALUES (?)\"\n",
		"internal/dispatch/dispatchtest/rows_other.go": "package dispatchtest\n\nvar _ = \"INSERT INTO permits(id) VALUES (?)\"\n",
		"internal/store/migrate_test.go":               "package store\n\nvar _ = \"INSERT INTO permits(id) VALUES (?)\"\n",
	}
	dir := sourceTree(t, src)
	schema := map[string]bool{}
	for name := range owners {
		schema[name] = true
	}
	bad, _ := checkUses(scanUses(t, dir), schema)
	want := []string{
		"internal/dispatch/dispatchtest/rows_other.go:3: internal/dispatch/dispatchtest names table permits in SQL; its owner is internal/govern: ask it through a method",
		"internal/web/panel_test.go:3: the test names table futures in SQL; its owner is internal/dispatch: use internal/dispatch/dispatchtest (add a function to it if none fits) instead of raw SQL",
	}
	if strings.Join(bad, "\n") != strings.Join(want, "\n") {
		t.Errorf("refused:\n%s\nwant:\n%s", strings.Join(bad, "\n"), strings.Join(want, "\n"))
	}
}

// TestOwnerTableInDocs: docs/ARCHITECTURE.md's owner table is ownerList,
// so the doc cannot drift from what the test enforces.
func TestOwnerTableInDocs(t *testing.T) {
	var b strings.Builder
	b.WriteString("| package | tables |\n|---|---|\n")
	for _, o := range ownerList {
		var cells []string
		for _, tb := range o.tables {
			c := "`" + tb + "`"
			if n := tableNotes[tb]; n != "" {
				c += " (" + n + ")"
			}
			cells = append(cells, c)
		}
		b.WriteString("| `" + o.pkg + "` | " + strings.Join(cells, ", ") + " |\n")
	}
	want := b.String()
	file := filepath.Join("..", "..", "docs", "ARCHITECTURE.md")
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s := string(raw)
	const open, shut = "<!-- owner-table: generated by go test ./internal/store/ -run TestOwnerTableInDocs -update -->\n", "<!-- /owner-table -->"
	start := strings.Index(s, open)
	end := strings.Index(s, shut)
	if start < 0 || end < start {
		t.Fatalf("docs/ARCHITECTURE.md has no owner-table block (%q … %q)", open, shut)
	}
	from := start + len(open)
	if s[from:end] == want {
		return
	}
	if *updateOwners {
		if err := os.WriteFile(file, []byte(s[:from]+want+s[end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("docs/ARCHITECTURE.md's owner table differs from ownerList; run go test ./internal/store/ -run TestOwnerTableInDocs -update, or put this between the markers:\n%s", want)
}

// TestOwnerScanSeesEveryForm: the scan finds a table however the SQL is
// written — in lower case, quoted, qualified by main., built by joining
// strings or constants, by fmt.Sprintf or strings.Join, after a comma in
// a FROM list — and does not take prose for SQL.
func TestOwnerScanSeesEveryForm(t *testing.T) {
	src := `package p

import (
	"fmt"
	"strings"
)

const tbl = "permits"

var _ = []string{
	"select id from permits where id = ?",
	"SELECT id FROM \"permits\"",
	"SELECT id FROM main.permits",
	"SELECT id FROM [permits]",
	"SELECT id FROM ` + "`permits`" + `",
	"SELECT id FROM " + "permits",
	"SELECT id FROM " + tbl,
	fmt.Sprintf("DELETE FROM %s WHERE id = ?", "permits"),
	strings.Join([]string{"UPDATE", "permits", "SET state = ?"}, " "),
	"SELECT a.id FROM futures a, permits p WHERE a.id = p.id",
	"insert into main.\"permits\"(id) values (?)",
}

var prose = "could not read from permits"
`
	dir := sourceTree(t, map[string]string{"internal/web/p.go": src})
	lines := map[int]bool{}
	for _, u := range scanUses(t, dir) {
		if u.table == "permits" {
			lines[lineOf(u.pos)] = true
		}
	}
	for line := 11; line <= 21; line++ {
		if !lines[line] {
			t.Errorf("the scan missed the permits table on line %d of:\n%s", line, src)
		}
	}
	if lines[24] {
		t.Error("the scan took prose (\"could not read from permits\") for SQL")
	}
}

// sourceTree writes src (slash-separated path → Go source) into a new
// temporary folder, as a repository's files, and returns the folder.
func sourceTree(t *testing.T, src map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range src {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func lineOf(pos string) int {
	n, _ := strconv.Atoi(pos[strings.LastIndex(pos, ":")+1:])
	return n
}

// sqlUse is one table named by one SQL string, after clause (FROM,
// JOIN, INTO, UPDATE or TABLE, in capitals).
type sqlUse struct {
	pkg, table, clause, pos, file string
	test                          bool
}

// sqlUses returns the tables named by the SQL strings of the Go sources
// under root (testdata aside), with their package directories relative
// to root.
func sqlUses(t *testing.T, root string) []sqlUse {
	t.Helper()
	out := scanUses(t, root)
	if len(out) < 50 {
		t.Fatalf("found %d SQL table names in the sources; the scan is broken", len(out))
	}
	return out
}

func scanUses(t *testing.T, root string) []sqlUse {
	t.Helper()
	byDir := map[string][]string{}
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
		if strings.HasSuffix(p, ".go") {
			byDir[filepath.Dir(p)] = append(byDir[filepath.Dir(p)], p)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("read the sources: %v", err)
	}
	var out []sqlUse
	for dir, files := range byDir {
		rel, err := filepath.Rel(root, dir)
		if err != nil {
			t.Fatal(err)
		}
		uses, err := scanPackage(root, filepath.ToSlash(rel), files)
		if err != nil {
			t.Fatalf("read the sources: %v", err)
		}
		out = append(out, uses...)
	}
	return out
}

// scanPackage scans the files of one directory; its string constants
// (from any of them) fold into the SQL that joins them.
func scanPackage(root, pkg string, files []string) ([]sqlUse, error) {
	fset := token.NewFileSet()
	parsed := make([]*ast.File, 0, len(files))
	for _, p := range files {
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		parsed = append(parsed, f)
	}
	s := &sqlScan{consts: map[string]string{}}
	// Constants first, twice, so a constant built from another folds.
	for range 2 {
		for _, f := range parsed {
			for _, decl := range f.Decls {
				gd, ok := decl.(*ast.GenDecl)
				if !ok || (gd.Tok != token.CONST && gd.Tok != token.VAR) {
					continue
				}
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, name := range vs.Names {
						if i < len(vs.Values) {
							if v, ok := s.constant(vs.Values[i]); ok {
								s.consts[name.Name] = v
							}
						}
					}
				}
			}
		}
	}
	var out []sqlUse
	for i, f := range parsed {
		file, _ := filepath.Rel(root, files[i])
		file = filepath.ToSlash(file)
		test := strings.HasSuffix(file, "_test.go")
		seen := map[string]bool{}
		s.found = func(at token.Pos, text string) {
			pos := file + ":" + strconv.Itoa(fset.Position(at).Line)
			for _, ref := range tablesIn(text) {
				if seen[pos+" "+ref.clause+" "+ref.table] {
					continue
				}
				seen[pos+" "+ref.clause+" "+ref.table] = true
				out = append(out, sqlUse{pkg: pkg, table: ref.table, clause: ref.clause, pos: pos, file: file, test: test})
			}
		}
		ast.Inspect(f, s.visit)
	}
	return out, nil
}

// sqlScan folds the string expressions of one package.
type sqlScan struct {
	consts map[string]string
	found  func(at token.Pos, text string)
}

// visit scans the text of every string expression, joined as far as the
// constants allow; the parts it cannot fold are scanned on their own.
func (s *sqlScan) visit(n ast.Node) bool {
	e, ok := n.(ast.Expr)
	if !ok || !s.foldable(e) {
		return true
	}
	s.found(e.Pos(), s.fold(e))
	return false
}

// foldable reports whether e is a string the scan can read: a literal, a
// + of strings, fmt.Sprintf or strings.Join.
func (s *sqlScan) foldable(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.BasicLit:
		return e.Kind == token.STRING
	case *ast.BinaryExpr:
		return e.Op == token.ADD && (s.foldable(e.X) || s.foldable(e.Y))
	case *ast.CallExpr:
		return callName(e) == "fmt.Sprintf" || callName(e) == "strings.Join"
	}
	return false
}

func callName(c *ast.CallExpr) string {
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	x, ok := sel.X.(*ast.Ident)
	if !ok {
		return ""
	}
	return x.Name + "." + sel.Sel.Name
}

// fold returns e's text; a part it cannot know stands as "?" (and is
// scanned on its own).
func (s *sqlScan) fold(e ast.Expr) string {
	if v, ok := s.constant(e); ok {
		return v
	}
	switch e := e.(type) {
	case *ast.ParenExpr:
		return s.fold(e.X)
	case *ast.BinaryExpr:
		if e.Op == token.ADD {
			return s.fold(e.X) + s.fold(e.Y)
		}
	case *ast.CallExpr:
		switch callName(e) {
		case "fmt.Sprintf":
			if len(e.Args) > 0 {
				args := make([]string, 0, len(e.Args)-1)
				for _, a := range e.Args[1:] {
					args = append(args, s.fold(a))
				}
				return sprintf(s.fold(e.Args[0]), args)
			}
		case "strings.Join":
			if len(e.Args) == 2 {
				if cl, ok := e.Args[0].(*ast.CompositeLit); ok {
					parts := make([]string, 0, len(cl.Elts))
					for _, el := range cl.Elts {
						parts = append(parts, s.fold(el))
					}
					return strings.Join(parts, s.fold(e.Args[1]))
				}
			}
		}
	}
	ast.Inspect(e, func(n ast.Node) bool { return n == e || s.visit(n) })
	return "?"
}

// constant returns e's value when it is a string literal, a known
// constant or a + of them.
func (s *sqlScan) constant(e ast.Expr) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", false
		}
		v, err := strconv.Unquote(e.Value)
		return v, err == nil
	case *ast.Ident:
		v, ok := s.consts[e.Name]
		return v, ok
	case *ast.ParenExpr:
		return s.constant(e.X)
	case *ast.BinaryExpr:
		if e.Op != token.ADD {
			return "", false
		}
		x, ok1 := s.constant(e.X)
		y, ok2 := s.constant(e.Y)
		return x + y, ok1 && ok2
	}
	return "", false
}

var verb = regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z%]`)

// sprintf puts args (already text) in format's verbs, in order.
func sprintf(format string, args []string) string {
	i := 0
	return verb.ReplaceAllStringFunc(format, func(v string) string {
		if v == "%%" {
			return "%"
		}
		if i >= len(args) {
			return "?"
		}
		i++
		return args[i-1]
	})
}

const (
	ident  = "[A-Za-z_][A-Za-z0-9_]*"
	quote  = "[\"`\\['\\]]?"
	schema = "(?:" + quote + "(?i:main|temp)" + quote + `\s*\.\s*)?`
)

var (
	// tableRefRE matches the table a clause names, in any case, quoted or
	// not, qualified by main. or not.
	tableRefRE = regexp.MustCompile(`(?i)\b(FROM|JOIN|INTO|UPDATE|TABLE)\s+` + schema + quote + "(" + ident + ")" + quote)
	// moreTables matches one more table of a FROM list after a comma.
	moreTables = regexp.MustCompile(`^(?:\s+(?i:AS\s+)?` + ident + `)?\s*,\s*` + schema + quote + "(" + ident + ")" + quote)
	// looksLikeSQL tells SQL written in lower case from a sentence.
	looksLikeSQL = regexp.MustCompile(`(?is)^\s*(?:select|insert|update|delete|replace|with|create|drop|alter|pragma)\b|\bwhere\b|\bvalues\s*\(|\bset\s+` + ident + `\s*=`)
)

// tableRef is a table as a clause of SQL names it.
type tableRef struct{ table, clause string }

// tablesIn returns the tables text names as SQL. A keyword in capitals
// is SQL (Hearth writes SQL so, and a fragment joined to others is found
// too); one in lower case only when the text reads as a statement.
func tablesIn(text string) []tableRef {
	var out []tableRef
	sqlish := looksLikeSQL.MatchString(text)
	for _, m := range tableRefRE.FindAllStringSubmatchIndex(text, -1) {
		kw := text[m[2]:m[3]]
		if kw != strings.ToUpper(kw) && !sqlish {
			continue
		}
		up := strings.ToUpper(kw)
		out = append(out, tableRef{strings.ToLower(text[m[4]:m[5]]), up})
		if up == "FROM" || up == "JOIN" {
			rest := text[m[1]:]
			for {
				mm := moreTables.FindStringSubmatchIndex(rest)
				if mm == nil {
					break
				}
				out = append(out, tableRef{strings.ToLower(rest[mm[2]:mm[3]]), up})
				rest = rest[mm[1]:]
			}
		}
	}
	return out
}
