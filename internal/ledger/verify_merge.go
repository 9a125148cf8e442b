package ledger

import (
	"bytes"
	"fmt"
	"math/bits"

	"golang.org/x/mod/sumdb/tlog"
)

// This file is the last stage of the parallel verifier (verify_db.go): the
// blocks, checked out of order, joined in order into the hash chain and
// the tree, and the tree's roots compared with the stored checkpoints.

// merger joins the checked blocks in order.
type merger struct {
	cps  map[int64][]checkpoint
	rep  *Report
	prev [32]byte // hash of the last entry merged
	// stack holds the roots of the whole blocks merged so far, as tlog
	// folds them: complete subtrees, largest first.
	stack  []tlog.Hash
	blocks int64
	// blockSize is the verification's block size (verifyConfig).
	blockSize int64
}

func (m *merger) run(ordered <-chan *block, trees <-chan *treeBlock, free chan<- *block, freeTrees chan<- *treeBlock, stop chan struct{}) error {
	fail := func(err error) error {
		close(stop)
		for b := range ordered { // let the readers and workers finish
			<-b.done
		}
		for range trees {
		}
		return err
	}
	if err := m.checkRoot(0, nil, 0); err != nil {
		return fail(err)
	}
	for b := range ordered {
		<-b.done
		tb, ok := <-trees
		if !ok {
			tb = &treeBlock{err: fmt.Errorf("entry seq %d: stored tree hashes end early", b.start+1)}
		}
		if err := m.merge(b, tb); err != nil {
			return fail(err)
		}
		select {
		case free <- b:
		default:
		}
		select {
		case freeTrees <- tb:
		default:
		}
	}
	return nil
}

// merge checks block b, whose stored tree hashes are tb, against the
// entries before it, entry by entry, reporting the first failure in ledger
// order.
func (m *merger) merge(b *block, tb *treeBlock) error {
	t, c := 0, 0 // next stored and computed tree hash of b
	for j := range b.bodies {
		pos := b.start + int64(j) + 1
		if j == b.bad {
			return b.badErr
		}
		if j == 0 {
			if b.prevs[0] != m.prev {
				return fmt.Errorf("entry seq %d: prev hash mismatch", pos)
			}
			if !bytes.Equal(b.sums[0], b.hashes[0][:]) {
				return fmt.Errorf("entry seq %d: stored hash does not match its bytes", pos)
			}
		}
		m.prev = b.hashes[j]
		want := storedCount(pos - 1)
		inBlock := storedCount(int64(j))
		for k := 0; k < want; k++ {
			var h tlog.Hash
			if k < inBlock {
				h = b.computed[c]
				c++
			} else {
				// A level above the block: fold the block's root into
				// the stack of whole blocks.
				if k == inBlock {
					m.stack = append(m.stack, b.computed[c-1])
				}
				s := len(m.stack)
				h = tlog.NodeHash(m.stack[s-2], m.stack[s-1])
				m.stack = append(m.stack[:s-2], h)
			}
			if t >= len(tb.tree) {
				return tb.err
			}
			if !bytes.Equal(tb.tree[t], h[:]) {
				return fmt.Errorf("entry seq %d: stored tree hash %d mismatch", pos, tlog.StoredHashIndex(0, pos-1)+int64(k))
			}
			t++
		}
		if int64(j) == m.blockSize-1 {
			if inBlock == want {
				m.stack = append(m.stack, b.computed[c-1])
			}
			m.blocks++
		}
		m.rep.Entries = pos
		if err := m.checkRoot(pos, b, j+1); err != nil {
			return err
		}
	}
	if b.tailErr != nil {
		return b.tailErr
	}
	if tb.err != nil {
		return tb.err
	}
	return tb.tailErr
}

// checkRoot checks the checkpoints at size pos, which ends after the k
// first entries of block b.
func (m *merger) checkRoot(pos int64, b *block, k int) error {
	cps := m.cps[pos]
	if len(cps) == 0 {
		return nil
	}
	root := m.root(b, k)
	for _, cp := range cps {
		if root != cp.root {
			return fmt.Errorf("checkpoint at size %d: root mismatch: entries hash to %s, checkpoint signed %s", pos, root, cp.root)
		}
		m.rep.Checkpoints++
	}
	return nil
}

// root is the tree hash of the whole blocks merged and the first k
// entries of b (k == blockSize: b is already among the whole blocks).
func (m *merger) root(b *block, k int) tlog.Hash {
	hs := append([]tlog.Hash(nil), m.stack...)
	if b != nil && int64(k) < m.blockSize {
		// The complete subtrees among b's first k entries: for each one
		// bit of k, from the highest, the subtree ending at entry e is
		// the last hash b computed for e.
		ends := make([]int, len(b.bodies)+1)
		c := 0
		for e := range b.bodies {
			c += storedCount(int64(e))
			ends[e] = c
		}
		prefix := 0
		for bit := 1 << (bits.Len(uint(k)) - 1); bit > 0; bit >>= 1 {
			if k&bit != 0 {
				e := prefix + bit - 1
				hs = append(hs, b.computed[ends[e]-1])
				prefix += bit
			}
		}
	}
	if len(hs) == 0 {
		return emptyRoot
	}
	h := hs[len(hs)-1]
	for i := len(hs) - 2; i >= 0; i-- {
		h = tlog.NodeHash(hs[i], h)
	}
	return h
}
