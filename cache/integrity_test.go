package cache

import (
	"bytes"
	"context"
	"io"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// copies is a Fetcher with several copies of a content (cache.Alternates),
// like a URI and its mirrors.
type copies struct {
	mu       sync.Mutex
	fetchers []*memOrigin
	first    int
	skips    atomic.Int64
}

func (c *copies) OpenRange(ctx context.Context, off, n int64) (io.ReadCloser, bool, error) {
	c.mu.Lock()
	o := c.fetchers[c.first]
	c.mu.Unlock()
	return o.OpenRange(ctx, off, n)
}

func (c *copies) SkipCopy() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.first+1 >= len(c.fetchers) {
		return false
	}
	c.first++
	c.skips.Add(1)
	return true
}

// corrupt returns data with one byte changed at off.
func corrupt(data []byte, off int) []byte {
	bad := append([]byte(nil), data...)
	bad[off] ^= 0x40
	return bad
}

func TestCorruptMultiBlockContentServesNoByte(t *testing.T) {
	c, logs := newTestCache(t, Config{})
	data := randomBytes(3*testBlock, 30)
	fetcher := &memOrigin{data: corrupt(data, testBlock+7)}
	content := Content{ID: "v1", Name: "http://x/corrupt", Size: int64(len(data)), Hashes: sha256Of(data)}
	f := c.Open(content, fetcher)
	defer f.Close()
	buf := make([]byte, 100)
	n, err := f.ReadAt(testCtx(t), buf, 0)
	require.ErrorIs(t, err, ErrIntegrity)
	assert.Equal(t, 0, n, "no byte of a bad copy is handed out")
	calls := fetcher.calls.Load()
	assert.Equal(t, int64(3), calls, "every block was read once to verify")

	// The kernel retries; another open reads again: both fail, with no fetch.
	n, err = f.ReadAt(testCtx(t), buf, 2*testBlock)
	require.ErrorIs(t, err, ErrIntegrity)
	assert.Equal(t, 0, n)
	g := c.Open(content, fetcher)
	defer g.Close()
	n, err = g.ReadAt(testCtx(t), buf, 0)
	require.ErrorIs(t, err, ErrIntegrity)
	assert.Equal(t, 0, n)
	assert.Equal(t, calls, fetcher.calls.Load(), "a bad version is not fetched again")
	assert.True(t, c.Bad("v1"))
	assert.Contains(t, logs.String(), "uri=http://x/corrupt")

	// A new version (new id) reads.
	h := c.Open(Content{ID: "v2", Name: "http://x/corrupt", Size: int64(len(data)), Hashes: sha256Of(data)}, &memOrigin{data: data})
	defer h.Close()
	got, _ := readAll(testCtx(t), h, testBlock)
	assert.Equal(t, data, got)
}

func TestCorruptCopyFallsBackToTheNextCopy(t *testing.T) {
	for _, mode := range []struct {
		name  string
		below int64
	}{{"whole", 0}, {"streamed", -1}} {
		t.Run(mode.name, func(t *testing.T) {
			c, _ := newTestCache(t, Config{VerifyWholeBelow: mode.below})
			data := randomBytes(4*testBlock+5, 31)
			bad, good := &memOrigin{data: corrupt(data, 3*testBlock)}, &memOrigin{data: data}
			content := Content{ID: "v1", Name: "u", Size: int64(len(data)), Hashes: sha256Of(data)}
			o := &copies{fetchers: []*memOrigin{bad, good}}
			f := c.Open(content, o)
			defer f.Close()
			got, errs := readAll(testCtx(t), f, testBlock)
			if mode.name == "whole" {
				assert.Equal(t, data, got, "the first copy failed verification before any byte was served")
				assert.Equal(t, io.EOF, errs[len(errs)-1])
			} else {
				// Bytes of the bad copy were streamed: this reader gets an
				// error, never a clean end, and the next reader the good copy.
				require.ErrorIs(t, errs[len(errs)-1], ErrIntegrity)
				eventually(t, func() bool { return c.vers.verified("v1") }, "the next copy to be verified")
				g := c.Open(content, &copies{fetchers: []*memOrigin{bad, good}})
				defer g.Close()
				got, errs = readAll(testCtx(t), g, testBlock)
				assert.Equal(t, data, got)
				assert.Equal(t, io.EOF, errs[len(errs)-1])
			}
			assert.Equal(t, int64(1), o.skips.Load())
			assert.False(t, c.Bad("v1"))
		})
	}
}

func TestStreamedMismatchFailsEveryLaterRead(t *testing.T) {
	c, _ := newTestCache(t, Config{VerifyWholeBelow: -1})
	data := randomBytes(3*testBlock, 32)
	fetcher := &memOrigin{data: corrupt(data, 5)}
	content := Content{ID: "v1", Name: "u", Size: int64(len(data)), Hashes: sha256Of(data)}
	f := c.Open(content, fetcher)
	defer f.Close()
	buf := make([]byte, testBlock)
	for b := int64(0); b < 2; b++ {
		_, err := f.ReadAt(testCtx(t), buf, b*testBlock)
		require.NoError(t, err, "unverified bytes are streamed above VerifyWholeBelow")
	}
	_, err := f.ReadAt(testCtx(t), buf, 2*testBlock)
	require.ErrorIs(t, err, ErrIntegrity, "the read completing the pass fails")
	// The kernel asks again for the tail: it must fail, not start a new pass.
	n, err := f.ReadAt(testCtx(t), buf, 2*testBlock)
	require.ErrorIs(t, err, ErrIntegrity)
	assert.Equal(t, 0, n)
	eventually(t, func() bool { return c.Bad("v1") }, "the version to be marked bad")
	g := c.Open(content, fetcher)
	defer g.Close()
	_, err = g.ReadAt(testCtx(t), buf, 0)
	require.ErrorIs(t, err, ErrIntegrity)
}

func TestVerifiedBlockFetchedAgainMustMatch(t *testing.T) {
	// A cache of 4 blocks: reading 8 evicts the first ones.
	c, _ := newTestCache(t, Config{MaxBytes: 40 * testBlock, ReadAhead: -1})
	data := randomBytes(8*testBlock, 33)
	fetcher := &memOrigin{data: data}
	content := Content{ID: "v1", Name: "u", Size: int64(len(data)), Hashes: sha256Of(data)}
	f := c.Open(content, fetcher)
	defer f.Close()
	got, _ := readAll(testCtx(t), f, testBlock)
	require.Equal(t, data, got)
	require.True(t, c.vers.verified("v1"))
	c.DropContent("v1")                     // as eviction would
	fetcher.data = corrupt(data, testBlock) // the fetcher changed, same length
	buf := make([]byte, 10)
	n, err := f.ReadAt(testCtx(t), buf, 0)
	require.NoError(t, err, "block 0 is unchanged")
	assert.Equal(t, data[:10], buf[:n])
	_, err = f.ReadAt(testCtx(t), buf, testBlock)
	require.ErrorIs(t, err, ErrIntegrity, "a refetched block must match the bytes verified")
}

// changingOrigin serves data, which the test may replace between reads.
type changingOrigin struct {
	mu   sync.Mutex
	data []byte
}

func (o *changingOrigin) set(data []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.data = data
}

func (o *changingOrigin) OpenRange(ctx context.Context, off, n int64) (io.ReadCloser, bool, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	end := min(off+n, int64(len(o.data)))
	return io.NopCloser(bytes.NewReader(o.data[off:end])), false, nil
}

func TestBlockFetchedAgainMidPassMustBeTheBytesHashed(t *testing.T) {
	c, _ := newTestCache(t, Config{VerifyWholeBelow: -1})
	data := randomBytes(4*testBlock, 34)
	fetcher := &changingOrigin{data: data}
	f := c.Open(Content{ID: "v1", Name: "http://x/big", Size: int64(len(data)), Hashes: sha256Of(data)}, fetcher)
	defer f.Close()

	half := make([]byte, testBlock/2)
	_, err := f.ReadAt(testCtx(t), half, 0) // the pass hashes block 0 whole
	require.NoError(t, err)

	// Block 0 is evicted and the server, with no validators, now has other
	// bytes: the rest of block 0 comes from a second fetch.
	changed := bytes.Clone(data)
	changed[testBlock-1] ^= 0xff
	fetcher.set(changed)
	c.DropContent("v1")
	_, err = f.ReadAt(testCtx(t), half, testBlock/2)
	assert.ErrorIs(t, err, ErrIntegrity, "bytes the pass did not hash")
	_, err = f.ReadAt(testCtx(t), half, testBlock)
	assert.ErrorIs(t, err, ErrIntegrity, "the file fails from then on")
}
