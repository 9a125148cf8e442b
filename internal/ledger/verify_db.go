package ledger

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"hash"
	"math/bits"
	"runtime"
	"sync"

	"golang.org/x/mod/sumdb/tlog"
)

// verifyDB reads the ledger in order on the calling goroutine (one read
// transaction, two cursors), hands blocks of blockSize entries to
// GOMAXPROCS workers that check each entry's form, seq, stored hash and the
// prev links inside the block and compute the block's leaf and subtree
// hashes, and merges the blocks in order on one more goroutine: the prev
// link across blocks, the tree levels above a block, every stored tree hash
// and every checkpoint's root. Errors are the same, and found at the same
// entry, as a sequential walk would report.
func verifyDB(ctx context.Context, tx *sql.Tx, cfg verifyConfig, rep *Report) error {
	n, err := size(ctx, tx)
	if err != nil {
		return err
	}
	cps, err := loadCheckpoints(ctx, tx, cfg, rep)
	if err != nil {
		return err
	}
	if rep.CheckpointSize > n {
		return fmt.Errorf("ledger truncated: checkpoint size %d but %d entries", rep.CheckpointSize, n)
	}
	rep.Unsigned = n - rep.CheckpointSize

	entries, err := tx.QueryContext(ctx, `SELECT body, hash FROM ledger_entries ORDER BY seq`)
	if err != nil {
		return fmt.Errorf("read entries: %w", err)
	}
	defer entries.Close()
	hashes, err := tx.QueryContext(ctx, `SELECT idx, hash FROM ledger_hashes ORDER BY idx`)
	if err != nil {
		return fmt.Errorf("read tree hashes: %w", err)
	}
	defer hashes.Close()

	workers := max(1, runtime.GOMAXPROCS(0))
	work := make(chan *block, workers)
	ordered := make(chan *block, 2*workers+2)
	free := make(chan *block, 2*workers+4)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := sha256.New()
			for b := range work {
				b.check(h)
				close(b.done)
			}
		}()
	}
	merged := make(chan error, 1)
	go func() {
		m := merger{cps: cps, rep: rep} // prev: GenesisPrev, all zero
		merged <- m.run(ordered, free, stop)
	}()

	readErr := readBlocks(entries, hashes, n, work, ordered, free, stop)
	close(work)
	close(ordered)
	wg.Wait()
	if err := <-merged; err != nil {
		return err
	}
	return readErr
}

// blockSize is the number of entries in a block: a power of two, so that
// a block starting at a multiple of it holds whole subtrees.
const blockSize = 1 << 10

// block is a run of consecutive entries, from the 0-based index start.
type block struct {
	start  int64
	arena  []byte   // bodies, entry hashes and tree hashes as read
	bodies [][]byte // into arena
	sums   [][]byte // stored entry hashes, into arena
	tree   [][]byte // stored tree hashes in index order, into arena
	// treeErr, when set, is what went wrong reading the tree hash after
	// tree: a read error or a missing index. tailErr is what a read error
	// or a mismatch after the last entry of the block was.
	treeErr, tailErr error

	done chan struct{}
	// Filled by check: the first failing entry (len(bodies) if none) and
	// why, each entry's prev and hash, and the tree hashes computed inside
	// the block, level 0 (the leaf) first for each entry.
	bad      int
	badErr   error
	prevs    [][32]byte
	hashes   [][32]byte
	computed []tlog.Hash
}

func (b *block) reset(start int64) {
	b.start = start
	b.arena = b.arena[:0]
	b.bodies = b.bodies[:0]
	b.sums = b.sums[:0]
	b.tree = b.tree[:0]
	b.treeErr, b.tailErr, b.badErr = nil, nil, nil
	b.done = make(chan struct{})
}

// storedCount is the number of tree hashes tlog stores for the entry at
// 0-based index i: its leaf and one per trailing one bit of i.
func storedCount(i int64) int { return 1 + bits.TrailingZeros64(^uint64(i)) }

// readBlocks reads entries and their tree hashes into blocks, sends each to
// work and, in order, to ordered; it returns what went wrong after the last
// block, if anything.
func readBlocks(entries, hashes *sql.Rows, n int64, work, ordered chan<- *block, free chan *block, stop <-chan struct{}) error {
	var (
		pos     int64 // entries read
		nextIdx int64 // tree hash index expected next
		body    sql.RawBytes
		sum     sql.RawBytes
		idx     int64
		th      sql.RawBytes
	)
	next := func() *block {
		var b *block
		select {
		case b = <-free:
		default:
			b = &block{}
		}
		b.reset(pos)
		return b
	}
	send := func(b *block) bool {
		select {
		case ordered <- b:
		case <-stop:
			return false
		}
		work <- b
		return true
	}
	b := next()
	for {
		select {
		case <-stop:
			return nil
		default:
		}
		if !entries.Next() {
			break
		}
		if err := entries.Scan(&body, &sum); err != nil {
			b.tailErr = fmt.Errorf("read entries: %w", err)
			send(b)
			return nil
		}
		at := len(b.arena)
		b.arena = append(b.arena, body...)
		b.arena = append(b.arena, sum...)
		b.bodies = append(b.bodies, b.arena[at:at+len(body)])
		b.sums = append(b.sums, b.arena[at+len(body):len(b.arena)])
		for k := storedCount(pos); k > 0 && b.treeErr == nil; k-- {
			if !hashes.Next() {
				if err := hashes.Err(); err != nil {
					b.treeErr = fmt.Errorf("read tree hashes: %w", err)
				} else {
					b.treeErr = fmt.Errorf("entry seq %d: stored tree hash %d is missing", pos+1, nextIdx)
				}
				break
			}
			if err := hashes.Scan(&idx, &th); err != nil {
				b.treeErr = fmt.Errorf("read tree hashes: %w", err)
				break
			}
			if idx != nextIdx {
				b.treeErr = fmt.Errorf("entry seq %d: stored tree hash %d is missing", pos+1, nextIdx)
				break
			}
			at := len(b.arena)
			b.arena = append(b.arena, th...)
			b.tree = append(b.tree, b.arena[at:len(b.arena)])
			nextIdx++
		}
		pos++
		if b.treeErr != nil {
			send(b)
			return nil
		}
		if len(b.bodies) == blockSize {
			if !send(b) {
				return nil
			}
			b = next()
		}
	}
	switch {
	case entries.Err() != nil:
		b.tailErr = fmt.Errorf("read entries: %w", entries.Err())
	case pos != n:
		b.tailErr = fmt.Errorf("ledger has %d entries but its highest seq is %d", pos, n)
	case hashes.Next():
		b.tailErr = fmt.Errorf("stored tree hashes continue past entry seq %d", n)
	case hashes.Err() != nil:
		b.tailErr = fmt.Errorf("read tree hashes: %w", hashes.Err())
	}
	send(b)
	return nil
}

// check runs on a worker: each entry's form and seq, the prev links inside
// the block, the stored entry hashes (but the first entry's, which the
// merge checks after its prev link), and the tree hashes inside the block.
func (b *block) check(h hash.Hash) {
	n := len(b.bodies)
	b.bad = n
	b.prevs = grow(b.prevs, n)
	b.hashes = grow(b.hashes, n)
	b.computed = b.computed[:0]
	var stack [64]tlog.Hash
	depth := 0
	var leafIn [1]byte
	for j, raw := range b.bodies {
		pos := b.start + int64(j) + 1
		e, err := ParseEntry(raw)
		if err != nil {
			b.bad, b.badErr = j, fmt.Errorf("entry %d: %w", pos, err)
			return
		}
		if e.Seq != pos {
			b.bad, b.badErr = j, fmt.Errorf("entry %d out of order: seq %d", pos, e.Seq)
			return
		}
		if !decodeHash(&b.prevs[j], e.Prev) {
			b.bad, b.badErr = j, fmt.Errorf("entry seq %d: prev hash mismatch", e.Seq)
			return
		}
		b.hashes[j] = sha256.Sum256(raw)
		if j > 0 {
			if b.prevs[j] != b.hashes[j-1] {
				b.bad, b.badErr = j, fmt.Errorf("entry seq %d: prev hash mismatch", e.Seq)
				return
			}
			if !bytes.Equal(b.sums[j], b.hashes[j][:]) {
				b.bad, b.badErr = j, fmt.Errorf("entry seq %d: stored hash does not match its bytes", e.Seq)
				return
			}
		}
		h.Reset()
		h.Write(leafIn[:])
		h.Write(raw)
		var leaf tlog.Hash
		h.Sum(leaf[:0])
		b.computed = append(b.computed, leaf)
		stack[depth] = leaf
		depth++
		for i := j; i&1 == 1; i >>= 1 {
			node := tlog.NodeHash(stack[depth-2], stack[depth-1])
			depth--
			stack[depth-1] = node
			b.computed = append(b.computed, node)
		}
	}
}

// decodeHash decodes 64 hex digits into dst.
func decodeHash(dst *[32]byte, s string) bool {
	if len(s) != 2*len(dst) {
		return false
	}
	for i := range dst {
		hi, ok1 := fromHex(s[2*i])
		lo, ok2 := fromHex(s[2*i+1])
		if !ok1 || !ok2 {
			return false
		}
		dst[i] = hi<<4 | lo
	}
	return true
}

func fromHex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// merger joins the checked blocks in order.
type merger struct {
	cps  map[int64][]checkpoint
	rep  *Report
	prev [32]byte // hash of the last entry merged
	// stack holds the roots of the whole blocks merged so far, as tlog
	// folds them: complete subtrees, largest first.
	stack  []tlog.Hash
	blocks int64
}

func (m *merger) run(ordered <-chan *block, free chan<- *block, stop chan struct{}) error {
	fail := func(err error) error {
		close(stop)
		for b := range ordered { // let the reader and workers finish
			<-b.done
		}
		return err
	}
	if err := m.checkRoot(0, nil, 0); err != nil {
		return fail(err)
	}
	for b := range ordered {
		<-b.done
		if err := m.merge(b); err != nil {
			return fail(err)
		}
		select {
		case free <- b:
		default:
		}
	}
	return nil
}

// merge checks block b against the entries before it and the stored tree
// hashes, entry by entry, reporting the first failure in ledger order.
func (m *merger) merge(b *block) error {
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
		if j == blockSize-1 {
			inBlock = want - bits.TrailingZeros64(^uint64(m.blocks))
		}
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
			if t >= len(b.tree) {
				return b.treeErr
			}
			if !bytes.Equal(b.tree[t], h[:]) {
				return fmt.Errorf("entry seq %d: stored tree hash %d mismatch", pos, tlog.StoredHashIndex(0, pos-1)+int64(k))
			}
			t++
		}
		if j == blockSize-1 {
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
	return b.tailErr
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
	if b != nil && k < blockSize {
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
