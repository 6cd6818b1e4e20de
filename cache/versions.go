package cache

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// A bad version is tried again once its backoff has passed: BadRetryBase
// after its first failure, doubling with each failure in a row up to
// BadRetryMax, or at once after RetryBad (after each poll). Until then
// its reads fail without a request; after it, the next read fetches and
// verifies it again as if it were new, so a version that failed through
// a shared cache that has since been fixed (or purged) reads again
// without a remount.
const (
	BadRetryBase = 5 * time.Second
	BadRetryMax  = 5 * time.Minute
)

// maxVersions bounds the versions remembered as bad or verified; the
// oldest is forgotten first (a forgotten bad version is verified again,
// and fails again, on its next read).
const maxVersions = 4096

// versions remembers what whole-content verification found, per content
// id (a version): a version no copy of which matched the published hash is
// bad, and every later read of it fails until the catalog names a new
// version (a new id) or its backoff passes (it is then tried again); a version that matched keeps the sha-256 of each of
// its blocks, so that a block fetched again after eviction is checked
// against the bytes that were verified.
type versions struct {
	mu    sync.Mutex
	bad   map[string]*badVersion
	good  map[string][][sha256.Size]byte
	order []string // ids in the order they were remembered, for eviction
	now   func() time.Time
	// chains are the streamed versions a pass verified (chain.go), oldest
	// dropped first beyond chainMaxBlocks blocks in all; its count bound
	// is never reached.
	chains      *simplelru.LRU[string, *chain]
	chainBlocks int
	hashed      *atomic.Uint64 // the Cache's count of bytes hashed (countHashed)
}

// badVersion is a version no copy of which matched its published hash.
type badVersion struct {
	err   error
	fails int       // failures in a row
	until time.Time // reads fail without a request until then
}

// newVersions counts the bytes its checks hash in hashed, if set.
func newVersions(hashed *atomic.Uint64) *versions {
	v := &versions{bad: map[string]*badVersion{}, good: map[string][][sha256.Size]byte{}, now: time.Now, hashed: hashed}
	v.chains, _ = simplelru.NewLRU(math.MaxInt, v.chainDropped) // errs only for a size <= 0
	return v
}

// markChained records the chain a pass over streamed version id left.
func (v *versions) markChained(id string, c *chain) {
	if c == nil || c.blocks() > chainMaxBlocks {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.bad, id)
	v.chains.Remove(id)
	v.chains.Add(id, c)
	v.chainBlocks += c.blocks()
	for v.chainBlocks > chainMaxBlocks && v.chains.Len() > 0 {
		v.chains.RemoveOldest()
	}
}

// chainDropped accounts for a chain leaving chains, whatever the reason.
func (v *versions) chainDropped(_ string, c *chain) { v.chainBlocks -= c.blocks() }

// chainOf returns the chain of streamed version id, if a pass verified it.
func (v *versions) chainOf(id string) *chain {
	v.mu.Lock()
	defer v.mu.Unlock()
	c, _ := v.chains.Get(id)
	return c
}

// badErr returns the error a bad version's reads fail with, or nil (also
// once its backoff has passed: it is tried again).
func (v *versions) badErr(id string) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if b := v.bad[id]; b != nil && v.now().Before(b.until) {
		return b.err
	}
	return nil
}

// markBad records that no copy of version id matched its published hash,
// and when it may be tried again.
func (v *versions) markBad(id string, cause error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.good, id)
	v.chains.Remove(id)
	b := v.bad[id]
	if b == nil {
		b = &badVersion{}
		v.bad[id] = b
	}
	b.fails++
	wait := BadRetryMax
	if b.fails <= 16 {
		wait = min(BadRetryBase<<(b.fails-1), BadRetryMax)
	}
	b.until = v.now().Add(wait)
	b.err = fmt.Errorf("%w: this version failed verification on every copy; reads fail until the Source publishes a new one or it is tried again (in %v, or after the next poll): %w", ErrIntegrity, wait, cause)
	v.remember(id)
}

// retryBad lets every bad version be tried again at its next read.
func (v *versions) retryBad() {
	v.mu.Lock()
	defer v.mu.Unlock()
	now := v.now()
	for _, b := range v.bad {
		b.until = now
	}
}

// markGood records the block sums of a version that passed verification.
func (v *versions) markGood(id string, sums [][sha256.Size]byte) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.bad, id)
	v.good[id] = sums
	v.remember(id)
}

// verified reports whether version id passed whole verification.
func (v *versions) verified(id string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	_, ok := v.good[id]
	return ok
}

// checkBlock compares a fetched block of a verified version with the sum
// recorded when it was verified, or, with chained, with its chain
// (chain.go). Unverified versions pass.
func (v *versions) checkBlock(uri, id string, b int64, data []byte, chained bool) error {
	v.mu.Lock()
	sums, ok := v.good[id]
	c, _ := v.chains.Get(id)
	v.mu.Unlock()
	if c != nil && chained {
		return c.check(uri, b, data)
	}
	if !ok || b < 0 || b >= int64(len(sums)) {
		return nil
	}
	countHashed(v.hashed, len(data))
	if sha256.Sum256(data) != sums[b] {
		return fmt.Errorf("%w: %s: block %d differs from the bytes verified earlier", ErrIntegrity, uri, b)
	}
	return nil
}

// remember appends id to the eviction order and evicts the oldest entries
// beyond maxVersions. v.mu must be held.
func (v *versions) remember(id string) {
	v.order = append(v.order, id)
	for len(v.order) > maxVersions {
		old := v.order[0]
		v.order = v.order[1:]
		if !v.stillListed(old) {
			delete(v.bad, old)
			delete(v.good, old)
		}
	}
}

// stillListed reports whether id appears again later in the order (it was
// remembered twice); its newer entry keeps it.
func (v *versions) stillListed(id string) bool {
	for _, o := range v.order {
		if o == id {
			return true
		}
	}
	return false
}

// VersionGone is implemented by fetcher errors that mean the version being
// read is no longer served (the resource changed upstream): like
// ErrIntegrity, such an error ends the File (later reads fail too), so an
// open file never mixes versions.
type VersionGone interface {
	VersionGone() bool
}

// EndsFile reports whether err means the File can serve nothing more of
// its version: bytes that disagree with it, or a version gone.
func EndsFile(err error) bool {
	if errors.Is(err, ErrIntegrity) {
		return true
	}
	var g VersionGone
	return errors.As(err, &g) && g.VersionGone()
}
