package main

import (
	"context"
	"io/fs"
	"log/slog"
	"os"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/catalogd/catalogd/catalog/store"
	"github.com/catalogd/catalogd/server"
)

// reloadEvery is how often serve looks for a new catalogue file. Polling
// the file's identity costs one stat a second and works on every
// filesystem a catalogue may be delivered on, network and container
// volumes included, where change notifications do not.
const reloadEvery = time.Second

// reloader keeps a Live serving the newest catalogue at path: catalogd
// import renames a finished file over it, so a file with another identity
// at path is a new catalogue, complete.
type reloader struct {
	path    string
	live    *store.Live
	log     *slog.Logger
	metrics *server.Metrics
	// seen is the file last opened or tried, so that a file that cannot be
	// opened is reported once, not every second.
	seen fs.FileInfo
	// served is the file being served, as it was when opened or when a
	// change of it in place was last told (nil when not known).
	served fs.FileInfo
}

// newReloader watches path for the Live; seen is the file's state taken
// before the current catalogue was opened (nil if there was none), so that
// a rename in between is noticed on the first look.
func newReloader(path string, live *store.Live, seen fs.FileInfo, log *slog.Logger, metrics *server.Metrics) *reloader {
	return &reloader{path: path, live: live, seen: seen, served: seen, log: log, metrics: metrics}
}

// run looks at the file every interval, and at once when hup delivers,
// until ctx ends.
func (rl *reloader) run(ctx context.Context, every time.Duration, hup <-chan os.Signal) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			rl.check(false)
		case <-hup:
			rl.log.Info("SIGHUP: reopening the catalogue", slog.String("catalogue", rl.path))
			rl.check(true)
		}
	}
}

// check swaps in the file at path if it is new, or, when forced, if it
// holds another generation than the one being served or is another file.
// A file that cannot be opened, or whose pages are not all whole
// (store.DB.Check), is logged and the current catalogue stays.
func (rl *reloader) check(force bool) {
	st, err := os.Stat(rl.path)
	if err != nil {
		// Said once when the file goes, not every second while it is
		// gone: a failed reload, which the operator's alert on failed
		// reloads sees, for the next restart would find no catalogue.
		if force || rl.seen != nil {
			rl.log.Error("catalogue file unavailable; serving the current catalogue",
				slog.String("catalogue", rl.path), slog.String("error", err.Error()))
			rl.metrics.Reloaded(false)
		}
		rl.seen = nil
		return
	}
	if !force && rl.seen != nil && sameFile(rl.seen, st) {
		return
	}
	rl.seen = st
	inPlace := rl.served != nil && os.SameFile(rl.served, st)
	if inPlace && (st.Size() != rl.served.Size() || !st.ModTime().Equal(rl.served.ModTime())) {
		// Not a new file but the one being served, written over or cut
		// short (a cp or truncate where catalogd import renames): the
		// requests meanwhile read a file that changed under them, and
		// those that read what is gone fail.
		rl.log.Error("the catalogue file being served was changed in place; import catalogues with catalogd import, or rename a copy over the file",
			slog.String("catalogue", rl.path), slog.Int64("size", st.Size()), slog.Int64("size_served", rl.served.Size()))
		rl.served = st // told once
	}
	db, err := store.Open(rl.path)
	if err != nil {
		rl.log.Error("catalogue reload failed; serving the current catalogue",
			slog.String("catalogue", rl.path), slog.String("error", err.Error()))
		rl.metrics.Reloaded(false)
		return
	}
	current := rl.live.Current().Generation()
	if db.Generation() == current && (rl.served == nil || inPlace) && !rl.live.Current().Damaged() {
		db.Close()
		if force {
			rl.log.Info("catalogue unchanged", slog.String("generation", current))
		}
		return
	}
	// The same generation in another file (a copy put back) is swapped in
	// too, so that the file served before, deleted, is let go; and so is
	// the file served, made whole again in place, when reads of it failed.
	// Open reads a few pages; a page damaged elsewhere would fail the
	// requests that read it for as long as the file is served. Check
	// walks them all, while the current catalogue serves.
	if err := db.Check(); err != nil {
		db.Close()
		rl.log.Error("catalogue reload refused: the file is damaged; serving the current catalogue",
			slog.String("catalogue", rl.path), slog.String("error", err.Error()))
		rl.metrics.Reloaded(false)
		return
	}
	closed := rl.live.Swap(db)
	rl.served = st
	go func() {
		// What the old catalogue's requests held goes back to the
		// system once its last request is done, rather than when the
		// runtime gets round to it. Its answer cache and export layouts
		// go when the first request on the new catalogue replaces them
		// (Server.state), and then with the next collection.
		<-closed
		debug.FreeOSMemory()
	}()
	rl.metrics.Reloaded(true)
	rl.log.Info("catalogue reloaded", slog.String("catalogue", rl.path),
		slog.String("generation", db.Generation()), slog.String("previous", current))
}

// sameFile reports whether two looks at a path saw the same file, unchanged.
// Its change time is part of it, which chmod and chown move: a file that
// could not be opened for its permissions or owner is tried again once
// they are mended.
func sameFile(a, b fs.FileInfo) bool {
	if !os.SameFile(a, b) || a.Size() != b.Size() || !a.ModTime().Equal(b.ModTime()) || a.Mode() != b.Mode() {
		return false
	}
	sa, okA := a.Sys().(*syscall.Stat_t)
	sb, okB := b.Sys().(*syscall.Stat_t)
	return !okA || !okB || sa.Ctim == sb.Ctim
}
