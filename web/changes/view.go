package changes

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"sort"
	"time"

	"github.com/hearth-dev/hearth/internal/document"
	"github.com/hearth-dev/hearth/internal/fsops"
	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/web/ui"
)

// ChatView is one conversation's changes, as the page shows them.
type ChatView struct {
	Key, Label string
	Changes    []ChangeRow
	// Undoable counts the chat's own changes Undo all would put back;
	// Own counts the chat's own changes (the operator's undos aside).
	Undoable, Own int
	// Redo is the operator's newest undo of this chat that can be
	// brought back, if any.
	Redo *fsops.Batch
	// Expired lists the files whose earlier changes retention removed;
	// ExpiredUnnamed counts such changes whose file is not known.
	Expired        []ExpiredFile
	ExpiredUnnamed int
	KeptDays       int
	Report         *Report
	Now            time.Time
}

// ExpiredFile is a file whose earlier changes can no longer be undone.
type ExpiredFile struct {
	Path   string
	Newest time.Time
}

// ChangeRow is one change.
type ChangeRow struct {
	fsops.ChatChange
	Approval *govern.Approval
	// Diff is a text change; Folded says it is longer than FoldLines.
	Diff   []DiffLine
	Folded bool
	// Binary describes a change that is not shown as text.
	Binary string
	// NotShown says why no diff is shown ("" when one is).
	NotShown string
	// InEffect: the change is not undone, or its undo was undone (a Redo
	// brought it back).
	InEffect bool
	// Later: a later change in effect touches the same file, so this one
	// cannot be undone on its own (the file is no longer as it left it);
	// Undo all still goes back past it.
	Later bool
	// ChangedSince: the file is no longer as the chat's newest change in
	// effect on it left it (the person, another program or another chat
	// changed, removed or made it since), so an undo leaves it alone; set
	// on that change and on the earlier ones it shadows.
	ChangedSince bool
	// Members are the items of one call that did several at once (a
	// batch of moves, copies, folders or trashes), this row's own first:
	// the page shows them as one change, their list one click away.
	Members []fsops.ChatChange
}

// What says the change in a few words.
func (c ChangeRow) What() string {
	if c.Action != "" {
		return c.actionWords()
	}
	switch {
	case c.Operator != "" && c.Undoes != "":
		return "you (" + c.Operator + ") put back " + baseName(c.Path)
	case c.Op == "undo" && c.Moved:
		return "undid its creation of " + baseName(c.Path) + " (removed it)"
	case c.Op == "undo":
		return "undid its change to " + baseName(c.Path)
	case c.CreatedFile:
		return "created " + baseName(c.Path)
	case c.Op == "patch":
		return "edited " + baseName(c.Path)
	}
	return "rewrote " + baseName(c.Path)
}

// Allowed says which approval allowed the change.
func (c ChangeRow) Allowed(now time.Time) string {
	switch {
	case c.Operator != "":
		return ""
	case c.Approval != nil:
		return "you allowed it (" + c.Approval.By + ", " + clock(c.Approval.At, now) + ")"
	case c.FutureID != "":
		return "ran without asking (allowed by the mode or a folder rule)"
	}
	return ""
}

// Undoable reports whether the page offers "Undo this change": the
// chat's change is in effect (never undone, or brought back by a Redo),
// its earlier content is kept, it is the newest on its file and the file
// is still as it left it, as the undo itself requires.
func (c ChangeRow) Undoable() bool {
	return c.Operator == "" && c.InEffect && c.Kept && !c.Later && !c.ChangedSince
}

// Operation is the change's operation, as Details names it.
func (c ChangeRow) Operation() string {
	if c.Action != "" {
		return c.Action
	}
	return c.Op
}

// actionWords says a file operation, or a batch of them, in one
// sentence: "moved 37 files from Downloads to Documents\Invoices".
func (c ChangeRow) actionWords() string {
	items := c.Members
	if len(items) == 0 {
		items = []fsops.ChatChange{c.ChatChange}
	}
	n := len(items)
	var froms, tos []string
	files, dirs := 0, 0
	for _, m := range items {
		froms = append(froms, filepath.Dir(m.From))
		tos = append(tos, filepath.Dir(m.Path))
		if m.Dir {
			dirs++
		} else {
			files++
		}
	}
	what := func() string {
		switch {
		case n == 1:
			return baseName(c.Path)
		case dirs == 0:
			return plural(files, "file")
		case files == 0:
			return plural(dirs, "folder")
		}
		return plural(files, "file") + " and " + plural(dirs, "folder")
	}
	into := func(dirs []string) string {
		if d, one := ui.ThisPC().Common(dirs); one {
			return "to " + shortDir(d)
		} else if d != "" {
			return "into folders under " + shortDir(d)
		}
		return "into several folders"
	}
	undo := ""
	if c.Op == "undo" {
		undo = "undid a change: "
	}
	switch c.Action {
	case fsops.ActionMove:
		return undo + "moved " + what() + " from " + shortDir(firstDir(froms)) + " " + into(tos)
	case fsops.ActionCopy:
		return undo + "copied " + what() + " from " + shortDir(firstDir(froms)) + " " + into(tos)
	case fsops.ActionTrash:
		return undo + "put " + what() + " from " + shortDir(firstDir(tos)) + " in the " + TrashName()
	case fsops.ActionRestore:
		return undo + "took " + what() + " back from the " + TrashName()
	case fsops.ActionMkdir:
		if n == 1 {
			return undo + "made the folder " + baseName(c.Path) + " in " + shortDir(filepath.Dir(c.Path))
		}
		return undo + "made " + plural(n, "folder") + " under " + shortDir(firstDir(tos))
	case fsops.ActionRmdir:
		return undo + "removed " + what() + " (empty)"
	}
	return c.Action + " " + what()
}

// firstDir is the folder dirs share, or the first of them.
func firstDir(dirs []string) string {
	d, _ := ui.ThisPC().Common(dirs)
	if d == "" && len(dirs) > 0 {
		return dirs[0]
	}
	return d
}

// shortDir names a folder as the person knows it (ui.Folders): a known
// folder by its name (Documents\Invoices), else its path below the home
// folder, else a short form of it; the Permits card names them the same.
func shortDir(d string) string { return ui.ThisPC().Name(d) }

// ChatView reads the changes of the conversation key.
func (h *Handler) ChatView(ctx context.Context, key string, now time.Time) (ChatView, error) {
	cs, err := h.FS.ChatChanges(ctx, key)
	if err != nil {
		return ChatView{}, err
	}
	v := ChatView{Key: key, Now: now, KeptDays: h.KeptDays}
	var first, last time.Time
	if len(cs) > 0 {
		first, last = cs[0].At, cs[len(cs)-1].At
	}
	v.Label = h.label(ctx, key, first, last, now)
	var futures []string
	for _, c := range cs {
		if c.FutureID != "" {
			futures = append(futures, c.FutureID)
		}
	}
	approvals := map[string]govern.Approval{}
	if h.Approvals != nil && len(futures) > 0 {
		if approvals, err = h.Approvals.ApprovalsOf(ctx, futures); err != nil {
			return ChatView{}, err
		}
	}
	known, err := h.FS.ChatContents(ctx, key, MaxDiffBytes)
	if err != nil {
		return ChatView{}, err
	}
	v.Changes = make([]ChangeRow, len(cs))
	for i, c := range cs {
		row := ChangeRow{ChatChange: c}
		if a, ok := approvals[c.FutureID]; ok {
			row.Approval = &a
		}
		if err := h.describe(ctx, &row, known); err != nil {
			return ChatView{}, err
		}
		v.Changes[i] = row
	}
	undoneBy := make(map[string]string, len(cs))
	for _, c := range cs {
		undoneBy[c.ID] = c.UndoneBy
	}
	for i := range v.Changes {
		c := &v.Changes[i]
		c.InEffect = inEffect(c.ID, undoneBy, len(cs))
	}
	// Newest first: a change is "Later"-shadowed when a newer change of
	// the chat's in effect touches its file. The person's own undos and
	// redos on this page shadow nothing: an undo in effect has taken its
	// change out of effect, and a redo leaves the file as the chat's
	// change did, so that change is again the one to undo.
	since := h.FS.NewSinceCheck(MaxSinceBytes)
	changed := map[string]bool{} // by path: its newest change's ChangedSince
	for i := len(v.Changes) - 1; i >= 0; i-- {
		c := &v.Changes[i]
		if c.Path == "" || !c.InEffect || c.Operator != "" {
			continue
		}
		if cs, seen := changed[c.Path]; seen {
			c.Later, c.ChangedSince = true, cs
			continue
		}
		// The newest change of a file: is it still as that change left
		// it, as its undo requires? A write's file by its content; a
		// moved, copied or restored item at its new place by the
		// fingerprint its receipt holds; a trashed item by still being
		// in the bin with nothing else at its old place. (A made or
		// removed folder is left to its undo, which names what it
		// leaves alone.)
		switch {
		case !c.Kept:
		case c.Action == "" && !c.Dir:
			size := int64(-1)
			if b, ok := known[c.Post]; ok {
				size = int64(len(b))
			}
			c.ChangedSince = since.Changed(c.Path, c.Post, size)
		case c.Action == fsops.ActionMove || c.Action == fsops.ActionCopy || c.Action == fsops.ActionRestore:
			c.ChangedSince = since.ItemChanged(c.Path, c.Post, c.Dir)
		case c.Action == fsops.ActionTrash:
			c.ChangedSince = since.TrashChanged(c.Path, c.Bin)
		}
		changed[c.Path] = c.ChangedSince
	}
	// The items of one call are one change.
	grouped := v.Changes[:0]
	at := map[string]int{}
	for _, c := range v.Changes {
		if c.CallBatch == "" {
			grouped = append(grouped, c)
			continue
		}
		if i, ok := at[c.CallBatch]; ok {
			g := &grouped[i]
			g.Members = append(g.Members, c.ChatChange)
			g.InEffect = g.InEffect || c.InEffect
			// The call's undo leaves its changed items alone and puts
			// the others back: the change is changed since only when
			// every item is.
			g.ChangedSince = g.ChangedSince && c.ChangedSince
			continue
		}
		at[c.CallBatch] = len(grouped)
		c.Members = []fsops.ChatChange{c.ChatChange}
		grouped = append(grouped, c)
	}
	v.Changes = grouped
	for i := range v.Changes {
		c := &v.Changes[i]
		if c.Operator == "" {
			v.Own++
			if c.InEffect && c.Undoable() {
				v.Undoable++
			}
		}
	}
	batches, err := h.FS.Batches(ctx, key)
	if err != nil {
		return ChatView{}, err
	}
	if len(batches) > 0 && batches[0].Live > 0 && !batches[0].Redo {
		v.Redo = &batches[0]
	}
	x, err := h.FS.ExpiredChanges(ctx, key)
	if err != nil {
		return ChatView{}, err
	}
	for p, at := range x.Paths {
		v.Expired = append(v.Expired, ExpiredFile{p, at})
	}
	sort.Slice(v.Expired, func(i, j int) bool { return v.Expired[i].Path < v.Expired[j].Path })
	v.ExpiredUnnamed = x.Unnamed
	return v, nil
}

// inEffect reports whether change id is in effect: not undone, or undone
// by an undo that was itself undone. An undo Hearth no longer lists
// counts as in effect. depth bounds the walk.
func inEffect(id string, undoneBy map[string]string, depth int) bool {
	by := undoneBy[id]
	if by == "" {
		return true
	}
	if _, known := undoneBy[by]; !known || depth <= 0 {
		return false
	}
	return !inEffect(by, undoneBy, depth-1)
}

// describe fills in what changed: a diff, or why there is none.
func (h *Handler) describe(ctx context.Context, c *ChangeRow, known map[string][]byte) error {
	if c.Action != "" {
		return nil // a file operation: no content changed
	}
	if !c.Kept {
		c.NotShown = h.expiredWords()
		return nil
	}
	if c.Pre == "" && c.Post == "" {
		return nil
	}
	content := func(sha string) ([]byte, bool, error) {
		if sha == "" {
			return nil, true, nil
		}
		if b, ok := known[sha]; ok {
			return b, true, nil
		}
		b, ok, err := h.FS.Content(ctx, c.Path, sha, MaxDiffBytes)
		if ok {
			known[sha] = b
		}
		return b, ok, err
	}
	before, okB, err := content(c.Pre)
	if err != nil {
		return err
	}
	after, okA, err := content(c.Post)
	if err != nil {
		return err
	}
	switch {
	case c.Pre != "" && c.Post != "" && c.Pre == c.Post:
		c.NotShown = "the content did not change"
	case !okB || !okA:
		which := "before"
		if okB {
			which = "after"
		}
		c.NotShown = "no diff: Hearth no longer has the content " + which + " this change (the file changed since); its fingerprints are in Details"
	case !Text(before) || !Text(after):
		// A document's change is shown as the change of its text (the
		// cells of a workbook, a Word document's Markdown).
		a, okA := document.Comparable(ctx, c.Path, nilIf(c.Pre == "", before))
		b, okB := document.Comparable(ctx, c.Path, nilIf(c.Post == "", after))
		if okA && okB {
			c.Diff = Unified([]byte(a), []byte(b), DiffContext)
			break
		}
		c.Binary = binaryWords(c, before, after)
	case c.CreatedFile:
		c.NotShown = "new file"
		c.Diff = Unified(nil, after, DiffContext)
	default:
		c.Diff = Unified(before, after, DiffContext)
	}
	c.Folded = len(c.Diff) > FoldLines
	return nil
}

func nilIf(none bool, b []byte) []byte {
	if none {
		return nil
	}
	if b == nil {
		return []byte{}
	}
	return b
}

func binaryWords(c *ChangeRow, before, after []byte) string {
	side := func(sha string, b []byte) string {
		if sha == "" {
			return "no file"
		}
		return size(int64(len(b)))
	}
	return side(c.Pre, before) + " before, " + side(c.Post, after) + " after (Details: their fingerprints)"
}

func size(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
}

func (h *Handler) expiredWords() string {
	if h.KeptDays > 0 {
		return fmt.Sprintf("no longer undoable (kept %d days)", h.KeptDays)
	}
	return "no longer undoable (its copy was removed to stay within the storage budget)"
}

// RedoWords says what the operator's undo that Redo would bring back did:
// the files it put back and those it moved to the trash (files the chat
// had created), never "put back" for a file that went to the trash.
func (v ChatView) RedoWords() string {
	if v.Redo == nil {
		return ""
	}
	back, trashed := v.Redo.Files-v.Redo.Trashed, v.Redo.Trashed
	var did string
	switch {
	case trashed == 0:
		did = "You put " + plural(back, "file") + " back"
	case back == 0:
		did = "You moved " + plural(trashed, "file") + " the chat had created to the " + TrashName()
	default:
		did = "You put " + plural(back, "file") + " back and moved " + plural(trashed, "file") + " the chat had created to the " + TrashName()
	}
	return did + " at " + ui.Clock(v.Redo.At, v.Now) + "."
}

// TrashName is what the system calls its trash.
func TrashName() string {
	if runtime.GOOS == "windows" {
		return "Recycle Bin"
	}
	return "trash"
}

func clock(t, now time.Time) string {
	if t.IsZero() {
		return "earlier"
	}
	return ui.Clock(t, now)
}
