package cache

import (
	"bytes"
	"encoding"
	"fmt"
	"hash"
	"sync"
	"sync/atomic"
	"weak"
)

// A streamed content (more than one block, over VerifyWholeBelow) is
// verified by a pass over all its blocks in order (verifier.go). Without
// more, every File of it would hash it all again, on every whole read: a
// re-read from the memory cache (its pages evicted from the kernel's) cost
// the hash of the whole content, as its first read did.
//
// A pass that matches leaves a chain behind: the hash's state after each
// block. Any one block can then be checked on its own, as a verified
// whole content's are by their sums (versions.checkBlock): the state
// before it, restored, hashes it into the state after it, or its bytes are
// not the ones the pass verified. The chain also remembers, per block,
// which slice was last found good, so that a read of that slice (a cached
// block never changes) needs no hashing at all: after a pass, the blocks it
// hashed are read again for free. A block a fill fetches again on its own
// is checked before it is stored; one a stream or the disk cache brings
// back is checked once, beside the reads (chainCheck), as a pass hashes.
type chain struct {
	newHash   func() hash.Hash
	hashed    *atomic.Uint64 // bytes hashed are counted here, if set
	stateSize int
	states    []byte // the marshalled state after block b at b*stateSize

	mu   sync.Mutex
	good []weak.Pointer[byte] // by block: the slice last checked good (sliceID)
}

// chainMaxBlocks bounds the blocks of the chains versions keeps, oldest
// dropped first (a content whose chain was dropped is verified by passes
// again): at 1 MiB blocks, 32 GiB of verified content, in about 4 MiB.
const chainMaxBlocks = 1 << 15

// chainRecorder collects the states of a pass as it hashes, in order.
type chainRecorder struct {
	m      encoding.BinaryMarshaler
	states []byte
	size   int  // of one state; 0 until the first
	broken bool // a state could not be marshalled, or had another size
}

// newChainRecorder records h's states, or returns nil if h cannot marshal
// them (then passes leave no chain).
func newChainRecorder(h hash.Hash) *chainRecorder {
	m, ok := h.(encoding.BinaryMarshaler)
	if !ok {
		return nil
	}
	if _, ok := h.(encoding.BinaryUnmarshaler); !ok {
		return nil
	}
	return &chainRecorder{m: m}
}

// record appends the hash's state after one more block.
func (r *chainRecorder) record() {
	if r.broken {
		return
	}
	st, err := r.m.MarshalBinary()
	switch {
	case err != nil, r.size != 0 && len(st) != r.size:
		r.broken, r.states = true, nil
		return
	case r.size == 0:
		r.size = len(st)
	}
	r.states = append(r.states, st...)
}

// chain returns the chain of a pass that hashed blocks whose slices are
// ids, in order, or nil if the states are not all there.
func (r *chainRecorder) chain(newHash func() hash.Hash, ids []weak.Pointer[byte], hashed *atomic.Uint64) *chain {
	if r == nil || r.broken || r.size == 0 || len(r.states) != r.size*len(ids) {
		return nil
	}
	return &chain{newHash: newHash, hashed: hashed, stateSize: r.size, states: r.states, good: ids}
}

func (c *chain) blocks() int { return len(c.good) }

func (c *chain) stateAfter(b int64) []byte {
	return c.states[b*int64(c.stateSize) : (b+1)*int64(c.stateSize)]
}

// check verifies that data is block b's bytes as the pass verified them.
// A slice found good before passes at once.
func (c *chain) check(uri string, b int64, data []byte) error {
	if b < 0 || b >= int64(c.blocks()) {
		return fmt.Errorf("%w: %s: block %d is past the %d blocks that were verified", ErrIntegrity, uri, b, c.blocks())
	}
	if c.known(b, data) {
		return nil
	}
	h := c.newHash()
	if b > 0 {
		if err := h.(encoding.BinaryUnmarshaler).UnmarshalBinary(c.stateAfter(b - 1)); err != nil {
			return fmt.Errorf("cache: %s: restore the hash before block %d: %w", uri, b, err)
		}
	}
	h.Write(data)
	countHashed(c.hashed, len(data))
	st, err := h.(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		return fmt.Errorf("cache: %s: the hash after block %d: %w", uri, b, err)
	}
	if !bytes.Equal(st, c.stateAfter(b)) {
		return fmt.Errorf("%w: %s: block %d differs from the bytes verified earlier", ErrIntegrity, uri, b)
	}
	id := sliceID(data)
	c.mu.Lock()
	c.good[b] = id
	c.mu.Unlock()
	return nil
}

// known reports whether data is the slice last found good for block b.
func (c *chain) known(b int64, data []byte) bool {
	if len(data) == 0 || b < 0 || b >= int64(len(c.good)) {
		return false
	}
	c.mu.Lock()
	good := c.good[b]
	c.mu.Unlock()
	return good.Value() == &data[0] // no weak pointer made: a read's check is a load
}

// chainCheck checks, beside a File's reads (beside.go), the blocks they
// were served that the chain does not know yet (read back from the disk
// cache, say), as a pass hashes beside them: reads go on, a mismatch fails
// the File's next read, and a read that reaches the end waits for every
// check before it. Not for concurrent use (the File's lock is held).
type chainCheck struct {
	work *beside[chainItem]
	bad  chan struct{} // closed at the first mismatch, once err is set
	err  error
	last chainItem // the last block queued: the reads of one block queue it once
}

type chainItem struct {
	b    int64
	data []byte
}

// newChainCheck starts the checks; onBad is called (from the checks'
// goroutine) at the first mismatch, before a read can be told of it.
func newChainCheck(c *chain, uri string, onBad func(error)) *chainCheck {
	k := &chainCheck{bad: make(chan struct{}), last: chainItem{b: -1}}
	k.work = startBeside(func(it chainItem) {
		if k.err != nil {
			return
		}
		if k.err = c.check(uri, it.b, it.data); k.err != nil {
			onBad(k.err)
			close(k.bad)
		}
	})
	return k
}

// add queues block b's data for checking, unless it was the last queued.
func (k *chainCheck) add(b int64, data []byte) {
	if k.last.b == b && len(k.last.data) == len(data) && (len(data) == 0 || &k.last.data[0] == &data[0]) {
		return
	}
	k.last = chainItem{b, data}
	k.work.add(k.last)
}

// failed returns the mismatch found so far, if any, without waiting.
func (k *chainCheck) failed() error {
	select {
	case <-k.bad:
		return k.err
	default:
		return nil
	}
}

// wait ends the checks and returns the first mismatch, if any.
func (k *chainCheck) wait() error {
	k.work.finish()
	return k.err
}

// abort ends the checks without making those still queued.
func (k *chainCheck) abort() { k.work.abort() }
