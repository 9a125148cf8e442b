package document

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
)

// parts is a zipped document (OOXML, OpenDocument) read under the bounds:
// each part's uncompressed size and the total, counted as the bytes really
// come out (a zip's sizes in its directory can lie).
type parts struct {
	zr    *zip.Reader
	byN   map[string]*zip.File
	total int64
}

func openParts(data []byte) (*parts, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, err
	}
	p := &parts{zr: zr, byN: map[string]*zip.File{}}
	for _, f := range zr.File {
		p.byN[strings.TrimPrefix(f.Name, "/")] = f
	}
	return p, nil
}

var errPartTooLarge = errors.New("part too large")

func tooLarge(what string) error {
	return &Error{Code: CodeTooLarge, Message: fmt.Sprintf("%s unpacks to more than Hearth reads (%d MB a part, %d MB in all): it may be damaged or made to exhaust memory", what, MaxPartSize>>20, MaxTotalSize>>20), Err: errPartTooLarge}
}

// has reports whether the document has a part.
func (p *parts) has(name string) bool { _, ok := p.byN[name]; return ok }

// names are the parts under dir, sorted.
func (p *parts) names(dir string) []string {
	var out []string
	for n := range p.byN {
		if strings.HasPrefix(n, dir) && !strings.HasSuffix(n, "/") {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// open opens one part, reading at most MaxPartSize of it and counting
// what it reads against MaxTotalSize.
func (p *parts) open(name string) (io.ReadCloser, error) {
	f := p.byN[name]
	if f == nil {
		return nil, fmt.Errorf("part %s is missing", name)
	}
	if f.UncompressedSize64 > MaxPartSize || int64(f.UncompressedSize64)+p.total > MaxTotalSize {
		return nil, tooLarge("the document")
	}
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	return &boundedPart{rc: rc, p: p, left: MaxPartSize}, nil
}

// read reads one whole part.
func (p *parts) read(name string) ([]byte, error) {
	rc, err := p.open(name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

type boundedPart struct {
	rc   io.ReadCloser
	p    *parts
	left int64
}

func (b *boundedPart) Read(buf []byte) (int, error) {
	n, err := b.rc.Read(buf)
	b.left -= int64(n)
	b.p.total += int64(n)
	if b.left < 0 || b.p.total > MaxTotalSize {
		return n, tooLarge("the document")
	}
	return n, err
}

func (b *boundedPart) Close() error { return b.rc.Close() }

// rels reads a part's relationships (its _rels/<name>.rels): id to the
// target's part name.
func (p *parts) rels(ctx context.Context, part string) (map[string]string, error) {
	dir, base := path.Split(part)
	name := dir + "_rels/" + base + ".rels"
	out := map[string]string{}
	if !p.has(name) {
		return out, nil
	}
	err := p.walk(ctx, name, func(d *walker, t xml.StartElement) error {
		if t.Name.Local == "Relationship" && attr(t, "TargetMode") != "External" {
			target := attr(t, "Target")
			if strings.HasPrefix(target, "/") {
				target = strings.TrimPrefix(target, "/")
			} else {
				target = path.Join(dir, target)
			}
			out[attr(t, "Id")] = target
		}
		return nil
	}, nil, nil)
	return out, err
}

// walker streams one XML part's tokens under the depth and time bounds.
type walker struct {
	dec   *xml.Decoder
	depth int
	// stack holds the local names of the open elements.
	stack []string
}

// in reports whether an element of that local name is open.
func (w *walker) in(local string) bool {
	for _, s := range w.stack {
		if s == local {
			return true
		}
	}
	return false
}

// walk reads the part name token by token: start is called on each start
// element, end on each end element, text on character data.
func (p *parts) walk(ctx context.Context, name string, start func(*walker, xml.StartElement) error, end func(*walker, xml.EndElement) error, text func(*walker, []byte) error) error {
	rc, err := p.open(name)
	if err != nil {
		return err
	}
	defer rc.Close()
	return walkXML(ctx, rc, start, end, text)
}

func walkXML(ctx context.Context, r io.Reader, start func(*walker, xml.StartElement) error, end func(*walker, xml.EndElement) error, text func(*walker, []byte) error) error {
	w := &walker{dec: xml.NewDecoder(r)}
	w.dec.Strict = false
	for n := 0; ; n++ {
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		tok, err := w.dec.RawToken()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			w.depth++
			if w.depth > MaxDepth {
				return &Error{Code: CodeDamaged, Message: fmt.Sprintf("the document nests its content more than %d levels deep, which Hearth does not read: it may be damaged or made to exhaust memory", MaxDepth)}
			}
			w.stack = append(w.stack, t.Name.Local)
			if start != nil {
				if err := start(w, t); err != nil {
					return err
				}
			}
		case xml.EndElement:
			if end != nil {
				if err := end(w, t); err != nil {
					return err
				}
			}
			if w.depth > 0 {
				w.depth--
				w.stack = w.stack[:len(w.stack)-1]
			}
		case xml.CharData:
			if text != nil {
				if err := text(w, t); err != nil {
					return err
				}
			}
		}
	}
}

// errStop ends a walk early without an error.
var errStop = errors.New("stop")

// attr is the value of the attribute of that local name.
func attr(t xml.StartElement, local string) string {
	for _, a := range t.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

// attrNS is the value of the attribute of that prefix and local name
// (RawToken leaves prefixes unresolved).
func attrNS(t xml.StartElement, prefix, local string) string {
	for _, a := range t.Attr {
		if a.Name.Local == local && a.Name.Space == prefix {
			return a.Value
		}
	}
	return ""
}
