package store_test

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/store"
)

// owners names, for every table of the schema, the one package that
// writes and reads it (docs/ARCHITECTURE.md, "Who owns which table").
// Every other package asks the owner through its methods. A new table is
// added here, with its owner, in the change that creates it.
var owners = map[string]string{
	"futures":     "internal/dispatch",
	"future_deps": "internal/dispatch",
	"arrivals":    "internal/dispatch",
	"cursors":     "internal/dispatch",

	"commands":       "internal/govern",
	"permits":        "internal/govern",
	"rules":          "internal/govern",
	"folder_rules":   "internal/govern",
	"unknowns":       "internal/govern",
	"flagged_writes": "internal/govern",
	"settings":       "internal/govern",

	"ledger_entries":     "internal/ledger",
	"ledger_hashes":      "internal/ledger",
	"ledger_checkpoints": "internal/ledger",
	"ledger_exports":     "internal/ledger",

	"artifacts": "internal/artifacts",

	"fs_receipts":        "internal/fsops",
	"fs_receipts_pruned": "internal/fsops",
	"fs_touched_dirs":    "internal/fsops",
	"fs_priors":          "internal/fsops",

	"jobs": "internal/jobs",

	"runs":          "internal/runs",
	"events":        "internal/runs",
	"call_history":  "internal/runs",
	"continuations": "internal/runs",

	"recipes":     "internal/recipes",
	"recipe_runs": "internal/recipes",

	"wake_bindings": "internal/wake",

	"store_probe": "internal/store",
}

// sharedSQL lists the few places where a package other than the owner
// names a table in SQL, each with why. "package table" → reason.
var sharedSQL = map[string]string{
	// settings is a key/value table; session keeps its open sessions under
	// its own key prefix, which no other package reads.
	"internal/session settings": "session's own keys (session/…) of the key/value table",
	// The test harness checks the schema itself.
	"internal/hearthtest sqlite_master": "SQLite's own catalogue, read by the test harness",
}

// tableRef matches the table a clause of SQL names. Hearth writes SQL
// keywords in capitals, so a fragment of a statement (a FROM clause
// joined to a column list) is found too, and prose ("read from disk") is
// not.
var tableRef = regexp.MustCompile(`\b(?:FROM|JOIN|INTO|UPDATE)\s+([a-z_][a-z0-9_]*)`)

// TestEveryTableHasOneOwner: every table of a freshly migrated database
// has an owning package (owners), and no Go source outside that package
// (tests aside; internal/store is the schema's owner) has an SQL string
// naming it, unless sharedSQL says why. A change to one table's meaning
// then means reading one package.
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
			t.Errorf("table %s has no owner: add it to owners (internal/store/owners_test.go) with the package that reads and writes it", name)
		}
	}
	for name := range owners {
		if !schema[name] {
			t.Errorf("owners names table %s, which the schema does not have", name)
		}
	}

	uses := sqlUses(t, filepath.Join("..", ".."))
	seen := map[string]bool{}
	var bad []string
	for _, u := range uses {
		owner, known := owners[u.table]
		if !known && !schema[u.table] && u.table != "sqlite_master" {
			continue // a word after FROM in a sentence, not a table
		}
		if u.pkg == owner || u.pkg == "internal/store" || strings.HasPrefix(u.pkg, "internal/store/") {
			continue
		}
		key := u.pkg + " " + u.table
		if _, ok := sharedSQL[key]; ok {
			seen[key] = true
			continue
		}
		bad = append(bad, u.pos+": "+u.pkg+" names table "+u.table+" in SQL; its owner is "+owner+": ask it through a method")
	}
	sort.Strings(bad)
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

// sqlUse is one table named by one SQL string.
type sqlUse struct{ pkg, table, pos string }

// sqlUses returns the tables named by the SQL string literals of the Go
// sources (tests and testdata aside) under root, with their package
// directories relative to root.
func sqlUses(t *testing.T, root string) []sqlUse {
	t.Helper()
	var out []sqlUse
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
		dir, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(dir)
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			pos := fset.Position(lit.Pos())
			rel, _ := filepath.Rel(root, pos.Filename)
			for _, m := range tableRef.FindAllStringSubmatch(s, -1) {
				out = append(out, sqlUse{pkg: pkg, table: strings.ToLower(m[1]), pos: filepath.ToSlash(rel) + ":" + strconv.Itoa(pos.Line)})
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatalf("read the sources: %v", err)
	}
	if len(out) < 50 {
		t.Fatalf("found %d SQL table names in the sources; the scan is broken", len(out))
	}
	return out
}
