// Package notices writes the licence notices of everything linked into a
// built Go program: the Go standard library and runtime, and every module
// the program's build information lists. The module list comes from the
// executable itself (debug/buildinfo), so the notices describe exactly
// what ships; each module's licence files come from its directory in the
// module cache, as `go list -m -json` reports it. A module without a
// licence file is an error naming it: shipping it would be shipping code
// whose terms the package does not state.
package notices

import (
	"bytes"
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"sort"
	"strings"
)

// Module is one module linked into the program.
type Module struct {
	Path    string
	Version string
	// Dir is its source directory (the module cache, or a replacement).
	Dir string
}

// ID is path@version, as the notices name a module.
func (m Module) ID() string { return m.Path + "@" + m.Version }

// Linked reads the executable at exe and returns the Go version it was
// built with and the modules linked into it (replacements resolved),
// sorted by path. The main module is not among them.
func Linked(exe string) (goVersion string, mods []Module, err error) {
	bi, err := buildinfo.ReadFile(exe)
	if err != nil {
		return "", nil, fmt.Errorf("read the build information of %s: %w", exe, err)
	}
	for _, d := range bi.Deps {
		m := d
		if d.Replace != nil {
			m = d.Replace
		}
		mods = append(mods, Module{Path: m.Path, Version: m.Version, Dir: dirOf(m)})
	}
	sort.Slice(mods, func(i, j int) bool { return mods[i].Path < mods[j].Path })
	return bi.GoVersion, mods, nil
}

// dirOf is a local replacement's directory ("" for a module version,
// which ResolveDirs finds in the module cache).
func dirOf(m *debug.Module) string {
	if m.Version == "" && (filepath.IsAbs(m.Path) || strings.HasPrefix(m.Path, ".")) {
		return m.Path
	}
	return ""
}

// ResolveDirs fills in each module's directory from `go list -m -json`
// run in moduleRoot (the main module's directory), which answers from the
// module cache without building anything. A module it cannot place is an
// error naming it.
func ResolveDirs(moduleRoot string, mods []Module) error {
	var args []string
	for _, m := range mods {
		if m.Dir == "" {
			args = append(args, m.ID())
		}
	}
	if len(args) == 0 {
		return nil
	}
	cmd := exec.Command("go", append([]string{"list", "-m", "-json"}, args...)...)
	cmd.Dir = moduleRoot
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("go list -m -json: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	dirs := map[string]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var m struct{ Path, Version, Dir string }
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return fmt.Errorf("go list -m -json: %w", err)
		}
		dirs[m.Path+"@"+m.Version] = m.Dir
	}
	for i, m := range mods {
		if m.Dir != "" {
			continue
		}
		d := dirs[m.ID()]
		if d == "" {
			return fmt.Errorf("module %s is not in the module cache (run go mod download)", m.ID())
		}
		mods[i].Dir = d
	}
	return nil
}

// licenceName matches the files, at the top of a module, that state its
// terms or the notices they require.
var licenceName = regexp.MustCompile(`(?i)^(licen[cs]e|copying|notice|patents|authors)([-._][a-z0-9._-]*)?$`)

// LicenceFiles returns the licence files at the top of dir, sorted; the
// list is empty when there is none.
func LicenceFiles(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.Type().IsRegular() && licenceName.MatchString(e.Name()) && !strings.HasSuffix(e.Name(), ".go") {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(out)
	return out, nil
}

// Header opens every notices file; Section headers follow it.
const Header = "Licence notices of the software in this package\n"

// sectionMark starts each section's title line.
const sectionMark = "==== "

// SectionTitle is the title line of a module's section.
func SectionTitle(id string) string { return sectionMark + id + " ====" }

// Write writes the notices of a program built with goVersion from mods:
// Go itself (its LICENSE and PATENTS from goroot), then each module with
// every licence file it has. A module with none is an error naming it.
func Write(w io.Writer, program, goVersion, goroot string, mods []Module) error {
	var b bytes.Buffer
	b.WriteString(Header)
	fmt.Fprintf(&b, "\n%s contains the following software. Each section names one part (as\nmodule@version) and gives its licence text in full.\n", program)
	goFiles := []string{filepath.Join(goroot, "LICENSE"), filepath.Join(goroot, "PATENTS")}
	if err := section(&b, "The Go programming language (standard library and runtime) "+goVersion, goFiles); err != nil {
		return err
	}
	for _, m := range mods {
		files, err := LicenceFiles(m.Dir)
		if err != nil {
			return fmt.Errorf("licence of module %s: %w", m.ID(), err)
		}
		if len(files) == 0 {
			return fmt.Errorf("module %s has no licence file in %s", m.ID(), m.Dir)
		}
		if err := section(&b, m.ID(), files); err != nil {
			return fmt.Errorf("licence of module %s: %w", m.ID(), err)
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

func section(b *bytes.Buffer, title string, files []string) error {
	fmt.Fprintf(b, "\n\n%s\n", SectionTitle(title))
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		if len(bytes.TrimSpace(text)) == 0 {
			return fmt.Errorf("%s is empty", f)
		}
		fmt.Fprintf(b, "\n---- %s ----\n\n", filepath.Base(f))
		b.Write(bytes.TrimRight(text, "\n"))
		b.WriteString("\n")
	}
	return nil
}

// Sections returns the titles of the sections in a notices text, in order.
func Sections(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, sectionMark) && strings.HasSuffix(line, " ====") {
			out = append(out, strings.TrimSuffix(strings.TrimPrefix(line, sectionMark), " ===="))
		}
	}
	return out
}
