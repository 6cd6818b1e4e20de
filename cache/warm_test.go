package cache

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// smallContents returns n single-block contents with their fetchers.
func smallContents(n int, seed uint64) ([]WarmItem, [][]byte) {
	items := make([]WarmItem, n)
	datas := make([][]byte, n)
	for i := range n {
		data := randomBytes(100+i*37, seed+uint64(i))
		datas[i] = data
		items[i] = WarmItem{
			Content: Content{ID: fmt.Sprintf("small-%d", i), Name: fmt.Sprintf("http://x/%d", i), Size: int64(len(data)), Hashes: sha256Of(data)},
			Fetcher: &memOrigin{data: data},
		}
	}
	return items, datas
}

func TestWarmThenReadHitsWithoutOriginCalls(t *testing.T) {
	c, _ := newTestCache(t, Config{})
	items, datas := smallContents(10, 50)
	c.Warm(items)
	eventually(t, func() bool { return c.Stats().Blocks == 10 }, "warmed blocks to be cached")
	c.Warm(items) // all cached: nothing to do
	st := c.Stats()
	assert.Equal(t, uint64(10), st.Warms)
	assert.Equal(t, uint64(0), st.WarmSkips)

	for i, it := range items {
		f := c.Open(it.Content, it.Fetcher)
		buf := make([]byte, it.Content.Size)
		n, err := f.ReadAt(testCtx(t), buf, 0)
		f.Close()
		require.NoError(t, err)
		assert.Equal(t, datas[i], buf[:n])
		assert.Equal(t, int64(1), it.Fetcher.(*memOrigin).calls.Load(), "item %d", i)
	}
	st = c.Stats()
	assert.Equal(t, uint64(10), st.Hits)
	assert.Equal(t, uint64(0), st.Misses)
	c.mu.Lock()
	assert.Equal(t, int64(0), c.lru.warmBytes, "read blocks no longer count as warm")
	c.mu.Unlock()
}

func TestWarmHashMismatchIsNotCached(t *testing.T) {
	c, logs := newTestCache(t, Config{})
	data := randomBytes(500, 51)
	fetcher := &memOrigin{data: data}
	content := Content{ID: "bad", Name: "http://x/bad", Size: 500, Hashes: wrongSHA256()}
	c.Warm([]WarmItem{{Content: content, Fetcher: fetcher}})
	eventually(t, func() bool { return c.Stats().FillErrors == 1 }, "the warm fill to fail")
	assert.Equal(t, 0, c.Stats().Blocks)
	assert.Contains(t, logs.String(), "content hash mismatch")
	c.mu.Lock()
	assert.Equal(t, int64(0), c.warm.pendingBytes)
	c.mu.Unlock()

	f := c.Open(content, fetcher)
	defer f.Close()
	n, err := f.ReadAt(testCtx(t), make([]byte, 500), 0)
	require.ErrorIs(t, err, ErrIntegrity)
	assert.Equal(t, 0, n)
	assert.Equal(t, int64(1), fetcher.calls.Load(), "the version is bad: the reader does not fetch it again")
	assert.Equal(t, 0, c.Stats().Blocks)
}

func TestWarmSkipsLargeEmptyAndOverBudget(t *testing.T) {
	// A budget of a quarter of 8 KiB: 2 KiB of unread warm data.
	c, _ := newTestCache(t, Config{MaxBytes: 8 << 10})
	mk := func(id string, size int) WarmItem {
		data := randomBytes(size, uint64(size))
		return WarmItem{Content: Content{ID: id, Name: id, Size: int64(size)}, Fetcher: &memOrigin{data: data}}
	}
	large := mk("large", testBlock+1)
	c.Warm([]WarmItem{large, mk("empty", 0), mk("a", 1000), mk("b", 1000), mk("c", 1000)})
	eventually(t, func() bool { return c.Stats().Blocks == 2 }, "two items to be warmed")
	st := c.Stats()
	assert.Equal(t, uint64(2), st.Warms)
	assert.Equal(t, uint64(2), st.WarmSkips, "the large one and the one over budget")
	assert.Equal(t, int64(0), large.Fetcher.(*memOrigin).calls.Load())

	// Reading a warmed block frees budget for another.
	_, err := c.Get(testCtx(t), "a", 0, nil)
	require.NoError(t, err)
	c.Warm([]WarmItem{mk("c", 1000)})
	eventually(t, func() bool { return c.Stats().Blocks == 3 }, "the third item to be warmed")
}

func TestWarmDoesNotDuplicateQueuedItems(t *testing.T) {
	c, _ := newTestCache(t, Config{PrefetchConcurrency: 2})
	gate := make(chan struct{})
	data := randomBytes(300, 52)
	fetcher := &memOrigin{data: data, gate: gate}
	items := []WarmItem{{Content: Content{ID: "g", Name: "g", Size: 300}, Fetcher: fetcher}}
	for range 5 {
		c.Warm(items)
	}
	eventually(t, func() bool { return fetcher.calls.Load() == 1 }, "the fill to reach the fetcher")
	close(gate)
	eventually(t, func() bool { return c.Stats().Blocks == 1 }, "the block to be cached")
	assert.Equal(t, int64(1), fetcher.calls.Load())
	assert.Equal(t, uint64(1), c.Stats().Warms)
}

// WarmConcurrency sets how many warm fills run at once (the requests worth
// having in flight to the Source, more over HTTP/2): here 64, four times
// the 16 of half the default prefetch slots.
func TestWarmConcurrencyIsTheSourcesInFlight(t *testing.T) {
	c, _ := newTestCache(t, Config{MaxBytes: 64 << 20, WarmConcurrency: func() int { return 64 }})
	items, _ := smallContents(100, 60)
	gate := make(chan struct{})
	started := func() int64 {
		var n int64
		for _, it := range items {
			n += it.Fetcher.(*memOrigin).calls.Load()
		}
		return n
	}
	for _, it := range items {
		it.Fetcher.(*memOrigin).gate = gate
	}
	c.Warm(items)
	eventually(t, func() bool { return started() == 64 }, "64 warm fills in flight at once")
	close(gate)
	eventually(t, func() bool { return c.Stats().Blocks == 100 }, "every item warmed")
	assert.EqualValues(t, 100, started(), "each fetched once")
}
