package build

import (
	"encoding/binary"
	"errors"
	"sync"

	"github.com/catalogd/catalogd/catalog/store/internal/layout"
)

// putBeside runs produce on a goroutine of its own and puts what it puts,
// in order, through put on the caller's goroutine, which owns the transaction:
// what a merge of sorted runs writes is made on one core while bbolt
// takes it on the other (docs/BENCHMARKS.md, "Sorts, prefixes and
// lists beside what feeds them"). The keys and values are copied, in batches of
// putBatchBytes. It returns the first error of either side; after an
// error of put (or a panic), produce's puts fail from its next batch on,
// and it stops.
func putBeside(produce func(put func(key, value []byte) error) error, put func(key, value []byte) error) error {
	batches := make(chan []byte, 4)
	spare := make(chan []byte, 4)
	stop := make(chan struct{})
	var stopOnce sync.Once
	halt := func() { stopOnce.Do(func() { close(stop) }) }
	defer halt()
	var produced error
	go func() {
		defer close(batches)
		var b []byte
		send := func() bool {
			select {
			case batches <- b:
			case <-stop:
				return false
			}
			select {
			case b = <-spare:
			default:
				b = nil
			}
			return true
		}
		produced = produce(func(key, value []byte) error {
			b = binary.AppendUvarint(b, uint64(len(key)))
			b = append(b, key...)
			b = binary.AppendUvarint(b, uint64(len(value)))
			b = append(b, value...)
			if len(b) >= putBatchBytes && !send() {
				return errPutStopped
			}
			return nil
		})
		if len(b) > 0 && !send() && produced == nil {
			produced = errPutStopped
		}
	}()
	var err error
	for b := range batches {
		if err == nil {
			if err = putBatch(b, put); err != nil {
				halt()
			}
		}
		select {
		case spare <- b[:0]:
		default:
		}
	}
	// batches is closed: produce has returned.
	if err != nil {
		return err
	}
	return produced
}

// putBatchBytes is the size of a batch of putBeside.
const putBatchBytes = 256 << 10

// errPutStopped is what produce's puts return once put has failed.
var errPutStopped = errors.New("write catalogue: stopped by an earlier error")

// putBatch puts each key and value of a batch of putBeside.
func putBatch(b []byte, put func(key, value []byte) error) error {
	for len(b) > 0 {
		key, rest, ok := layout.LengthPrefixed(b)
		if !ok {
			return layout.ErrBadEntry
		}
		value, rest, ok := layout.LengthPrefixed(rest)
		if !ok {
			return layout.ErrBadEntry
		}
		if err := put(key, value); err != nil {
			return err
		}
		b = rest
	}
	return nil
}
