package sourcetest

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"io"
	"sync"

	"rsfs/resourcesync"
)

// digestSize is the raw digest length of each supported algorithm.
var digestSize = map[string]int{"md5": md5.Size, "sha-1": sha1.Size, "sha-256": sha256.Size}

func newHasher(alg string) hash.Hash {
	switch alg {
	case "sha-1":
		return sha1.New()
	case "sha-256":
		return sha256.New()
	}
	return md5.New()
}

// digests returns the raw digests of the bytes write produces, one per
// algorithm, concatenated in the order of algs.
func digests(algs []string, write func(io.Writer) error) ([]byte, error) {
	hs := make([]hash.Hash, len(algs))
	ws := make([]io.Writer, len(algs))
	for i, a := range algs {
		hs[i] = newHasher(a)
		ws[i] = hs[i]
	}
	if err := write(io.MultiWriter(ws...)); err != nil {
		return nil, err
	}
	var out []byte
	for _, h := range hs {
		out = h.Sum(out)
	}
	return out, nil
}

// bytesDigests digests a byte slice.
func bytesDigests(algs []string, b []byte) []byte {
	d, _ := digests(algs, func(w io.Writer) error { _, err := w.Write(b); return err })
	return d
}

// genDigests digests a generated body.
func genDigests(algs []string, g genBody) []byte {
	d, _ := digests(algs, g.writeTo)
	return d
}

// toHashes turns concatenated raw digests into published hash values.
func toHashes(algs []string, raw []byte) []resourcesync.Hash {
	out := make([]resourcesync.Hash, 0, len(algs))
	for _, a := range algs {
		n := digestSize[a]
		out = append(out, resourcesync.Hash{Alg: a, Value: hex.EncodeToString(raw[:n])})
		raw = raw[n:]
	}
	return out
}

// hashCache keeps the digests of unmodified generated resources once they
// have been computed: a flat slab of fixed-size records and a bitmap.
type hashCache struct {
	mu     sync.RWMutex
	recLen int
	slab   []byte
	done   []uint64
}

func newHashCache(algs []string, n int) *hashCache {
	rec := 0
	for _, a := range algs {
		rec += digestSize[a]
	}
	return &hashCache{recLen: rec, slab: make([]byte, n*rec), done: make([]uint64, (n+63)/64)}
}

// get returns a copy of the digests of resource i, if computed.
func (c *hashCache) get(i int) ([]byte, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.done[i/64]&(1<<(i%64)) == 0 {
		return nil, false
	}
	return append([]byte(nil), c.slab[i*c.recLen:(i+1)*c.recLen]...), true
}

// put stores the digests of resource i.
func (c *hashCache) put(i int, raw []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	copy(c.slab[i*c.recLen:], raw)
	c.done[i/64] |= 1 << (i % 64)
}
