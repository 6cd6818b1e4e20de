package prefetch

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/cache"
	"rsfs/catalog"
	"rsfs/resourcesync"
	"rsfs/tests/wait"
)

var (
	aURI   = testOrigin + "/data/a.txt"
	cURI   = testOrigin + "/data/sub/c.txt"
	topURI = testOrigin + "/top.txt"
	cBody  = []byte("c")
)

// unsized is a Prefetcher over a catalog of a.txt, with a length, and
// c.txt and top.txt without one, whose lengths it learns through length.
func unsized(t *testing.T, length func(context.Context, *catalog.Resource) (int64, error)) (*Prefetcher, *catalog.Catalog) {
	t.Helper()
	c := catalog.New(catalog.Options{Origin: testOrigin})
	require.NoError(t, c.Add(&catalog.Resource{URI: aURI, Length: 11}))
	require.NoError(t, c.Add(&catalog.Resource{URI: cURI, Length: resourcesync.NoLength}))
	require.NoError(t, c.Add(&catalog.Resource{URI: topURI, Length: resourcesync.NoLength}))
	require.NoError(t, c.Seal())
	blocks := cache.New(cache.Config{MaxBytes: 1 << 20, BlockSize: 4096, ReadAhead: -1, Logger: quiet})
	t.Cleanup(blocks.Close)
	return newTestPrefetcher(t, Config{Catalog: c, Cache: blocks, Length: length}), c
}

// joined is how many callers of Known wait on another's request.
func (p *Prefetcher) joined() int {
	p.learning.mu.Lock()
	defer p.learning.mu.Unlock()
	n := 0
	for _, c := range p.learning.m {
		n += int(c.joined.Load())
	}
	return n
}

// Lookups of one file whose length is being learned share one request:
// one asks, the others wait on it, and all get its length.
func TestKnownLearnsALengthOnce(t *testing.T) {
	var heads atomic.Int64
	release := make(chan struct{})
	p, cat := unsized(t, func(ctx context.Context, r *catalog.Resource) (int64, error) {
		heads.Add(1)
		select {
		case <-release:
		case <-time.After(testTimeout):
		}
		return int64(len(cBody)), nil
	})
	id := lookup(t, cat, "data/sub/c.txt")
	a, ok := cat.Attr(id)
	require.True(t, ok)
	require.True(t, a.NoSize)
	var wg sync.WaitGroup
	got := make([]catalog.Attr, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			got[i], err = p.Known(context.Background(), id, a)
			assert.NoError(t, err)
		}()
	}
	wait.For(t, "one lookup to ask and the others to wait on it", func() bool { return p.joined() == len(got)-1 })
	close(release)
	wg.Wait()
	assert.Equal(t, int64(1), heads.Load(), "lookups of one file share one request")
	for _, g := range got {
		assert.Equal(t, int64(len(cBody)), g.Size)
		assert.False(t, g.NoSize)
	}
	assert.Equal(t, int64(1), p.LengthsLearned())
	now, _ := cat.Attr(id)
	assert.Equal(t, int64(len(cBody)), now.Size, "recorded in the catalog")
	again, err := p.Known(context.Background(), id, now)
	require.NoError(t, err)
	assert.Equal(t, int64(len(cBody)), again.Size)
	assert.Equal(t, int64(1), heads.Load(), "a learned length is kept")
	// A lookup that read the attributes before the length was learned,
	// and asks once the learning lookup has ended, is answered from the
	// catalog: no second request.
	late, err := p.Known(context.Background(), id, a)
	require.NoError(t, err)
	assert.Equal(t, int64(len(cBody)), late.Size)
	assert.Equal(t, int64(1), heads.Load(), "a lookup with attributes read before the length was learned")
}

// A lookup the kernel interrupts (its process took a signal) stops
// waiting, but its request goes on: the restarted lookup joins it, and the
// Source is asked once (201 HEADs for 200 files were seen under load when
// the interruption cancelled the request).
func TestAnInterruptedLookupLeavesItsRequestToTheNext(t *testing.T) {
	var heads atomic.Int64
	release := make(chan struct{})
	asked := make(chan struct{}, 1)
	p, cat := unsized(t, func(ctx context.Context, r *catalog.Resource) (int64, error) {
		heads.Add(1)
		asked <- struct{}{}
		select {
		case <-release:
			return int64(len(cBody)), nil
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	})
	id := lookup(t, cat, "data/sub/c.txt")
	a, _ := cat.Attr(id)
	ctx, interrupt := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() {
		_, err := p.Known(ctx, id, a)
		first <- err
	}()
	<-asked
	interrupt()
	require.ErrorIs(t, <-first, context.Canceled, "the interrupted lookup ends at once")

	again := make(chan catalog.Attr, 1)
	go func() {
		got, err := p.Known(context.Background(), id, a)
		assert.NoError(t, err)
		again <- got
	}()
	wait.For(t, "the restarted lookup to join the request in flight", func() bool { return p.joined() == 1 })
	close(release)
	got := <-again
	assert.Equal(t, int64(len(cBody)), got.Size)
	assert.Equal(t, int64(1), heads.Load(), "one request for the interrupted lookup and the restarted one")
	now, _ := cat.Attr(id)
	assert.Equal(t, int64(len(cBody)), now.Size, "recorded in the catalog")
}

// A length that cannot be learned fails the one asking, and is asked for
// again next time.
func TestKnownFailsAndIsTriedAgain(t *testing.T) {
	var heads atomic.Int64
	var fail atomic.Bool
	fail.Store(true)
	p, cat := unsized(t, func(ctx context.Context, r *catalog.Resource) (int64, error) {
		heads.Add(1)
		if fail.Load() {
			return -1, errors.New("429 Too Many Requests")
		}
		return int64(len(cBody)), nil
	})
	id := lookup(t, cat, "data/sub/c.txt")
	a, _ := cat.Attr(id)
	_, err := p.Known(context.Background(), id, a)
	require.ErrorIs(t, err, errNoLength)
	assert.ErrorContains(t, err, "429 Too Many Requests")
	fail.Store(false)
	got, err := p.Known(context.Background(), id, a)
	require.NoError(t, err)
	assert.Equal(t, int64(len(cBody)), got.Size)
	assert.Equal(t, int64(2), heads.Load())
}

// LearnLengths asks for each file without a length once, and no other;
// a lookup after it costs nothing.
func TestLearnLengthsInTheBackground(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	p, cat := unsized(t, func(ctx context.Context, r *catalog.Resource) (int64, error) {
		mu.Lock()
		asked = append(asked, r.URI)
		mu.Unlock()
		if r.URI == cURI {
			return int64(len(cBody)), nil
		}
		return -1, errors.New("HTTP 503")
	})
	learned, failed := p.LearnLengths(context.Background(), 4)
	assert.Equal(t, int64(1), learned)
	assert.Equal(t, int64(1), failed)
	assert.ElementsMatch(t, []string{cURI, topURI}, asked, "each file without a length once, and no other")
	id := lookup(t, cat, "data/sub/c.txt")
	a, _ := cat.Attr(id)
	got, err := p.Known(context.Background(), id, a)
	require.NoError(t, err)
	assert.Equal(t, int64(len(cBody)), got.Size)
	assert.Len(t, asked, 2, "a length learned in the background costs the lookup nothing")
}
