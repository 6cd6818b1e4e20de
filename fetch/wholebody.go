package fetch

import (
	"errors"
	"io"
	"math/bits"
	"sync"
)

// An answer the pipeline reads whole (at most pipeBodyMax) is kept in a
// pooled buffer until its caller closes it. The caller copies the bytes
// out (into a block), so without the pool a first pass over small files
// allocates each file's bytes twice: a fifth of all it allocates, and so of
// its collections.

// wholeClasses are the pool's buffer sizes: 4 KiB << k, up to 2 MiB, which
// holds pipeBodyMax.
const (
	wholeMinShift = 12
	wholeClasses  = 10
)

var wholePools [wholeClasses]sync.Pool // of *[]byte, each of its class's size

// wholeClass is the class of a buffer of n bytes.
func wholeClass(n int) int {
	if n <= 1<<wholeMinShift {
		return 0
	}
	return bits.Len(uint(n-1)) - wholeMinShift
}

// getWhole returns a buffer of n bytes (n ≤ pipeBodyMax) from the pool.
func getWhole(n int) *[]byte {
	k := wholeClass(n)
	if p, ok := wholePools[k].Get().(*[]byte); ok {
		*p = (*p)[:n]
		return p
	}
	b := make([]byte, n, 1<<(wholeMinShift+k))
	return &b
}

// putWhole gives a buffer back to the pool.
func putWhole(p *[]byte) {
	k := wholeClass(cap(*p))
	if k < wholeClasses && cap(*p) == 1<<(wholeMinShift+k) {
		wholePools[k].Put(p)
	}
}

// wholeBody reads an answer held in a pooled buffer, which Close gives back.
// Read and Close may race (a watchdog closes a body under its reader): the
// lock keeps a read from copying out of a buffer already given back, and
// every read after Close fails.
type wholeBody struct {
	mu  sync.Mutex
	buf *[]byte // nil once closed
	off int
}

var errBodyClosed = errors.New("fetch: read on a closed body")

func (b *wholeBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf == nil {
		return 0, errBodyClosed
	}
	if b.off >= len(*b.buf) {
		return 0, io.EOF
	}
	n := copy(p, (*b.buf)[b.off:])
	b.off += n
	return n, nil
}

func (b *wholeBody) Close() error {
	b.mu.Lock()
	buf := b.buf
	b.buf = nil
	b.mu.Unlock()
	if buf != nil {
		putWhole(buf)
	}
	return nil
}
