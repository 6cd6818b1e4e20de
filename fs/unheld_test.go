package fs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/catalog"
)

// What waits for a listing is bounded in bytes, the oldest dropped first;
// a file kept again keeps its newest bytes once.
func TestUnheldStoresKeepTheNewestWithinTheirBound(t *testing.T) {
	var u unheldStores
	block := make([]byte, 4096)
	n := unheldMaxBytes / len(block)
	for i := range n + 10 {
		u.add(catalog.NodeID(i+1), 1, block)
	}
	assert.LessOrEqual(t, u.bytes, int64(unheldMaxBytes))
	_, ok := u.take(1)
	assert.False(t, ok, "the oldest went first")
	w, ok := u.take(catalog.NodeID(n + 10))
	require.True(t, ok)
	assert.Equal(t, uint64(1), w.gen)
	_, ok = u.take(catalog.NodeID(n + 10))
	assert.False(t, ok, "taken once")

	u.add(catalog.NodeID(n+5), 2, []byte("newer"))
	w, ok = u.take(catalog.NodeID(n + 5))
	require.True(t, ok)
	assert.Equal(t, uint64(2), w.gen)
	assert.Equal(t, "newer", string(w.data))
	var sum int64
	for _, w := range u.kept.Values() {
		sum += int64(len(w.data))
	}
	assert.Equal(t, sum, u.bytes, "the count is the bytes kept")

	u.add(7, 1, make([]byte, unheldMaxBytes+1))
	_, ok = u.take(7)
	assert.False(t, ok, "larger than the bound: not kept")
}
