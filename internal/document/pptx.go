package document

import (
	"context"
	"encoding/xml"
	"fmt"
	"path"
	"strings"
)

// readPptx gives each slide, in the presentation's order, as a "## Slide
// N: title" section with its text (a paragraph a line) and its notes.
func readPptx(ctx context.Context, data []byte, opt Options) (*Result, error) {
	p, err := openParts(data)
	if err != nil {
		return nil, err
	}
	const pres = "ppt/presentation.xml"
	if !p.has(pres) {
		return nil, &Error{Code: CodeDamaged, Message: "the file has no PowerPoint presentation inside (ppt/presentation.xml is missing)"}
	}
	rels, err := p.rels(ctx, pres)
	if err != nil {
		return nil, err
	}
	var slides []string
	err = p.walk(ctx, pres, func(w *walker, t xml.StartElement) error {
		if t.Name.Local == "sldId" {
			if target, ok := rels[attrNS(t, "r", "id")]; ok && p.has(target) {
				slides = append(slides, target)
			}
		}
		return nil
	}, nil, nil)
	if err != nil {
		return nil, err
	}
	buf := textBuf{limit: opt.need()}
	res := &Result{Pages: len(slides), Complete: true}
	for i, s := range slides {
		if buf.full() {
			res.Complete = false
			res.PagesRead = fmt.Sprintf("1-%d", i)
			break
		}
		title, body, err := slideText(ctx, p, s, false)
		if err != nil {
			return nil, err
		}
		if buf.Len() > 0 {
			buf.WriteString("\n")
		}
		fmt.Fprintf(&buf, "## Slide %d", i+1)
		if title != "" {
			buf.WriteString(": " + strings.ReplaceAll(title, "\n", " "))
		}
		buf.WriteString("\n")
		if body != "" {
			buf.WriteString("\n" + body + "\n")
		}
		srels, err := p.rels(ctx, s)
		if err != nil {
			return nil, err
		}
		for _, target := range srels {
			if strings.Contains(path.Base(target), "notesSlide") && p.has(target) {
				_, notes, err := slideText(ctx, p, target, true)
				if err != nil {
					return nil, err
				}
				if notes != "" {
					buf.WriteString("\nNotes: " + notes + "\n")
				}
			}
		}
	}
	res.Text = buf.String()
	return res, nil
}

// slideText is a slide's title (its title placeholder) and the rest of its
// text, one paragraph a line. For a notes page, only the notes body counts
// (not the slide image or number).
func slideText(ctx context.Context, p *parts, part string, notes bool) (title, body string, err error) {
	var (
		lines    []string
		titles   []string
		line     strings.Builder
		shape    string // the current shape's placeholder type ("" for none)
		inShape  bool
		haveType bool
	)
	err = p.walk(ctx, part, func(w *walker, t xml.StartElement) error {
		switch t.Name.Local {
		case "sp", "graphicFrame":
			inShape, shape, haveType = true, "", false
		case "ph":
			if inShape && !haveType {
				shape, haveType = attr(t, "type"), true
			}
		case "p":
			line.Reset()
		case "br":
			line.WriteString(" ")
		}
		return nil
	}, func(w *walker, t xml.EndElement) error {
		switch t.Name.Local {
		case "p":
			s := strings.TrimSpace(line.String())
			if s == "" || !w.in("txBody") && !w.in("tc") {
				return nil
			}
			switch {
			case shape == "title" || shape == "ctrTitle":
				titles = append(titles, s)
			case shape == "sldNum" || shape == "sldImg" || shape == "hdr" || shape == "ftr" || shape == "dt":
			default:
				lines = append(lines, s)
			}
		case "sp", "graphicFrame":
			inShape = false
		}
		return nil
	}, func(w *walker, b []byte) error {
		if len(w.stack) > 0 && w.stack[len(w.stack)-1] == "t" {
			line.Write(b)
		}
		return nil
	})
	if len(titles) == 0 && len(lines) > 0 && !notes {
		// A slide without a title placeholder (a text box on top, as
		// other programs make them): its first text is its title.
		titles, lines = lines[:1], lines[1:]
	}
	return strings.Join(titles, " "), strings.Join(lines, "\n"), err
}
