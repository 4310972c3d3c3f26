package importer

import (
	"context"
	"io"
	"io/fs"
	"os"
)

// interruptible returns r as a reader whose Read returns ctx's error as
// soon as ctx is done, even while a read of r is waiting: standard input or
// a named pipe whose writer stalls would otherwise keep an interrupted
// import waiting for data, its temporary file in place, since a blocked
// read(2) cannot be cancelled. Each read runs in a goroutine of its own,
// into a buffer of its own, so one left waiting when the import ends
// writes nothing the import still uses.
func interruptible(ctx context.Context, r io.Reader) io.Reader {
	return &ctxReader{ctx: ctx, r: r, done: make(chan readResult, 1)}
}

// openInput opens the snapshot at name. Opening a named pipe waits in
// open(2) for a writer, which a signal does not end either: it is opened in
// a goroutine the import leaves behind, to close what it opens, when ctx
// is done.
func openInput(ctx context.Context, name string) (*os.File, error) {
	if fi, err := os.Stat(name); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		return os.Open(name)
	}
	type opened struct {
		f   *os.File
		err error
	}
	done := make(chan opened, 1)
	go func() {
		f, err := os.Open(name)
		done <- opened{f, err}
	}()
	select {
	case o := <-done:
		return o.f, o.err
	case <-ctx.Done():
		go func() {
			if o := <-done; o.f != nil {
				o.f.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

type ctxReader struct {
	ctx  context.Context
	r    io.Reader
	done chan readResult // the result of the read in flight

	buf      []byte
	inFlight bool
	rest     []byte // read and not yet returned
	err      error  // to return once rest is
}

type readResult struct {
	n   int
	err error
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if len(c.rest) == 0 && c.err == nil {
		if err := c.ctx.Err(); err != nil {
			return 0, err
		}
		if !c.inFlight {
			if len(c.buf) < len(p) {
				c.buf = make([]byte, len(p))
			}
			buf := c.buf[:len(p)]
			c.inFlight = true
			go func() {
				n, err := c.r.Read(buf)
				c.done <- readResult{n, err}
			}()
		}
		select {
		case res := <-c.done:
			c.inFlight = false
			c.rest, c.err = c.buf[:res.n], res.err
		case <-c.ctx.Done():
			return 0, c.ctx.Err()
		}
	}
	n := copy(p, c.rest)
	c.rest = c.rest[n:]
	if len(c.rest) > 0 {
		return n, nil
	}
	err := c.err
	c.err = nil
	return n, err
}
