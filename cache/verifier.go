package cache

import (
	"bytes"
	"fmt"
	"sync/atomic"
	"weak"
)

// verifier hashes the blocks of a multi-block content in order as reads
// cover them, and compares the sum when the whole content has passed: every
// block hashed and a read reaching the end served. A block read ahead of the
// hashed prefix is remembered, with the identity of the slice served, and
// taken from the cache when the prefix reaches it; if it was evicted
// meanwhile, or the cache now holds another fetch of it, or too many are
// pending, the pass is abandoned and the next read starts another.
//
// A block is hashed whole the first time a read touches it. The last
// blocks hashed stay held, so that a later read of the rest of one of them
// is checked against the very bytes hashed: if the block was evicted and
// fetched again meanwhile, the new fetch must have the same bytes, or the
// read fails with ErrIntegrity. Not safe for concurrent use.
type verifier struct {
	digest     digest
	uri        string
	lastBlock  int64
	maxPending int
	lookup     func(block int64) ([]byte, bool) // a cached block, without fetching
	hashed     *atomic.Uint64                   // the Cache's count of bytes hashed

	h         *hashPipe
	hashedIDs []weak.Pointer[byte] // the pass's hashed slices, by block (sliceID)
	passed    *chain               // what the last pass that matched left (chain.go)
	next      int64                // next block to hash; -1 when no pass is in progress
	pending   map[int64]weak.Pointer[byte]
	recent    [recentHashed]hashedBlock
	sawEnd    bool
}

// recentHashed is how many of the last blocks hashed a pass holds: a read
// spans at most two blocks.
const recentHashed = 2

// hashedBlock is a block a pass hashed, and the bytes it hashed.
type hashedBlock struct {
	b    int64
	data []byte
}

// sliceID identifies the memory of a block's slice (blocks never change, so
// the same slice is the same bytes), without keeping it alive.
func sliceID(data []byte) weak.Pointer[byte] {
	if len(data) == 0 {
		return weak.Pointer[byte]{}
	}
	return weak.Make(&data[0])
}

func newVerifier(d digest, uri string, lastBlock int64, maxPending int, lookup func(int64) ([]byte, bool), hashed *atomic.Uint64) *verifier {
	return &verifier{digest: d, uri: uri, lastBlock: lastBlock, maxPending: maxPending, lookup: lookup, hashed: hashed, next: -1}
}

// observe takes the blocks first, first+1, ... that a read covered, and
// whether the read reached the end of the content. When the pass is
// complete it returns the result of the comparison (an ErrIntegrity on
// mismatch) and done is true.
func (v *verifier) observe(first int64, blocks [][]byte, reachesEnd bool) (done bool, err error) {
	if v.next < 0 {
		v.start()
	}
	v.sawEnd = v.sawEnd || reachesEnd
	for i, data := range blocks {
		ok, err := v.take(first+int64(i), data)
		if err != nil {
			v.stop()
			return true, err
		}
		if !ok {
			v.stop()
			return false, nil
		}
	}
	if v.next <= v.lastBlock || !v.sawEnd {
		return false, nil
	}
	sum := v.h.Sum()
	err = v.digest.check(v.uri, sum)
	if err == nil {
		v.passed = v.h.rec.chain(v.digest.new, v.hashedIDs, v.hashed)
	}
	v.h = nil
	v.stop()
	return true, err
}

// takeChain returns, once, the chain of the pass that last matched.
func (v *verifier) takeChain() *chain {
	c := v.passed
	v.passed = nil
	return c
}

// take hashes block b if it extends the prefix (then the pending blocks that
// follow it), or remembers it. It returns false when the pass cannot go on,
// and an ErrIntegrity when data is a block the pass hashed, fetched again
// with other bytes.
func (v *verifier) take(b int64, data []byte) (bool, error) {
	switch {
	case b < v.next:
		return true, v.checkHashed(b, data)
	case b > v.next:
		id := sliceID(data)
		if seen, ok := v.pending[b]; ok && seen != id {
			return false, nil // served from two fetches before the prefix came
		}
		v.pending[b] = id
		return len(v.pending) <= v.maxPending, nil
	}
	v.hash(b, data)
	for {
		id, ok := v.pending[v.next]
		if !ok {
			return true, nil
		}
		held, ok := v.lookup(v.next)
		if !ok || sliceID(held) != id {
			return false, nil // evicted, or fetched again: not the bytes served
		}
		delete(v.pending, v.next)
		v.hash(v.next, held)
	}
}

// hash feeds block b to the pass and holds it among the recent ones.
func (v *verifier) hash(b int64, data []byte) {
	v.h.Write(data)
	if v.hashedIDs != nil {
		v.hashedIDs[b] = sliceID(data)
	}
	v.recent[b%recentHashed] = hashedBlock{b: b, data: data}
	v.next = b + 1
}

// checkHashed checks a read of block b, which the pass has hashed: if it
// is one of the recent blocks and the read got another fetch of it, the
// bytes must be the ones hashed. (An older block read again is not
// checked: its bytes are no longer held.)
func (v *verifier) checkHashed(b int64, data []byte) error {
	h := v.recent[b%recentHashed]
	// The same slice, the usual case, compares equal at once: the runtime
	// compares the pointers before the bytes.
	if h.data == nil || h.b != b || bytes.Equal(h.data, data) {
		return nil
	}
	return fmt.Errorf("%w: %s: block %d was fetched again during a pass over the content, with other bytes than those hashed", ErrIntegrity, v.uri, b)
}

func (v *verifier) start() {
	chained := v.lastBlock < chainMaxBlocks // a larger content is verified by passes every time
	v.h = newHashPipe(v.digest.new(), chained, v.hashed)
	if chained {
		v.hashedIDs = make([]weak.Pointer[byte], v.lastBlock+1)
	}
	v.next = 0
	v.pending = make(map[int64]weak.Pointer[byte])
	v.sawEnd = false
}

func (v *verifier) stop() {
	if v.h != nil {
		v.h.Abort()
	}
	v.h = nil
	v.hashedIDs = nil
	v.next = -1
	v.pending = nil
	v.recent = [recentHashed]hashedBlock{}
	v.sawEnd = false
}
