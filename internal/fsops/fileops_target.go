package fsops

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/risk"
)

// The Target of a file operation is what moves: a move or copy is a write
// at the destination of every file it carries (with that file's start as
// its new content), and a move or trash is also a removal at the source
// of each; a folder counts by every file in it, so the write check judges
// each as it judges a write (a folder holding a program asks once, naming
// it). An item fs would refuse gives no path: it fails when it runs.

// fileOpTarget is the Target of action's input raw.
func (e *Engine) fileOpTarget(_ context.Context, action string, raw json.RawMessage) (primitive.Target, error) {
	var in FileOpInput
	if err := json.Unmarshal(raw, &in); err != nil {
		return primitive.Target{}, fmt.Errorf("decode input: %w", err)
	}
	items, err := fileOpItems(action, in)
	if err != nil {
		return primitive.Target{}, nil // refused when it runs
	}
	var t primitive.Target
	// One budget for the whole call: the write check judges every file,
	// so a call carrying more than it can judge is refused whole (as it
	// is when it runs, tooManyEntries), never judged in part.
	budget := MaxTreeEntries
	folders := map[string]string{} // the folders items go in, resolved once
	for i, it := range items {
		n := len(t.Files)
		switch action {
		case ActionMove, ActionCopy:
			src, err := e.resolveSource(it.From, "from", action == ActionMove)
			if err != nil {
				continue
			}
			dst, err := e.resolveDestIn(src, it.To, folders)
			if err != nil {
				continue
			}
			e.carryTarget(&t, src, dst, action == ActionMove, &budget)
		case ActionTrash:
			p, err := e.resolveSource(it.Path, "path", true)
			if err != nil {
				continue
			}
			e.carryTarget(&t, p, "", true, &budget)
		case ActionMkdir:
			if err := e.addTarget(&t, it.Path, func(string) leaves { return leaves{folder: true} }); err != nil {
				return primitive.Target{}, err
			}
		}
		if budget < 0 {
			return primitive.Target{}, mapErr(action, tooManyEntries(in))
		}
		for range len(t.Files) - n {
			t.Item = append(t.Item, i)
		}
	}
	t.Paths = listedOnce(t.Paths)
	return t, nil
}

// carryTarget adds what carrying src to dst does ("" for the bin) to t:
// the write of each file at dst, and with remove its removal at src.
func (e *Engine) carryTarget(t *primitive.Target, src, dst string, remove bool, budget *int) {
	add := func(s, d string, info fs.FileInfo) {
		link := isLink(info)
		if link {
			// A link carried itself counts as what it points to.
			if ti, err := (itemView{}).stat(s); err == nil {
				info = ti
			}
		}
		if d != "" {
			l := leaves{folder: info.IsDir()}
			if info.Mode().IsRegular() {
				l = fileLeaves(s, d)
			} else if link && !info.IsDir() {
				l.head = []byte{}
			}
			f := e.facts(d, l)
			if executable(info) && !f.Exists {
				// A program's copy is a program as its original is.
				f.Exists, f.Executable = true, true
			}
			e.addFacts(t, f)
		}
		if remove {
			e.addFacts(t, e.facts(s, leaves{folder: info.IsDir(), link: link}))
		}
	}
	info, err := lstatItem(src)
	if err != nil {
		return
	}
	add(src, dst, info)
	if !info.IsDir() {
		return
	}
	filepath.WalkDir(src, func(q string, d fs.DirEntry, err error) error {
		if err != nil || q == src {
			return nil
		}
		if *budget--; *budget < 0 {
			return filepath.SkipAll // the call is refused (fileOpTarget)
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		info = plainInfo(q, info)
		rel, _ := filepath.Rel(src, q)
		to := ""
		if dst != "" {
			to = filepath.Join(dst, rel)
		}
		add(q, to, info)
		return nil
	})
}

// addFacts adds one file's facts to t. A path may be listed twice: the
// Target's maker lists each once at the end (listedOnce), as a batch of
// 1,000 items searching the list for each of its 2,000 paths cost more
// than all else in its target.
func (e *Engine) addFacts(t *primitive.Target, f risk.FileFacts) {
	t.Paths = append(t.Paths, f.Path)
	t.Files = append(t.Files, f)
}

// listedOnce is paths with each listed once, in their first order.
func listedOnce(paths []string) []string {
	seen := make(map[string]bool, len(paths))
	out := paths[:0]
	for _, p := range paths {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// undoActionTarget adds to t what the undo of file-operation receipt r
// does (undoAction): what moves back, goes to the bin or comes back.
func (e *Engine) undoActionTarget(t *primitive.Target, r receipt) {
	budget := MaxTreeEntries
	switch r.action {
	case ActionMove:
		e.carryTarget(t, r.path, r.fromPath, true, &budget)
	case ActionCopy, ActionRestore:
		e.carryTarget(t, r.path, "", true, &budget)
	case ActionTrash:
		if r.binPath != "" {
			e.carryTarget(t, r.binPath, r.path, false, &budget)
		}
	default:
		folder := false
		if info, err := os.Lstat(r.path); err == nil {
			folder = info.IsDir()
		}
		e.addFacts(t, e.facts(r.path, leaves{folder: folder}))
	}
}
