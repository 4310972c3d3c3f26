package build

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

// TestPutBeside puts what a goroutine produces in its order, and stops
// either side at the other's error.
func TestPutBeside(t *testing.T) {
	entry := func(i int) (key, value []byte) {
		// Now and then a value longer than a batch.
		size := i % 50
		if i%97 == 0 {
			size = putBatchBytes + i
		}
		return fmt.Appendf(nil, "key %06d", i), bytes.Repeat([]byte{byte(i)}, size)
	}
	const n = 3000
	stopped := false
	produce := func(failAt int) func(put func(key, value []byte) error) error {
		return func(put func(key, value []byte) error) error {
			for i := range n {
				if i == failAt {
					return fmt.Errorf("produce failed at %d", i)
				}
				k, v := entry(i)
				if err := put(k, v); err != nil {
					if !errors.Is(err, errPutStopped) {
						t.Errorf("produce's put: %v, want it stopped", err)
					}
					stopped = true
					return err
				}
			}
			return nil
		}
	}
	t.Run("all", func(t *testing.T) {
		got := 0
		err := putBeside(produce(-1), func(key, value []byte) error {
			k, v := entry(got)
			if !bytes.Equal(key, k) || !bytes.Equal(value, v) {
				t.Fatalf("put %d: %q, want %q", got, key, k)
			}
			got++
			return nil
		})
		if err != nil || got != n {
			t.Fatalf("%d put, %v; want %d", got, err, n)
		}
	})
	t.Run("put fails", func(t *testing.T) {
		failed := errors.New("put failed")
		got := 0
		err := putBeside(produce(-1), func(key, value []byte) error {
			if got++; got == 100 {
				return failed
			}
			if got > 100 {
				t.Fatalf("put %d after the error", got)
			}
			return nil
		})
		if !errors.Is(err, failed) || !stopped {
			t.Fatalf("%v, produce stopped %v; want put's error, and produce stopped", err, stopped)
		}
	})
	t.Run("produce fails", func(t *testing.T) {
		got := 0
		err := putBeside(produce(1000), func(key, value []byte) error {
			got++
			return nil
		})
		if err == nil || err.Error() != "produce failed at 1000" || got != 1000 {
			t.Fatalf("%d put, %v; want 1000 and produce's error", got, err)
		}
	})
}
