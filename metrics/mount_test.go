package metrics

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/cache"
)

// TestCacheReportHitsNeverExceedLookups warms a new cache from the disk
// cache an earlier one left, as a remount from the snapshot does, and then
// reads: each tier's hits are at most its lookups, its ratio at most 1
// (the disk said "hit ratio 20.29 (3774 of 186)": its lookups were the
// memory's misses, which a warm makes none of).
func TestCacheReportHitsNeverExceedLookups(t *testing.T) {
	dir := t.TempDir()
	var items []cache.WarmItem
	var datas [][]byte
	for i := range 4 {
		data := []byte(fmt.Sprintf("the bytes of small resource %d", i))
		datas = append(datas, data)
		items = append(items, cache.WarmItem{Content: cache.Content{ID: fmt.Sprint("r", i), Name: fmt.Sprint("http://x/", i), Size: int64(len(data))}})
	}
	read := func(_ context.Context, which []int) [][]byte {
		out := make([][]byte, len(which))
		for j, i := range which {
			out[j] = datas[i]
		}
		return out
	}
	cfg := cache.Config{DiskDir: dir, DiskMaxBytes: 1 << 20}
	first := cache.New(cfg)
	first.WarmBatch(context.Background(), items, read)
	first.Close()
	require.Equal(t, len(items), first.Stats().DiskBlocks)

	second := cache.New(cfg)
	defer second.Close()
	second.WarmBatch(context.Background(), items, func(ctx context.Context, which []int) [][]byte {
		t.Errorf("read %v from the origin: the disk has them", which)
		return read(ctx, which)
	})
	for i, it := range items {
		got, err := second.Get(context.Background(), it.Content.ID, 0, func(context.Context) ([]byte, error) {
			return nil, fmt.Errorf("filled %s: it is cached", it.Content.ID)
		})
		require.NoError(t, err)
		assert.Equal(t, datas[i], got)
	}
	rep := (&Mount{Cache: second, MemMax: 1 << 20, DiskMax: 1 << 20}).CacheReport()
	require.NotNil(t, rep.Disk)
	assert.Equal(t, uint64(len(items)), rep.Disk.Hits, "disk hits")
	assert.Equal(t, uint64(len(items)), rep.Memory.Hits, "memory hits")
	assert.LessOrEqual(t, rep.Memory.Hits, rep.Memory.Lookups, "memory")
	assert.LessOrEqual(t, rep.Disk.Hits, rep.Disk.Lookups, "disk")
	assert.LessOrEqual(t, rep.Disk.HitRatio, 1.0)
	assert.LessOrEqual(t, rep.Memory.HitRatio, 1.0)
}
