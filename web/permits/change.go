package permits

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/risk"
	"github.com/hearth-dev/hearth/web/changes"
)

// What a waiting write to a persistence place changes, for the card that
// matters most: what the change adds that would run (its headline), the
// change itself as a diff, and whether the whole file is new. A person
// must see the line a change appends to a start-up file, not the file's
// first line, which was there already.

const (
	// changeReadMax bounds how much of the file as it is now the card
	// reads to compare.
	changeReadMax = 256 << 10
	// changeShowMax bounds the diff lines the card shows; the rest is
	// counted ("and N more lines").
	changeShowMax = 40
)

// Change is a persistence write's change as the card shows it.
type Change struct {
	// Runs is what the change adds that would run (risk.WhatRunsAdded);
	// "" when that is not known.
	Runs string
	// NewFile: the file does not exist, so all of it is new.
	NewFile bool
	// Diff is the change (or the new file) as diff lines, without hunk
	// headers, at most changeShowMax; More counts the lines left out.
	Diff []changes.DiffLine
	More int
}

// persistChange reads what the waiting write in p would leave in its file
// (a write's data, or the file as it is now with a patch's replacements
// made) and compares it with the file as it is now.
func persistChange(p govern.Permit) Change {
	var in struct {
		Data         *string `json:"data"`
		Encoding     string  `json:"encoding"`
		Replacements []struct {
			Old string `json:"old"`
			New string `json:"new"`
		} `json:"replacements"`
	}
	if json.Unmarshal([]byte(p.Input), &in) != nil {
		return Change{}
	}
	old, exists := readNow(p.Subject)
	var next []byte
	switch {
	case in.Data != nil && in.Encoding == "base64":
		b, err := base64.StdEncoding.DecodeString(*in.Data)
		if err != nil {
			return Change{}
		}
		next = b
	case in.Data != nil:
		next = []byte(*in.Data)
	case exists:
		s := string(old)
		for _, r := range in.Replacements {
			s = strings.Replace(s, r.Old, r.New, 1)
		}
		next = []byte(s)
	default:
		for _, r := range in.Replacements {
			next = append(append(next, r.New...), '\n')
		}
	}
	c := Change{NewFile: !exists}
	if exists {
		c.Runs = risk.WhatRunsAdded(p.Subject, old, next)
	} else {
		c.Runs = risk.WhatRunsAdded(p.Subject, nil, next)
	}
	if !changes.Text(next) || (exists && !changes.Text(old)) {
		return c
	}
	for _, l := range changes.Unified(old, next, 2) {
		if l.Kind == '@' {
			if len(c.Diff) == 0 {
				continue // the first hunk needs no separator
			}
			l = changes.DiffLine{Kind: ' ', Text: "…"}
		}
		if len(c.Diff) == changeShowMax {
			c.More++
			continue
		}
		c.Diff = append(c.Diff, l)
	}
	return c
}

// readNow reads the file at path as it is now (at most changeReadMax
// bytes); exists is false when there is no such file.
func readNow(path string) (content []byte, exists bool) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false
	}
	if err != nil {
		return nil, true
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, changeReadMax))
	return b, true
}
