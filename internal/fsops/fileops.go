package fsops

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hearth-dev/hearth/internal/atomicfile"
	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/risk"
)

// The file operations: move (a rename is a move within a folder), copy,
// mkdir and trash, of files and folders, one item or up to
// MaxFileOpItems in one call, each decided and done on its own. Every one
// leaves a receipt in fs_receipts (its action column says which), so
// fs.undo, fs.changes, the Changes page, Undo all, Redo and retention see
// it like a write. Nothing is ever deleted outright: what an operation
// removes (a trashed item, a file an overwrite replaces, the source of a
// move across volumes) goes to the bin.

// MaxFileOpItems bounds the items of one move, copy, mkdir or trash.
const MaxFileOpItems = 1000

// The actions of file-operation receipts.
const (
	ActionMove    = "move"
	ActionCopy    = "copy"
	ActionMkdir   = "mkdir"
	ActionTrash   = "trash"
	ActionRestore = "restore" // an undo of a trash
	ActionRmdir   = "rmdir"   // an undo of a mkdir
)

// Outcomes of one item.
const (
	ItemDone      = "done"
	ItemConflict  = "conflict"
	ItemRefused   = "refused"
	ItemFailed    = "failed"
	ItemUnchanged = "unchanged" // mkdir of a folder that is there
)

// FileOpItem is one item of a move or copy (From, To) or of a mkdir or
// trash (Path). Overwrite or ExpectedSHA256 (of the file replaced) allow
// a move or copy to replace a file at To; the replaced file goes to the
// bin.
type FileOpItem struct {
	From           string `json:"from,omitempty"`
	To             string `json:"to,omitempty"`
	Path           string `json:"path,omitempty"`
	Overwrite      bool   `json:"overwrite,omitempty"`
	ExpectedSHA256 Expect `json:"expected_sha256,omitzero"`
}

// FileOpInput is the input of move, copy, mkdir and trash: one item in
// the top-level fields, or Items (Overwrite then applies to each).
type FileOpInput struct {
	FileOpItem
	Items []FileOpItem `json:"items,omitempty"`
}

// ItemResult is what happened to one item. Path is where the item is now
// (trash: where it was; Trash says where it went).
type ItemResult struct {
	From        string `json:"from,omitempty"`
	Path        string `json:"path"`
	Type        string `json:"type,omitempty"`
	Outcome     string `json:"outcome"`
	ReceiptID   string `json:"receipt_id,omitempty"`
	SHA256      string `json:"sha256,omitempty"`
	Files       int    `json:"files,omitempty"`
	Trash       string `json:"trash,omitempty"`
	Replaced    string `json:"replaced_to,omitempty"`
	CrossVolume bool   `json:"cross_volume,omitempty"`
	Error       string `json:"error,omitempty"`
	Code        string `json:"code,omitempty"`
}

// FileOpResult is the answer of a file operation: completed (every item
// done), partial or failed, and each item's outcome in the order given.
type FileOpResult struct {
	Status string       `json:"status"`
	Done   int          `json:"done"`
	Failed int          `json:"failed"`
	Items  []ItemResult `json:"items"`
}

// FileOp runs action (move, copy, mkdir or trash) over in's items for
// the conversation route. Bad input fails the whole call before anything
// is done; then each item is done on its own, and one that fails is named
// in its result while the others go on.
func (e *Engine) FileOp(ctx context.Context, route, action string, in FileOpInput) (FileOpResult, error) {
	items, err := fileOpItems(action, in)
	if err != nil {
		return FileOpResult{}, err
	}
	// Each source is resolved once: for the budget of entries here, and
	// for a batch's moves and copies below.
	srcs := make([]string, len(items))
	srcErrs := make([]error, len(items))
	if action != ActionMkdir {
		var folders []string
		for i, it := range items {
			field, p := "from", it.From
			if action == ActionTrash {
				field, p = "path", it.Path
			}
			var info fs.FileInfo
			if srcs[i], info, srcErrs[i] = e.resolveSourceInfo(p, field, action != ActionCopy); srcErrs[i] == nil && info.IsDir() {
				folders = append(folders, srcs[i])
			}
		}
		if entriesOver(folders) {
			return FileOpResult{}, tooManyEntries(in)
		}
	}
	batch := ""
	if len(items) > 1 {
		batch = primitive.NewID("fsop")
	}
	res := FileOpResult{Items: make([]ItemResult, 0, len(items))}
	if len(items) > 1 && (action == ActionMove || action == ActionCopy) {
		ps := make([]plan, len(items))
		fail := make([]error, len(items))
		folders := map[string]string{}
		for i, it := range items {
			ps[i] = plan{route: route, action: action, op: "write", src: it.From, dst: it.To, callBatch: batch,
				overwrite: it.Overwrite, expect: it.ExpectedSHA256}
			// Resolved above: a move carries a link itself, a copy refuses it.
			if ps[i].src, fail[i] = srcs[i], srcErrs[i]; fail[i] != nil {
				ps[i].src = it.From
				continue
			}
			if ps[i].dst, fail[i] = e.resolveDestIn(ps[i].src, it.To, folders); fail[i] != nil {
				ps[i].dst = it.To
			}
		}
		res.Items = e.carryBatch(ctx, ps, fail)
		items = nil
	}
	for _, it := range items {
		if err := ctx.Err(); err != nil {
			res.Items = append(res.Items, ItemResult{From: it.From, Path: it.Path + it.To, Outcome: ItemFailed, Code: "cancelled", Error: "not done: the call was stopped"})
			continue
		}
		r, err := e.fileOpItem(ctx, route, action, batch, it)
		if err != nil {
			r.Outcome, r.Code, r.Error = itemFailure(err)
		}
		res.Items = append(res.Items, r)
	}
	for _, r := range res.Items {
		if r.Outcome == ItemDone || r.Outcome == ItemUnchanged {
			res.Done++
		} else {
			res.Failed++
		}
	}
	switch {
	case res.Failed == 0:
		res.Status = "completed"
	case res.Done == 0:
		res.Status = "failed"
	default:
		res.Status = "partial"
	}
	return res, nil
}

// fileOpItems checks in for action and returns its items.
func fileOpItems(action string, in FileOpInput) ([]FileOpItem, error) {
	one := in.FileOpItem
	items := in.Items
	switch {
	case len(items) > MaxFileOpItems:
		return nil, &InputError{Field: "items", Message: fmt.Sprintf("%d items given; at most %d per call", len(items), MaxFileOpItems)}
	case len(items) > 0 && (one.From != "" || one.To != "" || one.Path != ""):
		return nil, &InputError{Field: "items", Message: "give one item (from/to or path) or items, not both"}
	case len(items) > 0 && one.ExpectedSHA256.Set:
		return nil, &InputError{Field: "expected_sha256", Message: "names one file: give it inside each item"}
	case len(items) == 0:
		items = []FileOpItem{one}
	default:
		items = append([]FileOpItem(nil), items...)
		// Several items sent to one "to" go in it: it is a folder.
		tos := map[string]int{}
		for _, it := range items {
			tos[it.To]++
		}
		for i := range items {
			items[i].Overwrite = items[i].Overwrite || one.Overwrite
			if to := items[i].To; to != "" && tos[to] > 1 && !strings.HasSuffix(to, "/") && !strings.HasSuffix(to, string(filepath.Separator)) {
				items[i].To = to + string(filepath.Separator)
			}
		}
	}
	for i, it := range items {
		field := func(f string) string {
			if len(in.Items) == 0 {
				return f
			}
			return fmt.Sprintf("items[%d].%s", i, f)
		}
		switch action {
		case ActionMove, ActionCopy:
			switch {
			case it.From == "":
				return nil, &InputError{Field: field("from"), Message: "give the file or folder to " + action}
			case it.To == "":
				return nil, &InputError{Field: field("to"), Message: "give where to " + action + " it (its new path, or a folder to put it in)"}
			case it.Path != "":
				return nil, &InputError{Field: field("path"), Message: action + " takes from and to, not path"}
			}
		default:
			switch {
			case it.Path == "":
				return nil, &InputError{Field: field("path"), Message: "give the folder or file"}
			case it.From != "" || it.To != "":
				return nil, &InputError{Field: field("from"), Message: action + " takes path, not from or to"}
			case it.Overwrite || it.ExpectedSHA256.Set:
				return nil, &InputError{Field: field("overwrite"), Message: action + " replaces nothing; overwrite and expected_sha256 are for move and copy"}
			}
		}
	}
	return items, nil
}

// itemFailure is an item's outcome, code and words for err.
func itemFailure(err error) (outcome, code, msg string) {
	var ce *ConflictError
	var ie *InputError
	var contain *ContainmentError
	var notOrdinary *NotOrdinaryError
	switch {
	case errors.As(err, &ce):
		return ItemConflict, ce.Reason, ce.Message
	case errors.As(err, &ie):
		return ItemFailed, "invalid_input", ie.Error()
	case errors.As(err, &contain):
		return ItemRefused, "outside_roots", err.Error()
	case errors.As(err, &notOrdinary):
		return ItemRefused, "not_ordinary", notOrdinarySentence(notOrdinary)
	case errors.Is(err, fs.ErrExist):
		return ItemConflict, ReasonExists, "something appeared at its destination meanwhile; nothing was replaced: " + err.Error()
	case atomicfile.IsTransient(err):
		return ItemFailed, "in_use", "another program kept it open (Hearth tried several times); close that program and try again: " + err.Error()
	case errors.Is(err, fs.ErrNotExist):
		return ItemFailed, "not_found", err.Error()
	case errors.Is(err, fs.ErrPermission):
		return ItemFailed, "permission", "Hearth may not change it (permission denied): " + err.Error()
	}
	return ItemFailed, "system", err.Error()
}

// fileOpItem does one item.
func (e *Engine) fileOpItem(ctx context.Context, route, action, batch string, it FileOpItem) (ItemResult, error) {
	switch action {
	case ActionMove, ActionCopy:
		src, err := e.resolveSource(it.From, "from", action == ActionMove)
		if err != nil {
			return ItemResult{From: it.From, Path: it.To}, err
		}
		dst, err := e.resolveDest(src, it.To)
		if err != nil {
			return ItemResult{From: src, Path: it.To}, err
		}
		return e.carry(ctx, plan{route: route, action: action, op: "write", src: src, dst: dst, callBatch: batch,
			overwrite: it.Overwrite, expect: it.ExpectedSHA256})
	case ActionMkdir:
		p, err := e.Roots.Resolve(it.Path)
		if err != nil {
			return ItemResult{Path: it.Path}, err
		}
		return e.mkdir(ctx, plan{route: route, action: action, op: "write", dst: p, callBatch: batch})
	case ActionTrash:
		p, err := e.resolveSource(it.Path, "path", true)
		if err != nil {
			return ItemResult{Path: it.Path}, err
		}
		return e.trash(ctx, plan{route: route, action: action, op: "write", dst: p, callBatch: batch})
	}
	return ItemResult{}, &InputError{Field: "operation", Message: action + " is not a file operation"}
}

// resolveSource resolves an item that must exist. A link (a symlink, a
// junction; a Windows shortcut is a plain file) is carried itself by a
// move or a trash (own), at its own path, never what it points to; a
// copy refuses it (a link resolved would copy what it points to instead).
// The path is looked at as given, its last name not followed: Resolve
// follows it.
func (e *Engine) resolveSource(p, field string, own bool) (string, error) {
	real, _, err := e.resolveSourceInfo(p, field, own)
	return real, err
}

// resolveSourceInfo is resolveSource with what an lstat of the item
// says.
func (e *Engine) resolveSourceInfo(p, field string, own bool) (string, fs.FileInfo, error) {
	clean := filepath.Clean(p)
	info, err := lstatItem(clean)
	if err == nil && isLink(info) && own {
		real, err := e.Roots.ResolveOwn(p)
		if err != nil {
			return "", nil, err
		}
		return real, info, nil
	}
	real, rerr := e.Roots.Resolve(p)
	if rerr != nil {
		return "", nil, rerr
	}
	switch {
	case err != nil || info.Mode().IsRegular() || info.IsDir():
	case isLink(info):
		return "", nil, &InputError{Field: field, Message: fmt.Sprintf("%s is a link (a shortcut to %s), not the file itself; Hearth copies plain files and folders only: give the file's own path", p, real)}
	default:
		return "", nil, &InputError{Field: field, Message: fmt.Sprintf("%s is a %s; Hearth moves, copies and trashes plain files, folders and links only", p, typeOf(info.Mode()))}
	}
	if err != nil || real != clean {
		// The path as given is not the item itself (or was not there a
		// moment ago): look at the item.
		info, err = lstatItem(real)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, &InputError{Field: field, Message: fmt.Sprintf("%s does not exist", real)}
	} else if err != nil {
		return "", nil, fmt.Errorf("look at %s: %w", real, err)
	}
	return real, info, nil
}

// itemType is the type of an item by its fingerprint.
func itemType(fp string, dir bool) string {
	switch {
	case dir:
		return TypeDir
	case strings.HasPrefix(fp, linkPrefix):
		return TypeSymlink
	}
	return TypeFile
}

// fileSHA is the SHA-256 a file's fingerprint is ("" for a folder or a
// link).
func fileSHA(fp string, dir bool) string {
	if itemType(fp, dir) != TypeFile {
		return ""
	}
	return fp
}

// isLink reports whether info is a link's own: a symlink, or a junction
// (which Go sees as irregular). info is from lstatItem or plainInfo: a
// Windows reparse point that is not a link (a OneDrive file) is irregular
// no more.
func isLink(info fs.FileInfo) bool { return info.Mode()&(fs.ModeSymlink|fs.ModeIrregular) != 0 }

// resolveDest resolves where src goes: to itself, or into to when to is
// a folder that is there (and is not src: a rename that changes only the
// case of a name, where names are compared without it).
func (e *Engine) resolveDest(src, to string) (string, error) {
	return e.resolveDestIn(src, to, nil)
}

// resolveDestIn is resolveDest with the folders a call names resolved
// once for all its items (folders: nil, or a map the call keeps). An
// item that goes in a folder keeps its own name there, which resolving
// src already checked (no temporary name), in a folder under a root and
// not denied: whatever is at that name already is a conflict.
func (e *Engine) resolveDestIn(src, to string, folders map[string]string) (string, error) {
	dst, ok := folders[to]
	if !ok {
		var err error
		if dst, err = e.Roots.Resolve(to); err != nil {
			return "", err
		}
	}
	if strings.HasSuffix(to, "/") || strings.HasSuffix(to, string(filepath.Separator)) {
		// A folder, there or not yet: the item goes in it.
		if folders != nil {
			folders[to] = dst
		}
		dst = filepath.Join(dst, filepath.Base(src))
	} else if di, err := os.Stat(dst); err == nil && di.IsDir() {
		if si, err := os.Lstat(src); err != nil || !os.SameFile(si, di) {
			dst = filepath.Join(dst, filepath.Base(src))
		}
	}
	if dst == src {
		return "", &InputError{Field: "to", Message: fmt.Sprintf("%s is where it already is", src)}
	}
	if hasPathPrefix(dst, src, filepath.Separator, pathFold) && pathKey(dst) != pathKey(src) {
		return "", &InputError{Field: "to", Message: fmt.Sprintf("%s cannot go inside itself (%s)", src, dst)}
	}
	return dst, nil
}

// plan is one file operation to do, or the undo of one.
type plan struct {
	route, action, op string
	src, dst          string
	callBatch         string
	undoes            string
	operator, batch   string
	overwrite         bool
	expect            Expect
	// bin is the trashed item a restore takes back.
	bin string
	// restoreReplaced is a file an overwrite replaced, put back at src
	// after an undo moves the item away from it.
	restoreReplaced string
}

// lockPair takes the locks of the paths a plan changes.
func (e *Engine) lockPair(paths ...string) func() {
	var shapes, keys []string
	for _, p := range paths {
		if p == "" {
			continue
		}
		shapes = append(shapes, shapeKeys(p)...)
		keys = append(keys, pathKey(p))
	}
	sortCompact := func(s []string) []string {
		slices.Sort(s)
		return slices.Compact(s)
	}
	u1 := e.locks.lockAll(sortCompact(shapes))
	u2 := e.locks.lockAll(sortCompact(keys))
	return func() { u2(); u1() }
}

// carry moves or copies p.src to p.dst:
//
//  1. lock both; fingerprint the source; check the destination (a file
//     there is replaced only with overwrite or its expected_sha256; a
//     folder there never);
//  2. insert the receipt 'pending' (post: the source's fingerprint);
//  3. a replaced file goes to the bin, its place there recorded first
//     (replaceToBin);
//  4. a move within a volume is one rename; across volumes, and every
//     copy, copies beside the destination under a temporary name,
//     verifies size and SHA-256, renames it into place (and for a move
//     records step 'copied', then puts the source in the bin);
//  5. commit the receipt.
//
// A crash leaves the source in place (a temporary copy, removed at the
// next start) or the item at its destination; Recover settles the receipt
// by what it finds (recoverAction).
func (e *Engine) carry(ctx context.Context, p plan) (ItemResult, error) {
	unlock := e.lockPair(p.src, p.dst)
	defer unlock()
	c, err := e.carryPrepare(ctx, p, nil, nil)
	if err != nil {
		return c.res, err
	}
	if err := e.insertActions(ctx, []*carried{&c}); err != nil {
		return c.res, err
	}
	if err := e.carryDo(ctx, &c); err != nil {
		if verr := e.voidAction(ctx, c.id); verr != nil {
			err = errors.Join(err, verr)
		}
		c.res.ReceiptID = ""
		return c.res, err
	}
	if err := e.commitAction(ctx, c.id, p.undoes); err != nil {
		return c.res, err
	}
	c.res.Outcome = ItemDone
	return c.res, nil
}

// carried is one move or copy on its way: checked (carryPrepare), its
// receipt pending (insertActions), done (carryDo).
type carried struct {
	p            plan
	res          ItemResult
	fp, pre, id  string
	dir, existed bool
}

// carryPrepare checks one move or copy (steps 1 of carry) under its
// locks, changing nothing but the destination's parent folders.
//
// made and cc are nil for an item alone; for a batch's, the folders it
// has made sure of so far (a batch of files into one folder makes sure
// of it once), and the checks its items share.
func (e *Engine) carryPrepare(ctx context.Context, p plan, made map[string]bool, cc *callChecks) (carried, error) {
	c := carried{p: p, res: ItemResult{From: p.src, Path: p.dst}, id: newReceiptID()}
	fp, dir, files, start, err := carriedPrint(p.src)
	if errors.Is(err, fs.ErrNotExist) {
		return c, &InputError{Field: "from", Message: fmt.Sprintf("%s does not exist", p.src)}
	}
	if err != nil {
		return c, err
	}
	c.fp, c.dir = fp, dir
	c.res.Type, c.res.Files, c.res.SHA256 = itemType(fp, dir), files, fileSHA(fp, dir)
	if c.pre, c.existed, err = e.destination(p); err != nil {
		return c, err
	}
	checked := checkedOf(ctx)
	left := leaves{folder: true}
	switch {
	case dir || !checked.Ordinary: // only the check of an ordinary write reads it
	case start != nil: // a plain file, read once
		left = fileLeavesFrom(start, p.src, p.dst)
	default: // a link: what it points to
		left = carriedLeaves(p.src, p.dst)
	}
	if err := e.checkOrdinaryIn(checked, p.dst, left, cc); err != nil {
		return c, err
	}
	if p.action == ActionMove && !dir {
		if err := e.checkOrdinaryIn(checked, p.src, leaves{link: c.res.Type == TypeSymlink}, cc); err != nil {
			return c, err
		}
	}
	if parent := filepath.Dir(p.dst); !made[parent] {
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return c, fmt.Errorf("create the folder for %s: %w", p.dst, err)
		}
		if made != nil {
			made[parent] = true
		}
	}
	return c, nil
}

// carriedPrint is the fingerprint of the item a move or copy carries,
// with a file's start (what the check of an ordinary write needs of it,
// fileLeaves) read on the way: a file is opened and read once.
func carriedPrint(p string) (fp string, dir bool, files int, start []byte, err error) {
	info, err := lstatItem(p)
	if err != nil {
		return "", false, 0, nil, err
	}
	if !info.Mode().IsRegular() {
		fp, dir, files, err = fingerprint(p)
		return fp, dir, files, nil, err
	}
	f, err := openRead(p)
	if err != nil {
		return "", false, 0, nil, err
	}
	defer f.Close()
	// A buffer the size of the file (small documents are most of a batch),
	// 64 KiB at most.
	buf := make([]byte, min(max(info.Size()+1, 512), 64<<10))
	h := sha256.New()
	var first [risk.HeadSize]byte
	got := 0
	for {
		n, rerr := f.Read(buf)
		if got < len(first) {
			got += copy(first[got:], buf[:n])
		}
		h.Write(buf[:n])
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return "", false, 0, nil, rerr
		}
	}
	return hex.EncodeToString(h.Sum(nil)), false, 1, append([]byte{}, first[:got]...), nil
}

// carryDo does one move or copy whose receipt is pending (steps 3 and 4
// of carry); on an error nothing of it is left done.
func (e *Engine) carryDo(ctx context.Context, c *carried) error {
	p := c.p
	c.res.ReceiptID = c.id
	if c.existed {
		where, err := e.replaceToBin(ctx, c.id, p.dst)
		if err != nil {
			return err
		}
		c.res.Replaced = where
	}
	cross := p.action == ActionCopy
	if p.action == ActionMove {
		_, err := e.Replacer.Retry(func() error { return renameNoReplace(p.src, p.dst) })
		switch {
		case err == nil:
		case crossVolume(err):
			cross = true
			c.res.CrossVolume = true
		default:
			return e.putBackReplaced(p.dst, c.res.Replaced, fmt.Errorf("move %s to %s: %w", p.src, p.dst, err))
		}
	}
	if !cross {
		return nil
	}
	tmp := filepath.Join(filepath.Dir(p.dst), tempName(c.id))
	err := copyTree(p.src, tmp)
	var copied []copiedEntry
	if err == nil {
		copied, err = verifyTree(p.src, tmp)
	}
	if err == nil {
		err = renameNoReplace(tmp, p.dst)
	}
	if err != nil {
		os.RemoveAll(tmp)
		return e.putBackReplaced(p.dst, c.res.Replaced, fmt.Errorf("%s %s to %s: %w", p.action, p.src, p.dst, err))
	}
	if p.action == ActionMove {
		if err := e.setReceipt(ctx, c.id, "step", stepCopied); err != nil {
			return err
		}
		where, kept, err := e.binSource(p.src, copied, "", func(w string) error { return e.setReceipt(ctx, c.id, "bin_path", w) })
		switch {
		case err != nil:
			// The verified copy is in place; the source stays too.
			c.res.Error = "the copy is in place, but the original could not go to the bin: " + err.Error()
		case len(kept) > 0:
			// What changed or appeared at the source since the copy stayed.
			c.res.Error = (&keptError{From: p.src, To: p.dst, Kept: kept}).Error()
		}
		c.res.Trash = where
		if err := e.setReceipt(ctx, c.id, "bin_path", where); err != nil {
			return err
		}
	}
	return nil
}

// carryBatch is carry of several items of one call, each decided and
// done on its own, with their receipts written together: all pending in
// one transaction before the first is moved, all settled in one after
// the last (the crash contract of each is carry's: Recover settles each
// pending receipt by what is on disk).
func (e *Engine) carryBatch(ctx context.Context, ps []plan, fail []error) []ItemResult {
	var paths []string
	for i, p := range ps {
		if fail[i] == nil {
			paths = append(paths, p.src, p.dst)
		}
	}
	unlock := e.lockPair(paths...)
	defer unlock()
	out := make([]ItemResult, len(ps))
	cs := make([]*carried, len(ps))
	var pending []*carried
	made := map[string]bool{}
	cc := e.newCallChecks(checkedOf(ctx))
	for i, p := range ps {
		if fail[i] != nil {
			out[i] = ItemResult{From: p.src, Path: p.dst}
			out[i].Outcome, out[i].Code, out[i].Error = itemFailure(fail[i])
			continue
		}
		c, err := e.carryPrepare(ctx, p, made, cc)
		cs[i] = &c
		if err != nil {
			cs[i] = nil
			out[i] = c.res
			out[i].Outcome, out[i].Code, out[i].Error = itemFailure(err)
			continue
		}
		pending = append(pending, &c)
	}
	if err := e.insertActions(ctx, pending); err != nil {
		for i, c := range cs {
			if c != nil {
				out[i] = c.res
				out[i].Outcome, out[i].Code, out[i].Error = itemFailure(err)
			}
		}
		return out
	}
	done := map[string]bool{}
	for i, c := range cs {
		if c == nil {
			continue
		}
		if err := ctx.Err(); err != nil {
			out[i] = c.res
			out[i].Outcome, out[i].Code, out[i].Error = ItemFailed, "cancelled", "not done: the call was stopped"
			continue
		}
		if err := e.carryDo(ctx, c); err != nil {
			c.res.ReceiptID = ""
			out[i] = c.res
			out[i].Outcome, out[i].Code, out[i].Error = itemFailure(err)
			continue
		}
		done[c.id] = true
		c.res.Outcome = ItemDone
		out[i] = c.res
	}
	if err := e.settleActions(ctx, pending, done); err != nil {
		for i, c := range cs {
			if c != nil && done[c.id] {
				out[i].Error = err.Error()
			}
		}
	}
	return out
}

// replaceToBin puts the file at dst, which an overwrite replaces, in the
// bin, its place there recorded in receipt id before it moves, so that a
// crash at any point leaves the file at dst or in the bin at a place the
// receipt names (Recover then takes it back). Where the bin chooses the
// place itself (the Recycle Bin), the receipt records first that the file
// is on its way there (step "replacing"), and Recover looks for it there.
func (e *Engine) replaceToBin(ctx context.Context, id, dst string) (string, error) {
	slot, err := reserveTrash(dst)
	if err != nil {
		return "", fmt.Errorf("put the file %s replaces in the bin: %w", dst, err)
	}
	column, value := "replaced_bin", slot.Where
	if value == "" {
		column, value = "step", stepReplacing
	}
	if err := e.setReceipt(ctx, id, column, value); err != nil {
		slot.release()
		return "", err
	}
	where, err := slot.put(dst)
	if err != nil {
		var kept *keptError
		if !errors.As(err, &kept) {
			return "", fmt.Errorf("put the file %s replaces in the bin: %w", dst, err)
		}
	}
	if where != slot.Where {
		if err := e.setReceipt(ctx, id, "replaced_bin", where); err != nil {
			return where, err
		}
	}
	return where, nil
}

// The steps a receipt records on the way: stepReplacing, its overwritten
// file is on its way to a bin that chooses its place there itself;
// stepCopied, the verified copy of a move across volumes is in place and
// the source is going to the bin.
const (
	stepReplacing = "replacing"
	stepCopied    = "copied"
)

// binSource puts in the bin what of src, the source of a move across
// volumes, was copied and verified (copied) and is still so, each file
// with a few tries for a file another program holds (removeCopied): a
// file changed or written there since the copy stays at src and is in
// kept, so the bin never holds a newer version than the destination.
// Where the bin's place is reserved (the freedesktop trash), the files
// go there as one item at their paths below it, and where is that item;
// the Recycle Bin takes them one by one, and where is the item only for
// a file moved alone.
//
// The place reserved in the bin is told to record before anything goes
// there (the receipt's bin_path), so that a start after a crash in the
// middle finds it: into is that place, given back by recovery, which
// puts what is still at src, as verified, in the same item.
func (e *Engine) binSource(src string, copied []copiedEntry, into string, record func(where string) error) (where string, kept []string, err error) {
	var slot trashSlot
	if into != "" {
		slot = reservedTrash(into)
	} else if slot, err = reserveTrash(src); err != nil {
		return "", nil, err
	}
	if slot.Where != "" && slot.Where != into && record != nil {
		if err := record(slot.Where); err != nil {
			slot.release()
			return "", nil, err
		}
	}
	n := 0
	dispose := func(p, rel string) error {
		_, err := e.Replacer.Retry(func() error {
			if slot.Where == "" {
				w, err := trashItem(p)
				if err == nil && rel == "." {
					where = w
				}
				return err
			}
			to := filepath.Join(slot.Where, rel)
			if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
				return err
			}
			return moveTree(p, to)
		})
		if n++; err == nil && e.seams.disposed != nil {
			e.seams.disposed(n)
		}
		return err
	}
	kept, err = removeCopied(src, copied, dispose)
	if slot.Where != "" {
		if _, lerr := os.Lstat(slot.Where); lerr == nil {
			where = slot.Where
		} else {
			slot.release() // nothing went there
		}
	}
	return where, kept, err
}

// putBackReplaced takes the file an overwrite put in the bin back to dst
// when the operation failed after it.
func (e *Engine) putBackReplaced(dst, where string, err error) error {
	if where == "" {
		return err
	}
	if rerr := restoreFromTrash(where, dst); rerr != nil {
		return errors.Join(err, fmt.Errorf("the file it replaced is in the bin at %s: %w", where, rerr))
	}
	return err
}

// destination checks what is at p.dst: nothing, or a file the call may
// replace (overwrite, or expected_sha256 of it). It returns the replaced
// file's SHA-256.
func (e *Engine) destination(p plan) (pre string, existed bool, err error) {
	di, err := lstatItem(p.dst)
	if errors.Is(err, fs.ErrNotExist) {
		if p.expect.Set && !p.expect.Null {
			return "", false, &ConflictError{Path: p.dst, Reason: ReasonMissing, Replacement: -1, Expected: p.expect.String(),
				Message: "expected_sha256 names a file to replace, but nothing is there"}
		}
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("look at %s: %w", p.dst, err)
	}
	si, err := os.Lstat(p.src)
	if err == nil && os.SameFile(si, di) {
		// The same file under a name that differs in case only.
		return "", false, nil
	}
	if !di.Mode().IsRegular() || err == nil && si.IsDir() {
		return "", false, &ConflictError{Path: p.dst, Reason: ReasonExists, Replacement: -1,
			Message: fmt.Sprintf("a %s is already there; nothing was done (Hearth replaces a file with a file only, never a folder)", typeOf(di.Mode()))}
	}
	sha, _, err := fileHash(p.dst)
	if err != nil {
		return "", false, fmt.Errorf("read %s: %w", p.dst, err)
	}
	ce := &ConflictError{Path: p.dst, Replacement: -1, Actual: &sha, Expected: p.expect.String()}
	switch {
	case p.expect.Set && p.expect.Null:
		ce.Reason, ce.Message = ReasonExists, "a file is already there; nothing was done"
		return "", false, ce
	case p.expect.Set && p.expect.SHA != sha:
		ce.Reason, ce.Message = ReasonHashMismatch, "the file there is not expected_sha256; nothing was done; re-read it"
		return "", false, ce
	case !p.expect.Set && !p.overwrite:
		ce.Reason, ce.Message = ReasonExists, "a file is already there; nothing was done (give overwrite: true, or its expected_sha256, to replace it; it goes to the bin)"
		return "", false, ce
	}
	return sha, true, nil
}

// fileHead is the start of the file at p, for the check of ordinary
// writes (nil when it cannot be read).
func fileHead(p string) []byte {
	f, err := openRead(p)
	if err != nil {
		return nil
	}
	defer f.Close()
	b := make([]byte, 4096)
	n, _ := f.Read(b)
	return head(b[:n])
}

// mkdir makes the folder p.dst, with its parents. A folder already there
// is unchanged (no receipt).
func (e *Engine) mkdir(ctx context.Context, p plan) (ItemResult, error) {
	res := ItemResult{Path: p.dst, Type: TypeDir}
	unlock := e.lockPair(p.dst)
	defer unlock()
	if info, err := lstatItem(p.dst); err == nil {
		if info.IsDir() {
			res.Outcome = ItemUnchanged
			return res, nil
		}
		return res, &ConflictError{Path: p.dst, Reason: ReasonExists, Replacement: -1, Message: fmt.Sprintf("a %s is already there", typeOf(info.Mode()))}
	}
	if err := e.checkOrdinary(checkedOf(ctx), p.dst, leaves{folder: true}); err != nil {
		return res, err
	}
	// from_path records the topmost folder it makes, so its undo removes
	// the parents it made too (when they are empty).
	p.src = p.dst
	for dir := filepath.Dir(p.src); dir != p.src && e.Roots.rootOf(dir) != ""; dir = filepath.Dir(dir) {
		if _, err := os.Lstat(dir); err == nil {
			break
		}
		p.src = dir
	}
	id := newReceiptID()
	fp := treePrefix + emptyTree
	if err := e.insertAction(ctx, id, p, false, "", fp, true); err != nil {
		return res, err
	}
	if err := os.MkdirAll(p.dst, 0o755); err != nil {
		return res, errors.Join(err, e.voidAction(ctx, id))
	}
	if err := e.commitAction(ctx, id, p.undoes); err != nil {
		return res, err
	}
	res.Outcome, res.ReceiptID = ItemDone, id
	return res, nil
}

// emptyTree is the fingerprint of an empty folder after treePrefix.
const emptyTree = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// rmdir removes the empty folder p.dst (the undo of a mkdir).
func (e *Engine) rmdir(ctx context.Context, p plan) (ItemResult, error) {
	res := ItemResult{Path: p.dst, Type: TypeDir}
	unlock := e.lockPair(p.dst)
	defer unlock()
	des, err := os.ReadDir(p.dst)
	if err != nil {
		return res, err
	}
	if len(des) > 0 {
		return res, &ConflictError{Path: p.dst, Reason: ReasonChanged, Replacement: -1, Message: "the folder is no longer empty; it was left alone"}
	}
	id := newReceiptID()
	if err := e.insertAction(ctx, id, p, true, treePrefix+emptyTree, "", true); err != nil {
		return res, err
	}
	if err := os.Remove(p.dst); err != nil {
		return res, errors.Join(err, e.voidAction(ctx, id))
	}
	// The parents its mkdir made go too, while they are empty.
	if p.src != "" && p.src != p.dst && hasPathPrefix(p.dst, p.src, filepath.Separator, pathFold) {
		for dir := filepath.Dir(p.dst); ; dir = filepath.Dir(dir) {
			if os.Remove(dir) != nil || pathKey(dir) == pathKey(p.src) {
				break
			}
		}
	}
	if err := e.commitAction(ctx, id, p.undoes); err != nil {
		return res, err
	}
	res.Outcome, res.ReceiptID = ItemDone, id
	return res, nil
}

// trash moves p.dst to the bin. Its place there is reserved and recorded
// before the move where the bin lets Hearth choose it (freedesktop), so a
// crash leaves the item in its place or in the bin with a receipt that
// says where.
func (e *Engine) trash(ctx context.Context, p plan) (ItemResult, error) {
	res := ItemResult{Path: p.dst}
	unlock := e.lockPair(p.dst)
	defer unlock()
	fp, dir, files, err := fingerprint(p.dst)
	if errors.Is(err, fs.ErrNotExist) {
		return res, &InputError{Field: "path", Message: fmt.Sprintf("%s does not exist", p.dst)}
	}
	if err != nil {
		return res, err
	}
	res.Type, res.Files, res.SHA256 = itemType(fp, dir), files, fileSHA(fp, dir)
	if err := e.checkOrdinary(checkedOf(ctx), p.dst, leaves{folder: dir, link: res.Type == TypeSymlink}); err != nil {
		return res, err
	}
	slot, err := reserveTrash(p.dst)
	if err != nil {
		return res, err
	}
	id := newReceiptID()
	p.bin = slot.Where
	if err := e.insertAction(ctx, id, p, true, fp, "", dir); err != nil {
		slot.release()
		return res, err
	}
	var where string
	_, err = e.Replacer.Retry(func() error {
		w, err := slot.put(p.dst)
		where = w
		return err
	})
	var kept *keptError
	if errors.As(err, &kept) {
		// In the bin; what changed or appeared meanwhile stayed in place.
		res.Error = kept.Error()
	} else if err != nil {
		return res, errors.Join(err, e.voidAction(ctx, id))
	}
	if where != slot.Where {
		if err := e.setReceipt(ctx, id, "bin_path", where); err != nil {
			return res, err
		}
	}
	if err := e.commitAction(ctx, id, p.undoes); err != nil {
		return res, err
	}
	res.Outcome, res.ReceiptID, res.Trash = ItemDone, id, where
	if where == "" {
		res.Trash = binName()
	}
	return res, nil
}

// restore takes p.bin back from the bin to p.dst (the undo of a trash).
func (e *Engine) restore(ctx context.Context, p plan, want string) (ItemResult, error) {
	res := ItemResult{From: p.bin, Path: p.dst}
	unlock := e.lockPair(p.dst)
	defer unlock()
	if p.bin == "" || !inTrash(p.bin) {
		return res, &ConflictError{Path: p.dst, Reason: ReasonMissing, Replacement: -1,
			Message: "Hearth does not know where in the " + binName() + " it is; restore it from the " + binName() + " yourself"}
	}
	if _, err := os.Lstat(p.dst); err == nil {
		return res, &ConflictError{Path: p.dst, Reason: ReasonExists, Replacement: -1, Message: "something else is at its place now; it was left in the " + binName()}
	}
	fp, dir, files, err := fingerprint(p.bin)
	if errors.Is(err, fs.ErrNotExist) {
		return res, &ConflictError{Path: p.dst, Reason: ReasonMissing, Replacement: -1, Message: "it is no longer in the " + binName()}
	}
	if err != nil {
		return res, err
	}
	if want != "" && fp != want {
		return res, &ConflictError{Path: p.dst, Reason: ReasonChanged, Replacement: -1, Message: "the item in the " + binName() + " changed since; it was left there"}
	}
	res.Type, res.Files = itemType(fp, dir), files
	p.src = p.bin
	id := newReceiptID()
	if err := e.insertAction(ctx, id, p, false, "", fp, dir); err != nil {
		return res, err
	}
	var kept *keptError
	if err := restoreFromTrash(p.bin, p.dst); errors.As(err, &kept) {
		res.Error = kept.Error()
	} else if err != nil {
		return res, errors.Join(err, e.voidAction(ctx, id))
	}
	if err := e.commitAction(ctx, id, p.undoes); err != nil {
		return res, err
	}
	res.Outcome, res.ReceiptID = ItemDone, id
	return res, nil
}

// binName is what the system calls its bin.
func binName() string {
	if pathFold {
		return "Recycle Bin"
	}
	return "trash"
}

// insertActions records the receipts of carried items as pending, in
// one transaction.
func (e *Engine) insertActions(ctx context.Context, cs []*carried) error {
	if len(cs) == 0 {
		return nil
	}
	err := e.DB.InTx(ctx, func(tx *sql.Tx) error {
		stmts := map[string]*sql.Stmt{}
		defer func() {
			for _, st := range stmts {
				st.Close()
			}
		}()
		ptx := preparedTx{tx: tx, stmts: stmts}
		// A batch is up to 1,000 rows: they go receiptsPerInsert to a
		// statement, and each folder is recorded once.
		touched := map[string]bool{}
		rows := make([]receiptRow, 0, receiptsPerInsert)
		for i, c := range cs {
			r := e.newReceiptRow(ctx, c.id, c.p, c.existed, c.pre, c.fp, c.dir)
			if err := touchDirTx(ctx, ptx, filepath.Dir(c.p.dst), r.created, touched); err != nil {
				return err
			}
			if rows = append(rows, r); len(rows) == receiptsPerInsert || i == len(cs)-1 {
				if err := insertReceiptsTx(ctx, ptx, rows); err != nil {
					return err
				}
				rows = rows[:0]
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record the receipts of %d items: %w", len(cs), err)
	}
	return nil
}

// settleActions commits the receipts of the carried items done and voids
// the others, in one transaction.
func (e *Engine) settleActions(ctx context.Context, cs []*carried, done map[string]bool) error {
	if len(cs) == 0 {
		return nil
	}
	err := e.DB.InTx(ctx, func(tx *sql.Tx) error {
		at := e.now().UnixMilli()
		stmts := map[string]*sql.Stmt{}
		defer func() {
			for _, st := range stmts {
				st.Close()
			}
		}()
		ptx := preparedTx{tx: tx, stmts: stmts}
		// The done in one statement, the others in another: the ids go as
		// one JSON array each.
		var committed, void []string
		for _, c := range cs {
			if done[c.id] {
				committed = append(committed, c.id)
			} else {
				void = append(void, c.id)
			}
		}
		settle := func(q string, ids []string, args ...any) error {
			if len(ids) == 0 {
				return nil
			}
			list, err := json.Marshal(ids)
			if err != nil {
				return err
			}
			_, err = tx.ExecContext(ctx, q, append(args, string(list))...)
			return err
		}
		if err := settle(`UPDATE fs_receipts SET state = 'committed', committed_at = ? WHERE id IN (SELECT value FROM json_each(?))`, committed, at); err != nil {
			return err
		}
		if err := settle(`UPDATE fs_receipts SET state = 'void' WHERE id IN (SELECT value FROM json_each(?))`, void); err != nil {
			return err
		}
		for _, c := range cs {
			if done[c.id] && c.p.undoes != "" {
				if _, err := ptx.ExecContext(ctx, `UPDATE fs_receipts SET undone_at = ?, undone_by = ? WHERE id = ?`, at, c.id, c.p.undoes); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("the items are moved, but their receipts could not be committed (the next start settles them): %w", err)
	}
	e.changed()
	return nil
}

// insertAction records a file operation's receipt as pending.
func (e *Engine) insertAction(ctx context.Context, id string, p plan, existed bool, pre, post string, dir bool) error {
	err := e.DB.InTx(ctx, func(tx *sql.Tx) error {
		return e.insertActionTx(ctx, preparedTx{tx: tx}, id, p, existed, pre, post, dir)
	})
	if err != nil {
		return fmt.Errorf("record receipt for %s: %w", p.dst, err)
	}
	return nil
}

// preparedTx runs statements in tx, each prepared once when stmts is set.
type preparedTx struct {
	tx    *sql.Tx
	stmts map[string]*sql.Stmt
}

func (p preparedTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if p.stmts == nil {
		return p.tx.ExecContext(ctx, query, args...)
	}
	st, ok := p.stmts[query]
	if !ok {
		var err error
		if st, err = p.tx.PrepareContext(ctx, query); err != nil {
			return nil, err
		}
		p.stmts[query] = st
	}
	return st.ExecContext(ctx, args...)
}

// insertActionTx inserts one pending receipt in tx, and records the
// folder it may leave a temporary copy in (fs_touched_dirs).
func (e *Engine) insertActionTx(ctx context.Context, tx preparedTx, id string, p plan, existed bool, pre, post string, dir bool) error {
	r := e.newReceiptRow(ctx, id, p, existed, pre, post, dir)
	if err := touchDirTx(ctx, tx, filepath.Dir(p.dst), r.created, nil); err != nil {
		return err
	}
	return insertReceiptsTx(ctx, tx, []receiptRow{r})
}

// receiptsPerInsert is how many pending receipts one INSERT writes: a
// statement per row costs a batch of 1,000 more than the rows do.
const receiptsPerInsert = 100

// receiptRow is one pending receipt of a file operation, as inserted.
type receiptRow struct {
	created int64
	args    []any
}

// newReceiptRow is the pending receipt id of p.
func (e *Engine) newReceiptRow(ctx context.Context, id string, p plan, existed bool, pre, post string, dir bool) receiptRow {
	created := e.now().UnixMilli()
	return receiptRow{created: created, args: []any{
		id, p.route, p.op, p.dst, existed, nullIf(pre == "", pre), nullIf(post == "", post), nullIf(p.undoes == "", p.undoes),
		created, nullIf(p.operator != "" || futureOf(ctx) == "", futureOf(ctx)), nullIf(p.operator == "", p.operator),
		nullIf(p.batch == "", p.batch), p.action, nullIf(p.src == "", p.src), dir, nullIf(p.bin == "", p.bin),
		nullIf(p.callBatch == "", p.callBatch)}}
}

// insertReceiptsTx inserts rows in one statement.
func insertReceiptsTx(ctx context.Context, tx preparedTx, rows []receiptRow) error {
	const one = `(?, ?, ?, ?, ?, ?, ?, 0, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	var q strings.Builder
	q.WriteString(`INSERT INTO fs_receipts(id, route, op, path, existed_before, pre_sha256, post_sha256, prior_size, undoes, state,
	   created_at, future_id, operator, batch, action, from_path, is_dir, bin_path, call_batch) VALUES `)
	args := make([]any, 0, len(rows)*len(rows[0].args))
	for i, r := range rows {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString(one)
		args = append(args, r.args...)
	}
	_, err := tx.ExecContext(ctx, q.String(), args...)
	return err
}

// touchDirTx records dir as a folder a file operation may leave a
// temporary copy in (the start-up sweep looks there), unless touched (nil,
// or the folders tx has recorded) has it.
func touchDirTx(ctx context.Context, tx preparedTx, dir string, at int64, touched map[string]bool) error {
	if touched[dir] {
		return nil
	}
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO fs_touched_dirs(dir, touched_at) VALUES (?, ?)
		 ON CONFLICT(dir) DO UPDATE SET touched_at = excluded.touched_at`,
		dir, at); err != nil {
		return err
	}
	if touched != nil {
		touched[dir] = true
	}
	return nil
}

// setReceipt records one step of a pending file operation.
func (e *Engine) setReceipt(ctx context.Context, id, column, value string) error {
	switch column {
	case "replaced_bin", "bin_path", "step":
	default:
		return fmt.Errorf("fsops: no receipt column %q", column)
	}
	if _, err := e.DB.W.ExecContext(ctx, `UPDATE fs_receipts SET `+column+` = ? WHERE id = ?`, nullIf(value == "", value), id); err != nil {
		return fmt.Errorf("record a step of receipt %s (the next start settles it): %w", id, err)
	}
	return nil
}

func (e *Engine) commitAction(ctx context.Context, id, undoes string) error {
	err := e.DB.InTx(ctx, func(tx *sql.Tx) error { return commitReceipt(ctx, tx, id, undoes, e.now().UnixMilli()) })
	if err != nil {
		return fmt.Errorf("the change is done, but its receipt %s could not be committed (the next start settles it): %w", id, err)
	}
	e.changed()
	return nil
}

func (e *Engine) voidAction(ctx context.Context, id string) error {
	if _, err := e.DB.W.ExecContext(ctx, `UPDATE fs_receipts SET state = 'void' WHERE id = ?`, id); err != nil {
		return fmt.Errorf("void receipt %s: %w", id, err)
	}
	return nil
}

// sameOrUnder is p at or below dir.
func sameOrUnder(p, dir string) bool {
	return pathKey(p) == pathKey(dir) || hasPathPrefix(p, dir, filepath.Separator, pathFold)
}
