package cache

// verifier hashes the blocks of a multi-block content in order as reads
// cover them, and compares the sum when the whole content has passed: every
// block hashed and a read reaching the end served. A block read ahead of the
// hashed prefix is remembered by index and taken from the cache when the
// prefix reaches it; if it was evicted meanwhile, or too many are pending,
// the pass is abandoned and the next read starts another. Not safe for
// concurrent use.
type verifier struct {
	digest     digest
	uri        string
	lastBlock  int64
	maxPending int
	lookup     func(block int64) ([]byte, bool) // a cached block, without fetching

	h       *hashPipe
	next    int64 // next block to hash; -1 when no pass is in progress
	pending map[int64]struct{}
	sawEnd  bool
}

func newVerifier(d digest, uri string, lastBlock int64, maxPending int, lookup func(int64) ([]byte, bool)) *verifier {
	return &verifier{digest: d, uri: uri, lastBlock: lastBlock, maxPending: maxPending, lookup: lookup, next: -1}
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
		if !v.take(first+int64(i), data) {
			v.stop()
			return false, nil
		}
	}
	if v.next <= v.lastBlock || !v.sawEnd {
		return false, nil
	}
	sum := v.h.Sum()
	v.h = nil
	v.stop()
	return true, v.digest.check(v.uri, sum)
}

// take hashes block b if it extends the prefix (then the pending blocks that
// follow it), or remembers it. It returns false when the pass cannot go on.
func (v *verifier) take(b int64, data []byte) bool {
	switch {
	case b < v.next:
		return true
	case b > v.next:
		v.pending[b] = struct{}{}
		return len(v.pending) <= v.maxPending
	}
	v.h.Write(data)
	v.next++
	for {
		if _, ok := v.pending[v.next]; !ok {
			return true
		}
		held, ok := v.lookup(v.next)
		if !ok {
			return false
		}
		delete(v.pending, v.next)
		v.h.Write(held)
		v.next++
	}
}

func (v *verifier) start() {
	v.h = newHashPipe(v.digest.new())
	v.next = 0
	v.pending = make(map[int64]struct{})
	v.sawEnd = false
}

func (v *verifier) stop() {
	if v.h != nil {
		v.h.Abort()
	}
	v.h = nil
	v.next = -1
	v.pending = nil
	v.sawEnd = false
}
