package uia

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Node is one normalized element of a snapshot. Its locator ("n17") names
// it within that one answer only: a later call walks the UI again.
type Node struct {
	Locator      string   `json:"locator"`
	Name         string   `json:"name"`
	AutomationID string   `json:"automation_id"`
	ClassName    string   `json:"class_name"`
	ControlType  string   `json:"control_type"`
	ProcessID    int      `json:"process_id"`
	HWND         uint64   `json:"hwnd,omitempty"`
	Enabled      bool     `json:"enabled"`
	Offscreen    bool     `json:"offscreen"`
	Focused      bool     `json:"focused"`
	Bounds       Bounds   `json:"bounds"`
	Patterns     []string `json:"patterns"`
	Value        *string  `json:"value,omitempty"`
	Children     []*Node  `json:"children,omitempty"`
	// ChildrenTruncated: this node has children that are not listed
	// (max_depth reached, or more children than max_nodes allowed).
	ChildrenTruncated bool `json:"children_truncated,omitempty"`
}

// ControlTypes are UI Automation's control type names, indexed by control
// type id minus 50000 (UIA_ButtonControlTypeId = 50000 …).
var ControlTypes = []string{
	"Button", "Calendar", "CheckBox", "ComboBox", "Edit", "Hyperlink", "Image", "ListItem", "List", "Menu",
	"MenuBar", "MenuItem", "ProgressBar", "RadioButton", "ScrollBar", "Slider", "Spinner", "StatusBar", "Tab", "TabItem",
	"Text", "ToolBar", "ToolTip", "Tree", "TreeItem", "Custom", "Group", "Thumb", "DataGrid", "DataItem",
	"Document", "SplitButton", "Window", "Pane", "Header", "HeaderItem", "Table", "TitleBar", "Separator", "SemanticZoom",
	"AppBar",
}

// ControlTypeName returns the name of a UI Automation control type id.
func ControlTypeName(id int) string {
	if i := id - 50000; i >= 0 && i < len(ControlTypes) {
		return ControlTypes[i]
	}
	return "Unknown"
}

// canonicalControlType maps "ControlType.Button", "button" or "Button" to
// "Button"; an unknown or empty name becomes "Unknown", or stays as given
// (cleaned) when it is a plausible name.
func canonicalControlType(s string) string {
	s = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), "ControlType."))
	for _, c := range ControlTypes {
		if strings.EqualFold(c, s) {
			return c
		}
	}
	if s == "" {
		return "Unknown"
	}
	return clean(s, 64)
}

// canonicalPattern maps "InvokePattern", "Invoke", "invoke" or
// "expand_collapse" to lower snake case ("invoke", "expand_collapse").
func canonicalPattern(s string) string {
	s = strings.TrimSuffix(strings.TrimSpace(s), "Pattern")
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 && !strings.HasSuffix(b.String(), "_") {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		if r == ' ' || r == '-' {
			r = '_'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// clean replaces control characters (newlines included) with spaces,
// collapses runs of white space, trims, and cuts the text to at most max
// runes (marking a cut with "…"). max <= 0 keeps the whole text.
func clean(s string, max int) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	var b strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsControl(r) || unicode.IsSpace(r) {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	out := b.String()
	if max > 0 && utf8.RuneCountInString(out) > max {
		r := []rune(out)
		out = string(r[:max-1]) + "…"
	}
	return out
}

// normalize turns provider properties into a node (without locator and
// children). maxText bounds names and values.
func normalize(p Props, maxText int) Node {
	n := Node{
		Name:         clean(p.Name, maxText),
		AutomationID: clean(p.AutomationID, maxText),
		ClassName:    clean(p.ClassName, maxText),
		ControlType:  canonicalControlType(p.ControlType),
		ProcessID:    p.ProcessID,
		HWND:         p.HWND,
		Enabled:      p.Enabled,
		Offscreen:    p.Offscreen,
		Focused:      p.Focused,
		Bounds:       p.Bounds,
		Patterns:     []string{},
	}
	if n.Bounds.W < 0 {
		n.Bounds.W = 0
	}
	if n.Bounds.H < 0 {
		n.Bounds.H = 0
	}
	for _, pat := range p.Patterns {
		if c := canonicalPattern(pat); c != "" && !slices.Contains(n.Patterns, c) {
			n.Patterns = append(n.Patterns, c)
		}
	}
	slices.Sort(n.Patterns)
	if p.Value != nil && !p.Password {
		v := clean(*p.Value, maxText)
		n.Value = &v
	}
	return n
}

// has reports whether the node supports pattern.
func (n *Node) has(pattern string) bool { return slices.Contains(n.Patterns, pattern) }

// Target selects elements by exact properties: automation_id
// case-sensitively, name case-insensitively, control_type by its
// canonical name. A nil field matches anything.
type Target struct {
	AutomationID *string `json:"automation_id,omitempty"`
	Name         *string `json:"name,omitempty"`
	ControlType  *string `json:"control_type,omitempty"`
}

// Empty reports whether the target constrains nothing.
func (t *Target) Empty() bool {
	return t == nil || (t.AutomationID == nil && t.Name == nil && t.ControlType == nil)
}

// matches compares against the element's full (untrimmed) properties.
func (t *Target) matches(p Props) bool {
	if t.AutomationID != nil && clean(p.AutomationID, 0) != *t.AutomationID {
		return false
	}
	if t.Name != nil && !strings.EqualFold(clean(p.Name, 0), strings.TrimSpace(*t.Name)) {
		return false
	}
	if t.ControlType != nil && canonicalControlType(p.ControlType) != canonicalControlType(*t.ControlType) {
		return false
	}
	return true
}
