package permits

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"

	"github.com/hearth-dev/hearth/internal/callpath"
	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/web/changes"
	"github.com/hearth-dev/hearth/web/ui"
)

// The card of a file operation (fs.move, copy, trash, mkdir), of one item
// or a batch of up to 1,000, says it in one sentence — "move 37 files
// from Downloads to Documents\Invoices, including setup.exe" — with the
// folders named as the person knows them and the items that made it ask
// named; every item, from where to where and why it asks when it does, is
// under Details. It is computed from the permit's exact input and the
// items governance found asking (govern.Permit.Asks), never stored apart
// from them.

// fileOpVerbs are the file operations' verbs, completing "ChatGPT wants
// to …", by primitive.
var fileOpVerbs = map[string]string{"fs.move": "move", "fs.copy": "copy", "fs.trash": "put", "fs.mkdir": "make"}

// maxNamed is how many of the items that ask the sentence names before
// "and N more".
const maxNamed = 3

// Batch is a file operation's card.
type Batch struct {
	// Sentence completes "ChatGPT wants to …".
	Sentence string
	// Why says, for the main line, why it asks: the items that ask and
	// what each would do, the first few of them ("" when none is known).
	Why string
	// Items are every item of the call, in its order.
	Items []BatchItem
	// Asking counts the items that ask.
	Asking int
}

// BatchItem is one item of a file operation, as Details lists it.
type BatchItem struct {
	// From is the item as the call named it (the folder made, for
	// mkdir); To where it would be (its full path), or "" for the bin.
	From, To string
	// Folder: the item is a folder.
	Folder bool
	// Asks says why the item asks ("" when it does not), completing "it
	// would …"; In names the file in a folder item that does.
	Asks, In string
}

// fileOpInput is what the card reads of a file operation's input.
type fileOpInput struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Path  string `json:"path"`
	Items []struct {
		From string `json:"from"`
		To   string `json:"to"`
		Path string `json:"path"`
	} `json:"items"`
}

// BatchOf is the card of permit p when it is a file operation's, read
// with this computer's folders and file system. It reads the disk (up to
// an item's folder-ness each): a render computes it once per permit.
func BatchOf(p govern.Permit) (Batch, bool) {
	names := ui.ThisPC()
	b, ok := NewBatch(p.Primitive, p.Input, p.Asks, names, isDir, changes.TrashName())
	if ok {
		b.fallBackWhy(names, p.Said, p.Subject)
	}
	return b, ok
}

// fallBackWhy gives the card the permit's own reason, what the call
// would do (said) to what (subject), when it knows no item that asks: a
// permit made before the items that ask were kept, or one that kept none.
// Without it the card would say what the call does and never why Hearth
// asks.
func (b *Batch) fallBackWhy(names ui.Folders, said, subject string) {
	if b.Why != "" || said == "" {
		return
	}
	label := "one of the items"
	switch {
	case subject != "":
		label = names.Base(subject)
	case len(b.Items) == 1:
		label = names.Base(b.Items[0].From)
	}
	b.Why = label + ": it would " + said + "."
}

// isDir reports whether a folder is at path now.
func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// NewBatch is the card of a call of primitive with input, whose items
// asks ask: folders named by names, a path's folder-ness by dir, the bin
// by trash ("Recycle Bin"). It is false for a primitive that is not a
// file operation, or an input that is not one.
func NewBatch(primitive, input string, asks []callpath.Ask, names ui.Folders, dir func(string) bool, trash string) (Batch, bool) {
	verb, ok := fileOpVerbs[primitive]
	if !ok {
		return Batch{}, false
	}
	var in fileOpInput
	if json.Unmarshal([]byte(input), &in) != nil {
		return Batch{}, false
	}
	type item struct{ from, to string }
	items := make([]item, 0, max(len(in.Items), 1))
	if len(in.Items) == 0 {
		items = append(items, item{in.From + in.Path, in.To})
	}
	tos := map[string]int{}
	for _, it := range in.Items {
		items = append(items, item{it.From + it.Path, it.To})
		tos[it.To]++
	}
	mkdir, trashing := primitive == "fs.mkdir", primitive == "fs.trash"
	var b Batch
	var froms, intos, named []string
	files, folders := 0, 0
	for _, it := range items {
		bi := BatchItem{From: it.from}
		name := names.Base(it.from)
		switch {
		case mkdir:
			bi.Folder = true
			froms = append(froms, names.Dir(it.from))
		case trashing:
			bi.Folder = dir(it.from)
			froms = append(froms, names.Dir(it.from))
		default:
			bi.Folder = dir(it.from)
			froms = append(froms, names.Dir(it.from))
			// Where it goes, as fs decides: into a folder the call
			// names as one (a trailing separator, or the "to" of several
			// items) or that is there now, else to that new path.
			// Its folders are named as fs resolves them ("..", "."),
			// never by a prefix that ".." walks out of.
			into, as := names.Dir(it.to), names.Base(it.to)
			if strings.HasSuffix(it.to, "/") || strings.HasSuffix(it.to, names.Sep()) || tos[it.to] > 1 || dir(it.to) {
				into, as = names.Path(it.to), name
			}
			intos = append(intos, into)
			bi.To = join(names, into, as)
		}
		if bi.Folder {
			folders++
		} else {
			files++
		}
		b.Items = append(b.Items, bi)
	}
	// The items that ask, each once, in the call's order.
	seen := map[int]bool{}
	var whys []string
	for _, a := range asks {
		if a.Item < 0 || a.Item >= len(b.Items) || seen[a.Item] {
			continue
		}
		seen[a.Item] = true
		bi := &b.Items[a.Item]
		bi.Asks = a.Said
		label := names.Base(bi.From)
		if bi.Folder && !names.Same(a.Path, bi.From) && !names.Same(a.Path, bi.To) {
			bi.In = names.Base(a.Path)
			label += " (which holds " + bi.In + ")"
		}
		b.Asking++
		if len(named) < maxNamed {
			named = append(named, label)
			whys = append(whys, label+": it would "+a.Said)
		}
	}

	n := len(b.Items)
	what := countWords(files, folders)
	if n == 1 {
		what = names.Base(items[0].from)
	}
	var s strings.Builder
	s.WriteString(verb + " ")
	switch {
	case mkdir && n == 1:
		s.WriteString("the folder " + what + " in " + folderWords(names, froms))
	case mkdir:
		s.WriteString(what + " in " + folderWords(names, froms))
	case trashing:
		s.WriteString(what + " from " + folderWords(names, froms) + " in the " + trash)
	case n == 1 && names.Same(froms[0], intos[0]):
		// A rename: a move within its folder.
		if verb == "move" {
			s.Reset()
			s.WriteString("rename ")
		}
		s.WriteString(what + " to " + names.Base(b.Items[0].To) + " in " + names.Name(froms[0]))
	default:
		s.WriteString(what + " from " + folderWords(names, froms) + " to " + folderWords(names, intos))
		if n == 1 && names.Base(b.Items[0].To) != what {
			s.WriteString(" as " + names.Base(b.Items[0].To))
		}
	}
	if n > 1 && len(named) > 0 {
		s.WriteString(", including " + listWords(named, b.Asking-len(named)))
	}
	b.Sentence = s.String()
	if len(whys) > 0 {
		b.Why = strings.Join(whys, "; ")
		if more := b.Asking - len(whys); more > 0 {
			b.Why += "; and " + plural(more, "more item") + " (each is under Details)"
		}
		b.Why += "."
	}
	return b, true
}

// Count says how many items there are and how many of them ask: "37
// items, 1 of them asks".
func (b Batch) Count() string {
	s := plural(len(b.Items), "item")
	switch {
	case b.Asking == 1 && len(b.Items) == 1:
		s += ", which asks"
	case b.Asking == 1:
		s += ", 1 of them asks"
	case b.Asking > 1:
		s += ", " + strconv.Itoa(b.Asking) + " of them ask"
	}
	return s
}

// join is folder/name with the folders' separator.
func join(names ui.Folders, folder, name string) string {
	if strings.HasSuffix(folder, names.Sep()) || strings.HasSuffix(folder, "/") {
		return folder + name
	}
	return folder + names.Sep() + name
}

// folderWords names the folder the items come from or go to: its name
// when they share one, "3 folders in Documents\Sorted" when they share
// a parent, "3 folders" otherwise.
func folderWords(names ui.Folders, dirs []string) string {
	common, same := names.Common(dirs)
	if same {
		return names.Name(common)
	}
	var distinct []string
	for _, d := range dirs {
		known := false
		for _, e := range distinct {
			if names.Same(d, e) {
				known = true
				break
			}
		}
		if !known {
			distinct = append(distinct, d)
		}
	}
	words := plural(len(distinct), "folder")
	if common != "" && names.Dir(common) != common {
		words += " in " + names.Name(common)
	}
	return words
}

// countWords says how many files and folders: "37 files", "1 folder",
// "3 files and 2 folders".
func countWords(files, folders int) string {
	switch {
	case folders == 0:
		return plural(files, "file")
	case files == 0:
		return plural(folders, "folder")
	}
	return plural(files, "file") + " and " + plural(folders, "folder")
}

// listWords lists names ("a", "a and b", "a, b and c"), and how many
// more there are ("a, b, c and 4 more").
func listWords(names []string, more int) string {
	if more > 0 {
		return strings.Join(names, ", ") + " and " + strconv.Itoa(more) + " more"
	}
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}
