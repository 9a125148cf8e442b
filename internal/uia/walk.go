package uia

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Bounds of a walk (docs/DESIGN.md, "UI Automation").
const (
	DefaultMaxDepth = 6
	MaxDepth        = 12
	DefaultMaxNodes = 500
	MaxNodes        = 5000
)

// Reasons a walk stopped early, reported in truncated_by.
const (
	byDepth    = "max_depth"
	byNodes    = "max_nodes"
	byDeadline = "deadline"
)

// walked is one element read by a walk.
type walked struct {
	node   *Node
	ref    Ref
	props  Props
	depth  int
	parent *walked
}

// walk reads the tree under roots breadth-first, so that a bound cuts the
// deepest and last parts off first, and numbers nodes in that order: n1 is
// the first root. Everything it reads is kept for matching and released by
// release.
type walk struct {
	p        Provider
	ctx      context.Context
	maxDepth int
	maxNodes int
	maxText  int
	deadline time.Time

	all   []*walked
	refs  []Ref
	roots []*Node
	// truncatedBy lists the bounds that cut the walk, in the order hit.
	truncatedBy []string
	// unexpandedFrom is the first node whose children were not read
	// because max_nodes or the deadline stopped the walk; every later node
	// (in locator order) was not expanded either.
	unexpandedFrom string
	// skipped counts elements that vanished while being read.
	skipped int
}

func (w *walk) cut(reason string) {
	for _, r := range w.truncatedBy {
		if r == reason {
			return
		}
	}
	w.truncatedBy = append(w.truncatedBy, reason)
}

func (w *walk) release() {
	for _, r := range w.refs {
		w.p.Release(r)
	}
	w.refs = nil
}

// expired reports whether the per-call deadline passed; a cancelled
// context is an error.
func (w *walk) expired() (bool, error) {
	if err := w.ctx.Err(); err != nil {
		return false, err
	}
	return time.Now().After(w.deadline), nil
}

// add reads r's properties and appends it; a vanished element is skipped.
func (w *walk) add(r Ref, parent *walked) (*walked, error) {
	w.refs = append(w.refs, r)
	props, err := w.p.Props(r)
	if errors.Is(err, ErrGone) {
		w.skipped++
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read element: %w", err)
	}
	n := normalize(props, w.maxText)
	n.Locator = fmt.Sprintf("n%d", len(w.all)+1)
	e := &walked{node: &n, ref: r, props: props, parent: parent}
	if parent != nil {
		e.depth = parent.depth + 1
		parent.node.Children = append(parent.node.Children, &n)
	} else {
		w.roots = append(w.roots, &n)
	}
	w.all = append(w.all, e)
	return e, nil
}

// run walks from roots.
func (w *walk) run(roots []Ref) error {
	var queue []*walked
	for i, r := range roots {
		if len(w.all) >= w.maxNodes {
			for _, rest := range roots[i:] {
				w.p.Release(rest)
			}
			w.cut(byNodes)
			break
		}
		e, err := w.add(r, nil)
		if err != nil {
			for _, rest := range roots[i+1:] {
				w.p.Release(rest)
			}
			return err
		}
		if e != nil {
			queue = append(queue, e)
		}
	}
	for len(queue) > 0 {
		e := queue[0]
		if late, err := w.expired(); err != nil {
			return err
		} else if late {
			w.stop(byDeadline, e)
			return nil
		}
		if e.depth >= w.maxDepth {
			// Probe for one child, so the node says whether it has more.
			kids, more, err := w.p.Children(e.ref, 1)
			for _, k := range kids {
				w.p.Release(k)
			}
			if err == nil && (len(kids) > 0 || more) {
				e.node.ChildrenTruncated = true
				w.cut(byDepth)
			}
			queue = queue[1:]
			continue
		}
		room := w.maxNodes - len(w.all)
		if room <= 0 {
			w.stop(byNodes, e)
			return nil
		}
		kids, more, err := w.p.Children(e.ref, room)
		if errors.Is(err, ErrGone) {
			w.skipped++
			queue = queue[1:]
			continue
		}
		if err != nil {
			return fmt.Errorf("read children of %s: %w", e.node.Locator, err)
		}
		if more {
			e.node.ChildrenTruncated = true
			w.cut(byNodes)
		}
		queue = queue[1:]
		for i, k := range kids {
			c, err := w.add(k, e)
			if err != nil {
				for _, rest := range kids[i+1:] {
					w.p.Release(rest)
				}
				return err
			}
			if c != nil {
				queue = append(queue, c)
			}
		}
	}
	return nil
}

// stop ends the walk at e, which (like every node after it) keeps its
// children unread.
func (w *walk) stop(reason string, e *walked) {
	w.cut(reason)
	w.unexpandedFrom = e.node.Locator
}

// find returns the walked elements matching t, in locator order.
func (w *walk) find(t *Target) []*walked {
	var out []*walked
	for _, e := range w.all {
		if t.matches(e.props) {
			out = append(out, e)
		}
	}
	return out
}

// Truncation is how a bounded walk ended, in every ui result.
type Truncation struct {
	NodeCount   int      `json:"node_count"`
	MaxDepth    int      `json:"max_depth"`
	MaxNodes    int      `json:"max_nodes"`
	Truncated   bool     `json:"truncated"`
	TruncatedBy []string `json:"truncated_by,omitempty"`
	// UnexpandedFrom: this node and every later one (in locator order)
	// had its children left unread.
	UnexpandedFrom string `json:"unexpanded_from,omitempty"`
	Skipped        int    `json:"skipped_vanished,omitempty"`
}

func (w *walk) truncation() Truncation {
	return Truncation{
		NodeCount: len(w.all), MaxDepth: w.maxDepth, MaxNodes: w.maxNodes,
		Truncated: len(w.truncatedBy) > 0, TruncatedBy: w.truncatedBy,
		UnexpandedFrom: w.unexpandedFrom, Skipped: w.skipped,
	}
}
