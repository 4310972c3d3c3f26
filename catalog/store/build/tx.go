package build

import (
	"fmt"

	"github.com/catalogd/catalogd/catalog/store/internal/layout"
	bolt "go.etcd.io/bbolt"
)

// The Writer writes through a chain of bbolt write transactions.

// commitEvery bounds the memory of one write transaction: bbolt keeps every
// value put and every page changed in memory until it commits (see
// putOverhead and nodeCost).
const commitEvery = 8 << 20

// begin starts the next write transaction.
func (w *Writer) begin() error {
	tx, err := w.db.Begin(true)
	if err != nil {
		return fmt.Errorf("write catalogue %s: %w", w.path, err)
	}
	w.tx = tx
	for _, name := range [][]byte{layout.BucketMeta, layout.BucketSets, layout.BucketSetCodes, layout.BucketSetOrder, layout.BucketSetLists, layout.BucketCards, layout.BucketNumbers, layout.BucketPostings, layout.BucketPageMarks, layout.BucketSetBytes, layout.BucketChanges, layout.BucketNames, layout.BucketGroups, layout.BucketWords, layout.BucketCompletions} {
		b, err := tx.CreateBucketIfNotExists(name)
		if err != nil {
			return fmt.Errorf("write catalogue %s: bucket %s: %w", w.path, name, err)
		}
		// bbolt splits the nodes a transaction touched only when it
		// commits; filling pages whole then leaves half as many as the
		// default, and the file is never written to again.
		b.FillPercent = 1.0
	}
	// One cursor for every lookup: Get makes a new one each time.
	w.ids = tx.Bucket(layout.BucketCards).Cursor()
	w.txBytes, w.txNodes, w.putsUncounted = 0, 0, 0
	return nil
}

// commit puts the pending cards, ends the current transaction and, unless
// last, starts the next.
func (w *Writer) commit(last bool) error {
	if err := w.flushCards(); err != nil {
		return err
	}
	if err := w.commitTx(last); err != nil {
		return err
	}
	w.held.reset()
	return nil
}

// commitTx ends the current transaction and, unless last, starts the next.
// The values put stay in w.held, which the caller resets once none is
// waiting to be put.
func (w *Writer) commitTx(last bool) error {
	if err := w.tx.Commit(); err != nil {
		w.tx = nil
		return fmt.Errorf("write catalogue %s: commit: %w", w.path, err)
	}
	w.tx = nil
	if last {
		return nil
	}
	if w.interrupted != nil {
		if err := w.interrupted(); err != nil {
			return err
		}
	}
	return w.begin()
}

// nodeCost is what bbolt holds for each page a write transaction changes,
// until it commits: the page's elements as a node, and at the commit a
// buffer to write the page from. Keys put in order change a few pages for
// many puts; keys in no order (card ids that are UUIDs, sets in no order of
// their ids) change a page for each put, and a transaction bounded by the
// bytes put alone would hold hundreds of megabytes of them.
const nodeCost = 8 << 10

// txFull reports whether the transaction has grown to what one may hold:
// the bytes put and the pages changed. The pages are counted every
// nodeCheckEvery calls, between which a few more may change.
func (w *Writer) txFull() bool {
	if w.txBytes >= w.limits.CommitAt {
		return true
	}
	return w.txBytes+int(w.nodes())*nodeCost >= w.limits.CommitAt
}

// nodeCheckEvery is how many calls of nodes (a put or two each) come
// between two counts of the pages the transaction changed, which copy
// bbolt's statistics.
const nodeCheckEvery = 32

// nodes returns the number of pages the transaction changed as of the last
// count.
func (w *Writer) nodes() int64 {
	if w.putsUncounted++; w.putsUncounted >= nodeCheckEvery {
		st := w.tx.Stats()
		w.txNodes, w.putsUncounted = st.GetNodeCount(), 0
	}
	return w.txNodes
}

// put puts into b, counting what the transaction holds.
func (w *Writer) put(b *bolt.Bucket, key, value []byte) error {
	// Put copies the key, not the value.
	if err := b.Put(key, w.held.copy(value)); err != nil {
		return fmt.Errorf("write catalogue %s: %w", w.path, err)
	}
	w.txBytes += len(key) + len(value) + putOverhead
	return nil
}

// putOverhead is what a put costs a transaction beyond its key and value:
// bbolt keeps an element of about this size for every key put, until the
// transaction commits, and many of the index's values are a few bytes.
const putOverhead = 64

// maybeCommit commits once the transaction holds what one may.
func (w *Writer) maybeCommit() error {
	if !w.txFull() {
		return nil
	}
	return w.commit(false)
}

// putOrdered puts into the bucket named, committing as the transaction
// grows.
func (w *Writer) putOrdered(bucket, key, value []byte) error {
	if err := w.put(w.tx.Bucket(bucket), key, value); err != nil {
		return err
	}
	return w.maybeCommit()
}

// putPending puts a key and value of the pending card id, whose bytes are
// held until the last commit of flushCards. The pages the cards change,
// which cards in no order multiply, end the transaction part-way.
func (w *Writer) putPending(key, value, id []byte) error {
	if err := w.tx.Bucket(layout.BucketCards).Put(key, value); err != nil {
		return fmt.Errorf("write catalogue %s: card %q: %w", w.path, id, err)
	}
	if w.nodes()*nodeCost < int64(w.limits.CommitAt) {
		return nil
	}
	return w.commitTx(false)
}

// arena hands out copies of byte slices from large chunks, which are reused
// once the transaction that held them has committed.
type arena struct {
	used [][]byte // chunks handed out since the last reset
	free [][]byte
	cur  []byte
}

const arenaChunk = 1 << 20

func (a *arena) copy(b []byte) []byte {
	if len(b) > arenaChunk/4 {
		return append([]byte(nil), b...)
	}
	if cap(a.cur)-len(a.cur) < len(b) {
		if a.cur != nil {
			a.used = append(a.used, a.cur)
		}
		if n := len(a.free); n > 0 {
			a.cur, a.free = a.free[n-1][:0], a.free[:n-1]
		} else {
			a.cur = make([]byte, 0, arenaChunk)
		}
	}
	n := len(a.cur)
	a.cur = append(a.cur, b...)
	return a.cur[n:len(a.cur):len(a.cur)]
}

// reset makes every chunk free again; nothing may use the copies after it.
func (a *arena) reset() {
	if a.cur != nil {
		a.used = append(a.used, a.cur)
		a.cur = nil
	}
	a.free = append(a.free, a.used...)
	a.used = a.used[:0]
}
