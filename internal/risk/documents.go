package risk

import (
	"archive/zip"
	"bytes"
	"errors"
	"io"
	"path"
	"slices"
	"strings"
)

// Documents: the kinds of file a write may change without asking in ask
// mode (Writes.Classify), by extension, an allowlist. A file whose
// extension is not here (code, settings, an unknown kind, no extension)
// is not a document: writing it asks, unless the operator made its
// folder a workspace. Where it is unclear whether a kind runs something
// when it is opened, it is left out (it then asks once per workspace,
// never silently): the legacy Office formats (.doc, .xls, .ppt may hold
// macros and telling needs their whole file), web pages and SVG (code a
// browser runs), settings formats (JSON, YAML, INI: a program reads them
// and some run commands they name). Macro-enabled Office types are never
// documents (MacroOfficeExts). The content must agree with the name: a
// document's content is not a program (PE, ELF), not a #! script with
// an execute bit, and an Office or OpenDocument file is a package (a
// zip) with no macro part in its central directory (PackageMacros).

// DocumentGroup is one row of the documents table.
type DocumentGroup struct {
	// What names the kind in plain words.
	What string
	// Exts are its extensions, lower case, with the dot.
	Exts []string
	// Package is set for Office Open XML and OpenDocument files, whose
	// content must be a package without macros.
	Package bool
}

// DocumentGroups is the documents table.
var DocumentGroups = []DocumentGroup{
	{What: "text and Markdown", Exts: []string{".txt", ".text", ".md", ".markdown", ".log"}},
	{What: "PDF", Exts: []string{".pdf"}},
	{What: "Word, Excel and PowerPoint files without macros", Exts: []string{".docx", ".dotx", ".xlsx", ".xltx", ".pptx", ".ppsx", ".potx"}, Package: true},
	{What: "OpenDocument files", Exts: []string{".odt", ".ott", ".ods", ".ots", ".odp", ".otp", ".odg"}, Package: true},
	{What: "rich text", Exts: []string{".rtf"}},
	{What: "tables", Exts: []string{".csv", ".tsv"}},
	{What: "images", Exts: []string{".jpg", ".jpeg", ".png", ".gif", ".bmp", ".tif", ".tiff", ".webp", ".heic", ".heif", ".avif", ".ico",
		".dng", ".cr2", ".cr3", ".nef", ".arw", ".orf", ".rw2", ".raf", ".psd", ".xcf"}},
	{What: "audio", Exts: []string{".mp3", ".wav", ".flac", ".aac", ".m4a", ".ogg", ".oga", ".opus", ".aif", ".aiff", ".mid", ".midi"}},
	{What: "video", Exts: []string{".mp4", ".m4v", ".mov", ".avi", ".mkv", ".webm", ".mpg", ".mpeg", ".3gp", ".ogv"}},
	{What: "archives", Exts: []string{".zip", ".7z", ".rar", ".tar", ".gz", ".tgz", ".bz2", ".tbz2", ".xz", ".txz", ".zst"}},
	{What: "e-books", Exts: []string{".epub"}},
}

// MacroOfficeExts are the Office types that may hold macros, which run
// when the file is opened: never documents, whatever their content.
var MacroOfficeExts = []string{".xlsm", ".xltm", ".xlsb", ".xla", ".xlam", ".docm", ".dotm", ".pptm", ".potm", ".ppsm", ".ppam", ".sldm",
	".doc", ".dot", ".xls", ".xlt", ".xlm", ".ppt", ".pot", ".pps", ".ppa"}

// documentGroup is the row of the documents table the file name p (any
// case, either separator) is in, and false when it is not a document by
// its extension.
func documentGroup(p string) (DocumentGroup, bool) {
	ext := extOfName(p)
	if ext == "" || slices.Contains(MacroOfficeExts, ext) {
		return DocumentGroup{}, false
	}
	for _, g := range DocumentGroups {
		if slices.Contains(g.Exts, ext) {
			return g, true
		}
	}
	return DocumentGroup{}, false
}

// extOfName is the extension of the last name of p (either separator),
// lower case, with the dot; "" when it has none.
func extOfName(p string) string {
	return strings.ToLower(extOf(p[strings.LastIndexAny(p, `/\`)+1:]))
}

// IsDocumentName reports whether the file name p is a document by its
// extension (the documents table).
func IsDocumentName(p string) bool {
	_, ok := documentGroup(p)
	return ok
}

// NeedsPackageCheck reports whether a write of the file p needs its new
// content read as a package (PackageMacros): an Office or OpenDocument
// file by its extension.
func NeedsPackageCheck(p string) bool {
	g, ok := documentGroup(p)
	return ok && g.Package
}

// Bounds of the package check: a central directory larger, or with more
// entries, is not read and counts as holding macros (it asks).
const (
	maxPackageDirectory = 4 << 20
	maxPackageEntries   = 20000
)

// PackageMacros reports whether the content r (size bytes) of an Office
// or OpenDocument file is not a package free of macros: empty content is
// free of them; content that is not a zip (Office opens a renamed legacy
// file by its content), a central directory past the bounds, or a part
// that holds macros or controls (vbaProject.bin, macro sheets, ActiveX
// controls; an OpenDocument file's Basic or Scripts folder) says true.
// It reads the central directory only, never the parts.
func PackageMacros(r io.ReaderAt, size int64) bool {
	if size == 0 {
		return false
	}
	zr, err := zip.NewReader(r, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return true
	}
	if len(zr.File) > maxPackageEntries {
		return true
	}
	var dir int64
	for _, f := range zr.File {
		dir += 46 + int64(len(f.Name)) + int64(len(f.Extra)) + int64(len(f.Comment))
		if dir > maxPackageDirectory || macroPart(f.Name) {
			return true
		}
	}
	return false
}

// PackageMacrosBytes is PackageMacros of content in memory.
func PackageMacrosBytes(b []byte) bool {
	return PackageMacros(bytes.NewReader(b), int64(len(b)))
}

// macroPart reports whether the package part name holds macros or
// controls.
func macroPart(name string) bool {
	n := strings.ToLower(strings.ReplaceAll(name, `\`, "/"))
	base := path.Base(n)
	switch {
	case strings.HasPrefix(base, "vbaproject"), strings.HasPrefix(base, "vbadata"):
		return true
	case strings.Contains("/"+n, "/macrosheets/"), strings.Contains("/"+n, "/activex/"):
		return true
	case strings.HasPrefix(n, "basic/"), strings.HasPrefix(n, "scripts/"):
		return true
	}
	return false
}

// documentContent says whether the content a write leaves agrees with a
// document's name (the ordinary verdict of Classify): not a program (PE;
// off Windows ELF, or a #! script with an execute bit), and where the
// kind is a package, a zip (or nothing yet) without macros
// (f.NewMacros: those run when the file is opened).
func documentContent(f FileFacts, g DocumentGroup, windows bool) (Why, bool) {
	head := f.NewHead
	if head == nil {
		// No content is left (an undo that removes the file).
		return "", true
	}
	switch programKind(head, !windows) {
	case "pe", "elf":
		return WhyNotDocument, false
	case "script":
		if f.Executable {
			return WhyNotDocument, false
		}
	}
	if g.Package {
		if f.NewMacros {
			return WhyOpens, false
		}
		if len(head) > 0 && !bytes.HasPrefix(head, []byte("PK\x03\x04")) {
			return WhyNotDocument, false
		}
	}
	return "", true
}

// DocumentsMarkdown is the documents table as docs/SECURITY.md shows it
// (a test holds the two together).
func DocumentsMarkdown() string {
	var b strings.Builder
	b.WriteString("| kind | extensions | the content must be |\n|---|---|---|\n")
	for _, g := range DocumentGroups {
		must := "not a program (PE, ELF, or `#!` with an execute bit)"
		if g.Package {
			must += "; a package (zip) with no macro part in its central directory (`vbaProject.bin`, macro sheets, ActiveX controls, an OpenDocument `Basic/` or `Scripts/` folder)"
		}
		b.WriteString("| " + g.What + " | " + codeList(g.Exts) + " | " + must + " |\n")
	}
	b.WriteString("\nNever documents, whatever their content (Office types that may hold macros): " + codeList(MacroOfficeExts) + ".\n")
	return b.String()
}
