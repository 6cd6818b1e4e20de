package cache

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A version no copy of which matched is not kept bad for the mount's
// life: its reads fail without a request until its backoff passes (5 s,
// doubling), or RetryBad is called; then the next read fetches and
// verifies it again, and reads once the copy serves the published bytes.
func TestABadVersionIsTriedAgainAfterABackoff(t *testing.T) {
	for _, oneBlock := range []bool{true, false} {
		c, _ := newTestCache(t, Config{})
		var mu sync.Mutex
		now := time.Unix(1e9, 0)
		c.vers.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
		size := testBlock / 2
		if !oneBlock {
			size = 3 * testBlock
		}
		data := randomBytes(size, 31)
		content := Content{ID: "v1", Name: "http://x/a", Size: int64(size), Hashes: sha256Of(data)}
		origin := &memOrigin{data: corrupt(data, 3)}
		read := func() error {
			f := c.Open(content, origin)
			defer f.Close()
			buf := make([]byte, size)
			_, err := f.ReadAt(testCtx(t), buf, 0)
			if err == nil {
				assert.Equal(t, data, buf)
			}
			return err
		}
		require.ErrorIs(t, read(), ErrIntegrity)
		calls := origin.calls.Load()
		advance(BadRetryBase - time.Second)
		require.ErrorIs(t, read(), ErrIntegrity)
		assert.Equal(t, calls, origin.calls.Load(), "within its backoff a bad version is not fetched")

		advance(2 * time.Second)
		require.ErrorIs(t, read(), ErrIntegrity, "tried again, still bad")
		assert.Greater(t, origin.calls.Load(), calls)
		calls = origin.calls.Load()
		advance(BadRetryBase + time.Second)
		require.ErrorIs(t, read(), ErrIntegrity)
		assert.Equal(t, calls, origin.calls.Load(), "the backoff doubled")

		// The copy is fixed (a cache purged): after the next poll, it reads.
		origin.data = data
		c.RetryBad()
		require.NoError(t, read())
		assert.False(t, c.Bad("v1"))
	}
}
