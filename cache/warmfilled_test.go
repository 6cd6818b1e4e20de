package cache

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// filledLog records what WarmItem.Filled is given, by content ID.
type filledLog struct {
	mu  sync.Mutex
	got map[string][][]byte // every call's bytes
}

func (l *filledLog) hook(items []WarmItem) []WarmItem {
	l.got = map[string][][]byte{}
	for i := range items {
		id := items[i].Content.ID
		items[i].Filled = func(data []byte) {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.got[id] = append(l.got[id], data)
		}
	}
	return items
}

// of returns the bytes of id's only call, or false.
func (l *filledLog) of(id string) ([]byte, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.got[id]) != 1 {
		return nil, false
	}
	return l.got[id][0], true
}

func (l *filledLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.got)
}

// A warming fill hands its verified bytes to Filled: one at a time, in a
// batch, and from the disk cache; never bytes that failed their hash, nor
// a content that was in memory already.
func TestWarmFilledGetsVerifiedBytes(t *testing.T) {
	t.Run("one at a time", func(t *testing.T) {
		c, _ := newTestCache(t, Config{})
		items, datas := smallContents(6, 60)
		bad := WarmItem{Content: Content{ID: "bad", Name: "http://x/bad", Size: 500, Hashes: wrongSHA256()},
			Fetcher: &memOrigin{data: randomBytes(500, 61)}}
		var log filledLog
		c.Warm(log.hook(append(items, bad)))
		eventually(t, func() bool { return c.Stats().Blocks == 6 && c.Stats().FillErrors == 1 }, "the warm fills")
		eventually(t, func() bool { return log.len() == 6 }, "Filled for each good content")
		for i, it := range items {
			got, ok := log.of(it.Content.ID)
			require.True(t, ok, "item %d", i)
			assert.Equal(t, datas[i], got, "item %d", i)
		}
		_, ok := log.of("bad")
		assert.False(t, ok, "bytes that failed their hash")

		var again filledLog
		c.Warm(again.hook(items[:2]))
		c.Warm(again.hook(items[2:3]))
		eventually(t, func() bool {
			c.mu.Lock()
			defer c.mu.Unlock()
			return c.warm.workers == 0
		}, "the warm workers to finish")
		st := c.Stats()
		assert.Equal(t, 6, st.Blocks)
		assert.Zero(t, again.len(), "contents in memory already")
	})
	t.Run("a batch, and the disk", func(t *testing.T) {
		dir := t.TempDir()
		items, datas := smallContents(8, 62)
		br := &batchReader{datas: datas, bad: map[int]bool{3: true}}
		first, _ := newDiskCache(t, dir, Config{})
		var log filledLog
		first.WarmBatch(context.Background(), log.hook(items), br.read)
		eventually(t, func() bool { return log.len() == 8 }, "Filled for each content, the bad one read again alone")
		for i, it := range items {
			got, ok := log.of(it.Content.ID)
			require.True(t, ok, "item %d: one call", i)
			assert.Equal(t, datas[i], got, "item %d", i)
		}
		first.Close()

		second, _ := newDiskCache(t, dir, Config{})
		defer second.Close()
		var fromDisk filledLog
		br = &batchReader{datas: datas}
		second.WarmBatch(context.Background(), fromDisk.hook(items), br.read)
		assert.Empty(t, br.asked)
		require.Equal(t, 8, fromDisk.len())
		for i, it := range items {
			got, ok := fromDisk.of(it.Content.ID)
			require.True(t, ok, "item %d: one call", i)
			assert.Equal(t, datas[i], got, "item %d from disk", i)
		}
	})
}
