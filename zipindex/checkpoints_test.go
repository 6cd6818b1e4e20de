package zipindex

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const bigSize = 24 << 20

func bigPackage(t testing.TB, size int) ([]byte, []byte) {
	body := textLike(size, 99)
	return body, buildZip(t, []entry{
		{name: "manifest.xml", data: []byte("<urlset/>"), method: MethodStored},
		{name: "big", data: body, method: MethodDeflate},
	})
}

func TestRandomReadsInLargeDeflatedMember(t *testing.T) {
	body, data := bigPackage(t, bigSize)
	ps := newPackageServer(t, data)
	cache := NewCheckpointCache(64 << 20)
	p, err := ps.open(t, Options{Checkpoints: cache})
	require.NoError(t, err)

	rng := rand.New(rand.NewPCG(5, 6))
	check := func(k int) {
		for range k {
			off := rng.Int64N(int64(len(body)) - 4096)
			got, err := readMember(t, p, "big", off, 4096)
			require.NoError(t, err)
			require.Equal(t, body[off:off+4096], got, "offset %d", off)
		}
	}
	check(5) // before any whole pass: checkpoints recorded on the way
	whole, err := readMember(t, p, "big", 0, int64(len(body)))
	require.NoError(t, err)
	require.Equal(t, body, whole)
	assert.GreaterOrEqual(t, cache.Len(), bigSize/(1<<20)-2, "about one checkpoint per MiB")
	assert.LessOrEqual(t, cache.Len(), bigSize/(1<<20)+1)
	assert.LessOrEqual(t, cache.Bytes(), int64(cache.Len())*(32<<10+checkpointOverhead))
	check(40)

	// Reading the last 4 KiB after checkpoints must not inflate the member:
	// few bytes cross the wire.
	m, _ := p.Lookup("big")
	before := ps.requests.Load()
	got, err := readMember(t, p, "big", m.Size-4096, 4096)
	require.NoError(t, err)
	assert.Equal(t, body[m.Size-4096:], got)
	assert.LessOrEqual(t, ps.requests.Load()-before, int64(8))

	p.Close()
	assert.Equal(t, 0, cache.Len())
}

func TestSmallCheckpointCacheStaysCorrect(t *testing.T) {
	body, data := bigPackage(t, 6<<20)
	ps := newPackageServer(t, data)
	cache := NewCheckpointCache(100 << 10) // room for three windows
	p, err := ps.open(t, Options{Checkpoints: cache})
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(8, 9))
	for range 20 {
		off := rng.Int64N(int64(len(body)) - 4096)
		got, err := readMember(t, p, "big", off, 4096)
		require.NoError(t, err)
		require.Equal(t, body[off:off+4096], got, "offset %d", off)
		require.LessOrEqual(t, cache.Bytes(), int64(100<<10))
	}
	assert.Positive(t, cache.Len())
}

func TestCheckpointCacheEvictsLeastRecentlyUsed(t *testing.T) {
	win := make([]byte, 1000)
	per := int64(len(win) + checkpointOverhead)
	c := NewCheckpointCache(3 * per) // room for three
	m1, m2 := memberKey{pkg: 1, member: 0}, memberKey{pkg: 2, member: 0}
	c.add(m1, 0, 100, win)
	c.add(m1, 0, 200, win)
	c.add(m2, 0, 100, win)
	assert.Equal(t, 3*per, c.Bytes())

	rp, ok := c.nearest(m1, 150) // m1@100 is now the most recent; m1@200 the least
	require.True(t, ok)
	assert.Equal(t, int64(100), rp.out)
	c.add(m1, 0, 300, win)
	assert.Equal(t, 3, c.Len())
	assert.Equal(t, 3*per, c.Bytes())
	rp, _ = c.nearest(m1, 250)
	assert.Equal(t, int64(100), rp.out, "m1@200 was evicted")
	assert.True(t, c.covered(m1, 300, 10))

	c.add(m1, 0, 300, win) // already there: nothing changes
	assert.Equal(t, 3, c.Len())

	c.forget(1)
	assert.Equal(t, 1, c.Len())
	assert.Equal(t, per, c.Bytes())
	_, ok = c.nearest(m1, 1000)
	assert.False(t, ok)
	rp, ok = c.nearest(m2, 1000)
	require.True(t, ok)
	assert.Equal(t, int64(100), rp.out)
}
