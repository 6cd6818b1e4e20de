package cache

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestByteLRU(t *testing.T) {
	l := newByteLRU(10)
	k := func(id string, b int64) blockKey { return blockKey{id, b} }
	assert.True(t, l.add(k("a", 0), []byte("aaaa")))
	assert.True(t, l.add(k("a", 1), []byte("bbb")))
	assert.True(t, l.add(k("b", 0), []byte("cc")))
	assert.Equal(t, int64(9), l.bytes)

	_, ok := l.get(k("a", 0)) // a/0 is now the most recent; a/1 the least
	assert.True(t, ok)
	assert.True(t, l.add(k("b", 1), []byte("dd")))
	assert.Equal(t, int64(8), l.bytes, "a/1 (3 bytes) evicted to stay within 10")
	assert.Equal(t, uint64(1), l.evictions)
	assert.False(t, l.contains(k("a", 1)))
	assert.True(t, l.contains(k("a", 0)))

	assert.True(t, l.add(k("b", 0), []byte("CCCC")), "replacing a block")
	assert.Equal(t, int64(10), l.bytes)
	data, _ := l.peek(k("b", 0))
	assert.Equal(t, "CCCC", string(data))
	assert.Equal(t, 3, l.len())

	assert.False(t, l.add(k("c", 0), make([]byte, 11)), "larger than the bound")
	assert.Equal(t, 3, l.len(), "and it replaced nothing")

	l.markWarm(k("b", 1))
	assert.Equal(t, int64(2), l.warmBytes)
	assert.Equal(t, 2, l.removeID("b"))
	assert.Equal(t, int64(0), l.warmBytes, "a removed warm block no longer counts")
	assert.Equal(t, int64(4), l.bytes)
	assert.Equal(t, 1, l.len())
	assert.Empty(t, l.byID["b"])
	assert.Equal(t, uint64(1), l.evictions, "removals by id are not evictions")
}

// BenchmarkByteLRUChurn adds 64 KiB blocks to a 64 MiB LRU, so that every
// add past the first thousand evicts one, with a hit on a recent block per
// add.
func BenchmarkByteLRUChurn(b *testing.B) {
	l := newByteLRU(64 << 20)
	data := make([]byte, 64<<10)
	ids := make([]string, 256)
	for i := range ids {
		ids[i] = "v" + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		k := blockKey{ids[i%len(ids)], int64(i)}
		l.add(k, data)
		l.get(blockKey{k.id, int64(i / 2)})
	}
}
