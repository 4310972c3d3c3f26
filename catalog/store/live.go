package store

import "sync"

// Live is the catalogue a server answers from, replaceable while it serves:
// each request holds the catalogue it started with, and a replaced catalogue
// closes once its last request has released it. It is safe for concurrent
// use.
type Live struct {
	mu  sync.RWMutex
	cur *liveRef
}

type liveRef struct {
	db      *DB
	inUse   sync.WaitGroup
	release func()
}

func newLiveRef(db *DB) *liveRef {
	ref := &liveRef{db: db}
	ref.release = ref.inUse.Done
	return ref
}

// NewLive serves db.
func NewLive(db *DB) *Live { return &Live{cur: newLiveRef(db)} }

// Acquire returns the current catalogue and the function that releases it,
// which the caller must call exactly once when done.
func (l *Live) Acquire() (*DB, func()) {
	l.mu.RLock()
	ref := l.cur
	// Add under the read lock: Swap cannot have started waiting on ref yet.
	ref.inUse.Add(1)
	l.mu.RUnlock()
	return ref.db, ref.release
}

// Current returns the current catalogue without holding it; for reading its
// Info, which stays valid after the catalogue closes.
func (l *Live) Current() *DB {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.cur.db
}

// Swap makes db the current catalogue and closes the previous one once its
// last request releases it. It returns at once, with a channel closed once
// the previous catalogue is.
func (l *Live) Swap(db *DB) <-chan struct{} {
	l.mu.Lock()
	old := l.cur
	l.cur = newLiveRef(db)
	l.mu.Unlock()
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		old.inUse.Wait()
		old.db.Close()
	}()
	return closed
}

// Close closes the current catalogue after its last request. The Live is
// not to be used after it: Acquire would hand out the closed catalogue.
func (l *Live) Close() error {
	l.mu.Lock()
	ref := l.cur
	l.mu.Unlock()
	ref.inUse.Wait()
	return ref.db.Close()
}
