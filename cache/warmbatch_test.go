package cache

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// batchReader serves WarmBatch's read from datas, counting the contents
// asked for; bad lists indexes whose bytes it gives wrong.
type batchReader struct {
	mu    sync.Mutex
	datas [][]byte
	asked []int
	bad   map[int]bool
	gate  chan struct{} // if set, read waits for it
}

func (b *batchReader) read(_ context.Context, which []int) [][]byte {
	if b.gate != nil {
		<-b.gate
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([][]byte, len(which))
	for j, i := range which {
		b.asked = append(b.asked, i)
		out[j] = slices.Clone(b.datas[i])
		if b.bad[i] {
			out[j][0] ^= 0xff
		}
	}
	return out
}

func TestWarmBatchVerifiesAndFallsBack(t *testing.T) {
	c, _ := newTestCache(t, Config{})
	items, datas := smallContents(6, 70)
	br := &batchReader{datas: datas, bad: map[int]bool{4: true}}
	c.WarmBatch(context.Background(), items, br.read)
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5}, br.asked)
	// The bad one is not stored from the batch: it is warmed through its
	// own fetcher, which checks it as any fill does.
	eventually(t, func() bool { return c.Stats().Blocks == 6 }, "all six to be cached")
	for i, it := range items {
		assert.Equal(t, datas[i], readContent(t, c, it.Content, it.Fetcher), "item %d", i)
		want := int64(0)
		if i == 4 {
			want = 1
		}
		assert.Equal(t, want, it.Fetcher.(*memOrigin).calls.Load(), "item %d's own fetches", i)
	}
	// Everything is cached now: a second batch asks for nothing.
	br.asked = nil
	c.WarmBatch(context.Background(), items, br.read)
	assert.Empty(t, br.asked)
}

// A reader that asks for a content the batch has claimed waits for the
// batch's bytes instead of fetching it again.
func TestWarmBatchReaderWaitsForTheBatch(t *testing.T) {
	c, _ := newTestCache(t, Config{})
	items, datas := smallContents(3, 80)
	br := &batchReader{datas: datas, gate: make(chan struct{})}
	done := make(chan struct{})
	go func() { c.WarmBatch(context.Background(), items, br.read); close(done) }()
	eventually(t, func() bool { return c.cachedOrFilling(blockKey{items[1].Content.ID, 0}) }, "the batch to claim its items")
	got := make(chan []byte)
	go func() { got <- readContent(t, c, items[1].Content, items[1].Fetcher) }()
	close(br.gate)
	assert.Equal(t, datas[1], <-got)
	<-done
	assert.Zero(t, items[1].Fetcher.(*memOrigin).calls.Load(), "the reader took the batch's bytes")
}

// After a restart, a batch of contents the disk cache holds reads them
// from disk: nothing is asked of the network.
func TestWarmBatchAsksTheDiskFirst(t *testing.T) {
	dir := t.TempDir()
	items, datas := smallContents(8, 90)
	first, _ := newDiskCache(t, dir, Config{})
	br := &batchReader{datas: datas}
	first.WarmBatch(context.Background(), items, br.read)
	require.Len(t, br.asked, 8)
	first.Close()
	require.Equal(t, 8, first.Stats().DiskBlocks)

	for _, scanned := range []bool{false, true} {
		second, _ := newDiskCache(t, dir, Config{})
		if scanned {
			waitScanned(t, second)
		}
		br := &batchReader{datas: datas}
		second.WarmBatch(context.Background(), items, br.read)
		assert.Empty(t, br.asked, "scanned %v: nothing fetched", scanned)
		assert.Equal(t, 8, second.Stats().Blocks)
		st := second.Stats()
		assert.Equal(t, uint64(8), st.DiskHits)
		// The warm asked the disk 8 times and memory never: the disk's
		// hits are of its own lookups (status said "8 of 0").
		assert.Equal(t, uint64(8), st.DiskLookups)
		assert.Zero(t, st.Hits+st.Misses)
		for i, it := range items {
			assert.Equal(t, datas[i], readContent(t, second, it.Content, it.Fetcher))
			assert.Zero(t, it.Fetcher.(*memOrigin).calls.Load())
		}
		second.Close()
	}
}
