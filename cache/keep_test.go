package cache

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func keepContents(n, size int, seed int) ([]Content, []*memOrigin) {
	var cts []Content
	var origins []*memOrigin
	for i := range n {
		data := randomBytes(size, uint64(seed+i))
		cts = append(cts, Content{ID: fmt.Sprintf("c%d-%d", seed, i), Name: "u", Size: int64(size), Hashes: sha256Of(data)})
		origins = append(origins, &memOrigin{data: data})
	}
	return cts, origins
}

func keepAll(t *testing.T, c *Cache, cts []Content, origins []*memOrigin) []error {
	items := make([]WarmItem, len(cts))
	for i := range cts {
		items[i] = WarmItem{Content: cts[i], Fetcher: origins[i]}
	}
	errs := make([]error, len(cts))
	c.Keep(testCtx(t), items, nil, func(i int, _ bool, err error) { errs[i] = err })
	return errs
}

// Keep puts contents on disk; pinned, they stay while other reads push
// the disk cache past its limit, and the others are evicted; a second
// Keep fetches nothing.
func TestKeepPinsAheadOfEviction(t *testing.T) {
	size := testBlock / 2
	c, _ := newDiskCache(t, t.TempDir(), Config{ReadAhead: -1, DiskMaxBytes: int64(10 * (size + blockFileFixed + 8))})
	waitScanned(t, c)
	kept, keptOrigins := keepContents(4, size, 100)
	for _, err := range keepAll(t, c, kept, keptOrigins) {
		require.NoError(t, err)
	}
	require.NoError(t, c.Pin(kept))
	for i, ct := range kept {
		assert.Equal(t, ct.Size, c.OnDisk(ct))
		assert.EqualValues(t, 1, keptOrigins[i].calls.Load())
	}
	others, otherOrigins := keepContents(20, size, 200)
	for i := range others {
		readContent(t, c, others[i], otherOrigins[i])
	}
	waitDiskIdle(t, c)
	assert.Positive(t, c.Stats().DiskEvictions)
	evicted := 0
	for _, ct := range others {
		if c.OnDisk(ct) == 0 {
			evicted++
		}
	}
	assert.Positive(t, evicted, "the others were evicted")
	for _, ct := range kept {
		assert.Equal(t, ct.Size, c.OnDisk(ct), "a pinned content stays on disk")
	}
	for _, err := range keepAll(t, c, kept, keptOrigins) {
		require.NoError(t, err)
	}
	for _, o := range keptOrigins {
		assert.EqualValues(t, 1, o.calls.Load(), "a second Keep fetches nothing")
	}
}
