package cache

import (
	"hash"
	"sync/atomic"
)

// hashPipe hashes beside the reads (beside.go), so a whole-file read does
// not pay for the hash on the read path: reads go on while earlier blocks
// are hashed, and only Sum waits. Blocks handed to Write must not change
// (cache blocks never do). It can record the hash's state after each block
// (chain.go).
type hashPipe struct {
	h      hash.Hash
	rec    *chainRecorder // nil: no states are recorded
	hashed *atomic.Uint64 // bytes hashed are counted here, if set
	work   *beside[[]byte]
}

// newHashPipe starts a pipe; with chained, it records the hash's states.
// The bytes it hashes are counted in hashed, if set.
func newHashPipe(h hash.Hash, chained bool, hashed *atomic.Uint64) *hashPipe {
	p := &hashPipe{h: h, hashed: hashed}
	if chained {
		p.rec = newChainRecorder(h)
	}
	p.work = startBeside(p.hash)
	return p
}

func (p *hashPipe) hash(b []byte) {
	p.h.Write(b)
	countHashed(p.hashed, len(b))
	if p.rec != nil {
		p.rec.record()
	}
}

// Write queues b for hashing.
func (p *hashPipe) Write(b []byte) { p.work.add(b) }

// Sum waits until every queued block is hashed and returns the digest. The
// pipe is finished afterwards; its recorded states may be read.
func (p *hashPipe) Sum() []byte {
	p.work.finish()
	return p.h.Sum(nil)
}

// Abort finishes the pipe without hashing what is still queued.
func (p *hashPipe) Abort() { p.work.abort() }
