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
	"time"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/hearth-dev/hearth/internal/store"
)

// verifyDB reads the entries in order on the calling goroutine and the
// stored tree hashes on another (from hashTx, a second snapshot of the same
// ledger when one could be had, else tx itself), hands blocks of blockSize
// entries to GOMAXPROCS workers that check each entry's form, seq, stored
// hash and the prev links inside the block and compute the block's leaf and
// subtree hashes, and merges the blocks in order on one more goroutine: the
// prev link across blocks, the tree levels above a block, every stored tree
// hash and every checkpoint's root. Errors are the same, and found at the
// same entry, as a sequential walk would report.
func verifyDB(ctx context.Context, tx, hashTx *sql.Tx, cfg verifyConfig, rep *Report) error {
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
	hashes, err := hashTx.QueryContext(ctx, `SELECT idx, hash FROM ledger_hashes ORDER BY idx`)
	if err != nil {
		return fmt.Errorf("read tree hashes: %w", err)
	}
	defer hashes.Close()

	bs := cfg.blockSize
	if bs == 0 {
		bs = defaultBlockSize
	}
	workers := max(1, runtime.GOMAXPROCS(0))
	work := make(chan *block, workers)
	ordered := make(chan *block, workers+1)
	free := make(chan *block, workers+3)
	trees := make(chan *treeBlock, workers+1)
	freeTrees := make(chan *treeBlock, workers+3)
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
	treesRead := make(chan struct{})
	go func() {
		defer close(treesRead)
		defer close(trees)
		readTreeBlocks(hashes, n, bs, trees, freeTrees, stop)
	}()
	merged := make(chan error, 1)
	go func() {
		m := merger{cps: cps, rep: rep, blockSize: bs} // prev: GenesisPrev, all zero
		merged <- m.run(ordered, trees, free, freeTrees, stop)
	}()

	readBlocks(entries, n, bs, work, ordered, free, stop)
	<-treesRead
	close(work)
	close(ordered)
	wg.Wait()
	return <-merged
}

// sameSnapshot returns a second read transaction that sees the same ledger
// as tx (the same last entry and last tree hash: the tables are append
// only), on another connection so that both can be read at once, and the
// function that ends it. When no connection is free at once or the ledger
// keeps growing between the two, it returns tx itself.
func sameSnapshot(ctx context.Context, db *store.DB, tx *sql.Tx) (*sql.Tx, func(), error) {
	heads := func(q querier) (seq, idx int64, err error) {
		err = q.QueryRowContext(ctx, `SELECT coalesce((SELECT max(seq) FROM ledger_entries), 0), coalesce((SELECT max(idx) FROM ledger_hashes), -1)`).Scan(&seq, &idx)
		return seq, idx, err
	}
	seq, idx, err := heads(tx)
	if err != nil {
		return nil, nil, fmt.Errorf("read ledger size: %w", err)
	}
	same := func() {}
	if db.R.Stats().MaxOpenConnections == 1 {
		return tx, same, nil
	}
	for range 3 {
		acquire, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		conn, err := db.R.Conn(acquire)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			return tx, same, nil // the pool is busy: read both from one snapshot
		}
		tx2, err := conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			conn.Close()
			return nil, nil, err
		}
		seq2, idx2, err := heads(tx2)
		if err == nil && seq2 == seq && idx2 == idx {
			return tx2, func() { tx2.Rollback(); conn.Close() }, nil
		}
		tx2.Rollback()
		conn.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("read ledger size: %w", err)
		}
	}
	return tx, same, nil
}

// defaultBlockSize is the number of entries in a block: a power of two, so that
// a block starting at a multiple of it holds whole subtrees, and large
// enough that the goroutines seldom wait for each other: on a machine
// short of CPU each wait costs a scheduling delay (about 5 MB of entries
// each, a few blocks in flight).
const defaultBlockSize = 1 << 14

// block is a run of consecutive entries, from the 0-based index start.
type block struct {
	start  int64
	arena  []byte   // bodies and entry hashes as read
	bodies [][]byte // into arena
	sums   [][]byte // stored entry hashes, into arena
	// tailErr is what went wrong reading after the last entry of the
	// block, or what the end of the entries shows.
	tailErr error

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
	b.tailErr, b.badErr = nil, nil
	b.done = make(chan struct{})
}

// storedCount is the number of tree hashes tlog stores for the entry at
// 0-based index i: its leaf and one per trailing one bit of i.
func storedCount(i int64) int { return 1 + bits.TrailingZeros64(^uint64(i)) }

// readBlocks reads the entries into blocks and sends each to work and, in
// order, to ordered, the last one (perhaps empty) with what the end of the
// entries shows.
func readBlocks(entries *sql.Rows, n, blockSize int64, work, ordered chan<- *block, free chan *block, stop <-chan struct{}) {
	var (
		pos  int64 // entries read
		body sql.RawBytes
		sum  sql.RawBytes
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
	for entries.Next() {
		if err := entries.Scan(&body, &sum); err != nil {
			b.tailErr = fmt.Errorf("read entries: %w", err)
			send(b)
			return
		}
		at := len(b.arena)
		b.arena = append(b.arena, body...)
		b.arena = append(b.arena, sum...)
		b.bodies = append(b.bodies, b.arena[at:at+len(body)])
		b.sums = append(b.sums, b.arena[at+len(body):len(b.arena)])
		pos++
		if int64(len(b.bodies)) == blockSize {
			if !send(b) {
				return
			}
			b = next()
		}
	}
	switch {
	case entries.Err() != nil:
		b.tailErr = fmt.Errorf("read entries: %w", entries.Err())
	case pos != n:
		b.tailErr = fmt.Errorf("ledger has %d entries but its highest seq is %d", pos, n)
	}
	send(b)
}

// treeBlock is the stored tree hashes of the entries of one block.
type treeBlock struct {
	arena []byte
	tree  [][]byte // in index order, into arena
	// err is what went wrong reading the hash after tree: a read error or
	// a missing index. tailErr is what the end of the hashes shows, on the
	// last block.
	err, tailErr error
}

// readTreeBlocks reads the stored tree hashes of the n entries, block by
// block as readBlocks cuts them, and sends them in order to out.
func readTreeBlocks(hashes *sql.Rows, n, blockSize int64, out chan<- *treeBlock, free chan *treeBlock, stop <-chan struct{}) {
	var (
		nextIdx int64
		idx     int64
		th      sql.RawBytes
	)
	for start := int64(0); ; start += blockSize {
		var tb *treeBlock
		select {
		case tb = <-free:
			tb.arena, tb.tree, tb.err, tb.tailErr = tb.arena[:0], tb.tree[:0], nil, nil
		default:
			tb = &treeBlock{}
		}
		end := min(n, start+blockSize)
	read:
		for pos := start; pos < end; pos++ {
			for range storedCount(pos) {
				if !hashes.Next() {
					if err := hashes.Err(); err != nil {
						tb.err = fmt.Errorf("read tree hashes: %w", err)
					} else {
						tb.err = fmt.Errorf("entry seq %d: stored tree hash %d is missing", pos+1, nextIdx)
					}
					break read
				}
				if err := hashes.Scan(&idx, &th); err != nil {
					tb.err = fmt.Errorf("read tree hashes: %w", err)
					break read
				}
				if idx != nextIdx {
					tb.err = fmt.Errorf("entry seq %d: stored tree hash %d is missing", pos+1, nextIdx)
					break read
				}
				at := len(tb.arena)
				tb.arena = append(tb.arena, th...)
				tb.tree = append(tb.tree, tb.arena[at:len(tb.arena)])
				nextIdx++
			}
		}
		last := tb.err != nil || end-start < blockSize
		if last && tb.err == nil {
			switch {
			case hashes.Next():
				tb.tailErr = fmt.Errorf("stored tree hashes continue past entry seq %d", n)
			case hashes.Err() != nil:
				tb.tailErr = fmt.Errorf("read tree hashes: %w", hashes.Err())
			}
		}
		select {
		case out <- tb:
		case <-stop:
			return
		}
		if last {
			return
		}
	}
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
		seq, ok := checkEntryFast(raw, &b.prevs[j])
		if !ok {
			e, err := ParseEntry(raw)
			if err != nil {
				b.bad, b.badErr = j, fmt.Errorf("entry %d: %w", pos, err)
				return
			}
			seq = e.Seq
			if !decodeHash(&b.prevs[j], e.Prev) {
				b.bad, b.badErr = j, fmt.Errorf("entry seq %d: prev hash mismatch", e.Seq)
				return
			}
		}
		if seq != pos {
			b.bad, b.badErr = j, fmt.Errorf("entry %d out of order: seq %d", pos, seq)
			return
		}
		b.hashes[j] = sha256.Sum256(raw)
		if j > 0 {
			if b.prevs[j] != b.hashes[j-1] {
				b.bad, b.badErr = j, fmt.Errorf("entry seq %d: prev hash mismatch", seq)
				return
			}
			if !bytes.Equal(b.sums[j], b.hashes[j][:]) {
				b.bad, b.badErr = j, fmt.Errorf("entry seq %d: stored hash does not match its bytes", seq)
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
