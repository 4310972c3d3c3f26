// Package importer turns catalogue snapshots into a new catalogue file. It
// streams the snapshots, validates every record (docs/CONTRACT.md, Snapshots and validation), and
// replaces the catalogue atomically: a failed, interrupted or killed import
// leaves the previous catalogue exactly as it was.
package importer

import (
	"bufio"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/catalogd/catalogd/catalog/store"
	"github.com/catalogd/catalogd/catalog/store/build"
	"github.com/klauspost/compress/gzip"
)

// Config says what to import and where.
type Config struct {
	DB     string    // the catalogue file to replace
	Inputs []string  // snapshot files; "-" reads Stdin
	Stdin  io.Reader // for "-"
	// DryRun validates and builds the catalogue in a directory of its own
	// under os.TempDir, then removes it: the directory of DB is neither
	// read nor written, and another import may run beside it.
	DryRun bool

	// History is how many imports' changes the new catalogue keeps
	// (docs/CONTRACT.md, Changes), this one included: it compares itself
	// with the catalogue at DB, when there is one. 0 keeps none and
	// compares nothing; a dry run compares nothing either.
	History int

	// Progress, when set, is called now and then with the bytes read so far
	// and the total, which is -1 when not known (standard input).
	Progress func(read, total int64)

	// Now returns the import time; time.Now when nil.
	Now func() time.Time

	// afterCard, in tests, runs after each card is written and can inject
	// a failure.
	afterCard func(n int64) error
	// finished, in tests, runs once the new file is finished, before it
	// replaces the catalogue: where a long Finish would be interrupted.
	finished func()
	// syncDir, in tests, stands in for syncing the directory of DB after
	// the new file replaced the catalogue.
	syncDir func(dir string) error
}

// ErrNotSynced is returned, wrapped, with a whole Result when the new file
// replaced the catalogue but its directory could not be synced: serve reads
// the new catalogue, and a crash before the system writes the directory may
// bring the previous one back.
var ErrNotSynced = errors.New("the directory could not be synced")

// Result describes a finished import.
type Result struct {
	Info   store.Info
	Path   string // the catalogue written; empty for a dry run
	DryRun bool
	// Unfollowed says why the catalogue at DB could not be compared with
	// the new one, which then starts a history of its own; nil when it was
	// compared, or when there was none.
	Unfollowed error
}

// Import reads every input, validates it and, unless cfg.DryRun, replaces
// the catalogue at cfg.DB with the result. It returns a *ValidationError when
// the snapshots are invalid; nothing is written then. An error wrapping
// ErrNotSynced comes with the whole Result: the catalogue was replaced.
func Import(ctx context.Context, cfg Config) (Result, error) {
	if len(cfg.Inputs) == 0 {
		return Result{}, errors.New("import: no snapshot given")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	dbPath, err := catalogueFile(cfg.DB)
	if err != nil {
		return Result{}, err
	}
	if !cfg.DryRun {
		if err := replaceable(dbPath, cfg.DB, cfg.Inputs); err != nil {
			return Result{}, err
		}
	}
	tmp, release, err := workFile(dbPath, cfg.DryRun)
	if err != nil {
		return Result{}, err
	}
	defer release()
	w, err := build.Create(tmp)
	if err != nil {
		return Result{}, fmt.Errorf("import: %w", err)
	}
	run := &run{ctx: ctx, cfg: cfg, w: w, rejected: make(map[setRef]bool)}
	info, err := run.readAll()
	if err == nil {
		// An interrupt while reading the tail of the input is still an
		// interrupt: nothing is replaced.
		err = ctx.Err()
	}
	if err != nil {
		w.Abort()
		return Result{}, err
	}
	replaced, closePrev, unfollowed := follow(w, dbPath, cfg)
	defer closePrev()
	info.Generation = store.NewGeneration(info.ImportedAt, replaced)
	if info, err = w.Finish(ctx, info); err != nil {
		if ctx.Err() != nil {
			return Result{}, ctx.Err()
		}
		return Result{}, fmt.Errorf("import: %w", err)
	}
	if unfollowed == nil {
		unfollowed = w.Unfollowed()
	}
	if cfg.finished != nil {
		cfg.finished()
	}
	if err := ctx.Err(); err != nil {
		// Interrupted while the file was finished: it is complete, and
		// still not to replace the catalogue.
		os.Remove(tmp)
		return Result{}, err
	}
	if cfg.DryRun {
		os.Remove(tmp)
		return Result{Info: info, DryRun: true}, nil
	}
	if err := os.Rename(tmp, dbPath); err != nil {
		os.Remove(tmp)
		return Result{}, fmt.Errorf("import: replace %s: %w", dbPath, err)
	}
	res := Result{Info: info, Path: dbPath, Unfollowed: unfollowed}
	sync := syncDir
	if cfg.syncDir != nil {
		sync = cfg.syncDir
	}
	if err := sync(filepath.Dir(dbPath)); err != nil {
		return res, fmt.Errorf("import: %s was replaced, but %w: %w", dbPath, ErrNotSynced, err)
	}
	return res, nil
}

// follow has w compare the new catalogue with the one at dbPath, and keep
// its history, when the import keeps one. It returns the generation
// replaced ("" for none), what closes it once the new one is written, and
// why it could not be read if it could not (the new one then starts a
// history of its own).
//
// Without a history the catalogue replaced is still read for its
// generation, which the new one's name must sort after (NewGeneration).
func follow(w *build.Writer, dbPath string, cfg Config) (replaced string, closePrev func(), unfollowed error) {
	if cfg.DryRun {
		return "", func() {}, nil
	}
	prev, err := store.OpenToFollow(dbPath)
	switch {
	case err == nil && cfg.History > 0:
		w.Follow(prev, cfg.History)
		return prev.Generation(), func() { prev.Close() }, nil
	case err == nil:
		defer prev.Close()
		return prev.Generation(), func() {}, nil
	case errors.Is(err, fs.ErrNotExist) || cfg.History <= 0:
		return "", func() {}, nil
	}
	return "", func() {}, err
}

// workFile returns the file a new catalogue for dbPath is written to, and
// what releases what it took: beside dbPath, under the lock of imports
// into it (stale files of killed imports removed), or, for a dry run, in a
// directory of its own, so that nothing is created beside dbPath.
func workFile(dbPath string, dryRun bool) (tmp string, release func(), err error) {
	dir, base := filepath.Split(dbPath)
	if dryRun {
		scratch, err := os.MkdirTemp("", "catalogd-dry-run-")
		if err != nil {
			return "", nil, fmt.Errorf("import: dry run: %w", err)
		}
		return filepath.Join(scratch, base), func() { os.RemoveAll(scratch) }, nil
	}
	unlock, err := lockImports(dbPath)
	if err != nil {
		return "", nil, err
	}
	removeStaleTemps(dir, base)
	return filepath.Join(dir, fmt.Sprintf(".%s.import-%d", base, os.Getpid())), unlock, nil
}

// lockImports serialises imports into one catalogue, so that two never race
// on its temporary files.
func lockImports(dbPath string) (func(), error) {
	f, err := os.OpenFile(dbPath+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("import: lock %s: %w", dbPath, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("import: %s: another import into this catalogue is running", dbPath)
		}
		// A file system without locks (some network and FUSE mounts).
		return nil, fmt.Errorf("import: lock %s.lock: %w", dbPath, err)
	}
	return func() { f.Close() }, nil
}

// removeStaleTemps removes what a killed import left behind. Under the lock,
// no other import is writing them.
// The name is matched as it is, not as a pattern: a --db of c[0-9].db
// must not take c1.db's temporary file for its own.
func removeStaleTemps(dir, base string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		// Its own end in a pid: .c.db.import-7.import-42 is c.db.import-7's.
		pid, ok := strings.CutPrefix(e.Name(), "."+base+".import-")
		if _, err := strconv.Atoi(pid); ok && err == nil {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

// run is the state of one import.
type run struct {
	ctx context.Context
	cfg Config
	w   *build.Writer

	errs      []*RecordError
	truncated bool
	// unread: a file could not be read to its end (errUnread), and was
	// reported.
	unread bool

	// rejected holds the zone and code of sets reported as invalid.
	rejected map[setRef]bool
	// namesPastLimit: a name group went past the limits of all groups,
	// and was reported; the groups after it are left out unreported.
	namesPastLimit bool

	curMember string // "sets" or "cards" while inside one, for messages
	curIndex  int

	cards     int64
	readBytes int64
	total     int64
}

// setRef names a set by its zone and code.
type setRef struct{ zone, code string }

// errStop ends reading once MaxErrors problems are known.
var errStop = errors.New("too many errors")

// errUnread ends the reading of a file that is not JSON, or could not be
// read, past a point, once that is reported: the rest of it is neither
// read nor waited for (a stream that never ends, a stalled pipe).
var errUnread = errors.New("the file could not be read to its end")

func (r *run) report(e *RecordError) error {
	if len(r.errs) >= MaxErrors {
		r.truncated = true
		return errStop
	}
	// The id may be part of the record's decoded text, which a problem
	// kept until the end must not keep: a record holds up to a megabyte.
	e.ID = strings.Clone(e.ID)
	r.errs = append(r.errs, e)
	return nil
}

func (r *run) readAll() (store.Info, error) {
	// The generation's name says when it was imported (Import names it).
	info := store.Info{ImportedAt: r.cfg.Now().UTC().Truncate(time.Second)}
	r.total = 0
	for _, in := range r.cfg.Inputs {
		if in == "-" {
			r.total = -1
			break
		}
		st, err := os.Stat(in)
		if err != nil {
			return info, fmt.Errorf("import: %w", err)
		}
		r.total += st.Size()
	}
	for _, in := range r.cfg.Inputs {
		src, err := r.readInput(in)
		if errors.Is(err, errStop) {
			break
		}
		if err != nil {
			return info, err
		}
		info.Sources = append(info.Sources, src)
	}
	if !r.truncated {
		if err := r.checkPending(); err != nil {
			return info, err
		}
	}
	r.sortErrors()
	if len(r.errs) > 0 {
		return info, &ValidationError{Errors: r.errs, Truncated: r.truncated}
	}
	return info, nil
}

// sortErrors puts the problems in file order: a card whose set was not known
// when it was read is only reported once every set is, after problems that
// follow it in the file.
func (r *run) sortErrors() {
	order := make(map[string]int, len(r.cfg.Inputs))
	for i, in := range r.cfg.Inputs {
		if in == "-" {
			in = "<stdin>"
		}
		if _, ok := order[in]; !ok {
			order[in] = i
		}
	}
	slices.SortStableFunc(r.errs, func(a, b *RecordError) int {
		return cmp.Or(cmp.Compare(order[a.File], order[b.File]), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
}

// readInput reads one snapshot file. Problems in the data are reported; the
// error returned is errStop, a context error, or a failure to read or write.
func (r *run) readInput(name string) (store.Source, error) {
	src := store.Source{Name: name}
	var f io.Reader
	var before os.FileInfo
	if name == "-" {
		src.Name = "<stdin>"
		if r.cfg.Stdin == nil {
			return src, errors.New("import: '-' given but there is no standard input")
		}
		f = interruptible(r.ctx, r.cfg.Stdin)
	} else {
		file, err := openInput(r.ctx, name)
		if err != nil {
			return src, fmt.Errorf("import: %w", err)
		}
		defer file.Close()
		if before, err = file.Stat(); err != nil {
			return src, fmt.Errorf("import: %w", err)
		}
		if before.IsDir() {
			return src, fmt.Errorf("import: %s is a directory, not a snapshot", name)
		}
		f = file
		if !before.Mode().IsRegular() {
			// A pipe (<(cmd), /dev/stdin) has no size to compare, and
			// may stall.
			before = nil
			f = interruptible(r.ctx, file)
		}
	}

	h := sha256.New()
	counted := &countingReader{r: f, h: h, run: r}
	br := bufio.NewReaderSize(counted, 64<<10)
	var in io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return src, fmt.Errorf("import: %s: gzip: %w", src.Name, err)
		}
		defer zr.Close()
		in = zr
	}
	s := newScanner(in)
	if err := r.readSnapshot(src.Name, s); errors.Is(err, errUnread) {
		return src, nil // reported: what follows is not to be read, nor waited for
	} else if err != nil {
		return src, err
	}
	// Hash what is left (trailing bytes after a gzip member, say) so the
	// digest is the file's.
	if _, err := io.Copy(io.Discard, br); err != nil {
		return src, fmt.Errorf("import: read %s: %w", src.Name, err)
	}
	if before != nil {
		after, err := os.Stat(name)
		if err != nil || after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime()) || after.Size() != counted.n {
			return src, fmt.Errorf("import: %s changed while it was read; import it again once it is complete", name)
		}
	}
	src.SHA256 = hex.EncodeToString(h.Sum(nil))
	src.Bytes = counted.n
	return src, nil
}

// countingReader hashes and counts what passes and reports progress.
type countingReader struct {
	r        io.Reader
	h        hash.Hash
	n        int64
	run      *run
	reported int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	c.h.Write(p[:n])
	c.run.readBytes += int64(n)
	if c.run.cfg.Progress != nil && (c.n-c.reported >= 1<<20 || err != nil) {
		c.reported = c.n
		c.run.cfg.Progress(c.run.readBytes, c.run.total)
	}
	return n, err
}

// readSnapshot reads {"sets": [...], "cards": [...]}, and "names" when it
// is there.
func (r *run) readSnapshot(file string, s *scanner) error {
	fatal := func(record string, err error) error {
		var se *syntaxError
		if errors.Is(err, errStop) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, errWrite) {
			return err
		}
		r.unread = true
		if errors.As(err, &se) {
			err = r.report(&RecordError{File: file, Line: se.line, Column: se.col, Record: record, Found: "invalid JSON: " + se.msg})
		} else {
			line, col := s.position()
			err = r.report(&RecordError{File: file, Line: line, Column: col, Record: record, Found: "cannot read the file: " + err.Error()})
		}
		return cmp.Or(err, errUnread)
	}
	r.curMember = "" // a syntax error in the previous file left its record behind

	line, col := s.start()
	kind, err := s.kind()
	if err != nil {
		return fatal("", err)
	}
	if kind != "object" {
		found, err := s.skipValue()
		if err != nil {
			return fatal("", err)
		}
		return r.report(&RecordError{File: file, Line: line, Column: col, Expected: `a snapshot object {"sets": [...], "cards": [...]}`, Found: found})
	}
	seen := map[string]bool{}
	more, err := s.first('{', '}', "an object")
	for err == nil && more {
		kline, kcol := s.start()
		var member string
		if member, err = s.readString(); err != nil && !errors.Is(err, errTooLong) {
			break
		}
		if err = s.expect(':', "':'"); err != nil {
			break
		}
		switch {
		case (member == "sets" || member == "cards" || member == "names") && seen[member]:
			err = r.report(&RecordError{File: file, Line: kline, Column: kcol, Field: member, Expected: "each member once", Found: "a duplicate member"})
			if err == nil {
				_, err = s.skipValue()
			}
		case member == "sets" || member == "cards":
			seen[member] = true
			err = r.readArray(file, member, s)
		case member == "names":
			seen[member] = true
			err = r.readNames(file, s)
		default:
			var found string
			if found, err = s.skipValue(); err == nil {
				err = r.report(&RecordError{File: file, Line: kline, Column: kcol, Field: unknownMember(member), Expected: `only the members "sets", "cards" and "names"`, Found: found})
			}
		}
		if err == nil {
			more, err = s.more('}')
		}
	}
	if err != nil {
		return fatal(r.recordName(), err)
	}
	end, err := s.atEOF()
	if err != nil {
		return fatal("", err)
	}
	return r.endSnapshot(file, s, end, line, col, seen)
}

// endSnapshot reports what is wrong once a snapshot object, which started
// at line and col, has been read: more data after it, unless it ended the
// file, and each required member it lacked.
func (r *run) endSnapshot(file string, s *scanner, end bool, line, col int, seen map[string]bool) error {
	if !end {
		line, col := s.position()
		return r.report(&RecordError{File: file, Line: line, Column: col, Expected: "the end of the file after the snapshot object", Found: "more data"})
	}
	for _, member := range []string{"sets", "cards"} {
		if !seen[member] {
			if err := r.report(&RecordError{File: file, Line: line, Column: col, Field: member, Expected: fmt.Sprintf("the member %q (an array, which may be empty)", member), Found: "none"}); err != nil {
				return err
			}
		}
	}
	return nil
}
