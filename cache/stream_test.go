package cache

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSequentialReaderStreams(t *testing.T) {
	c, logs := newTestCache(t, Config{ReadAhead: 4, VerifyWholeBelow: -1})
	data := randomBytes(40*testBlock+7, 30)
	fetcher := &memOrigin{data: data}
	f := c.Open(Content{ID: "v1", Name: "u", Size: int64(len(data)), Hashes: sha256Of(data)}, fetcher)
	defer f.Close()
	got, errs := readAll(testCtx(t), f, testBlock/2)
	assert.Equal(t, io.EOF, errs[len(errs)-1])
	for i, err := range errs[:len(errs)-1] {
		require.NoError(t, err, "read %d", i)
	}
	assert.Equal(t, data, got)
	assert.Equal(t, []int64{0, testBlock}, fetcher.offsets(), "block 0, then one stream for the rest")
	assert.Equal(t, [2]int64{testBlock, int64(len(data)) - testBlock}, fetcher.ranges[1], "the stream asks for the rest of the content")
	st := c.Stats()
	assert.Equal(t, uint64(40), st.Streamed)
	assert.Zero(t, st.FillErrors)
	assert.NotContains(t, logs.String(), "stream stopped")
}

func TestStreamStaysABoundedDistanceAhead(t *testing.T) {
	c, _ := newTestCache(t, Config{ReadAhead: 4, VerifyWholeBelow: -1})
	ahead := c.streamAhead()
	require.Equal(t, int64(16), ahead)
	data := randomBytes(100*testBlock, 31)
	fetcher := &memOrigin{data: data}
	f := c.Open(Content{ID: "v1", Name: "u", Size: int64(len(data))}, fetcher)
	defer f.Close()
	key := func(b int64) blockKey { return blockKey{"v1", b} }
	buf := make([]byte, testBlock/2)
	for _, off := range []int64{0, testBlock / 2} {
		_, err := f.ReadAt(testCtx(t), buf, off)
		require.NoError(t, err)
	}
	assert.True(t, c.cachedOrFilling(key(ahead)), "claimed up to the reader's block + %d", ahead)
	assert.False(t, c.cachedOrFilling(key(ahead+1)), "nothing claimed further")
	eventually(t, func() bool { return c.Stats().Streamed == uint64(ahead) }, "the window to be streamed")

	for off := int64(testBlock); off < 9*testBlock; off += testBlock / 2 {
		n, err := f.ReadAt(testCtx(t), buf, off)
		require.NoError(t, err)
		require.Equal(t, data[off:off+int64(n)], buf[:n])
	}
	assert.True(t, c.cachedOrFilling(key(8+ahead)))
	assert.False(t, c.cachedOrFilling(key(9+ahead)))
	eventually(t, func() bool { return c.Stats().Streamed == uint64(8+ahead) }, "the window to move on")
	assert.Equal(t, int64(2), fetcher.calls.Load(), "still one stream")
}

func TestSeekAwayEndsStream(t *testing.T) {
	c, _ := newTestCache(t, Config{ReadAhead: 4, VerifyWholeBelow: -1})
	data := randomBytes(60*testBlock, 32)
	fetcher := &memOrigin{data: data, gate: make(chan struct{}), gateFrom: testBlock, gateTo: 2 * testBlock}
	f := c.Open(Content{ID: "v1", Name: "u", Size: int64(len(data))}, fetcher)
	defer f.Close()
	buf := make([]byte, 10)
	for _, off := range []int64{0, 10} {
		_, err := f.ReadAt(testCtx(t), buf, off)
		require.NoError(t, err)
	}
	eventually(t, func() bool { return fetcher.calls.Load() == 2 }, "the stream to reach the fetcher")
	require.True(t, c.cachedOrFilling(blockKey{"v1", 5}))

	n, err := f.ReadAt(testCtx(t), buf, 50*testBlock+3)
	require.NoError(t, err)
	assert.Equal(t, data[50*testBlock+3:50*testBlock+3+n], buf[:n])
	eventually(t, func() bool { return fetcher.cancelled.Load() == 1 }, "the stream to be cancelled")
	eventually(t, func() bool { return !c.cachedOrFilling(blockKey{"v1", 5}) }, "its claims to be released")
	assert.Zero(t, c.Stats().FillErrors, "released claims are no fill errors")
}

func TestStreamStopsAtCachedBlockAndResumesAfterIt(t *testing.T) {
	c, _ := newTestCache(t, Config{ReadAhead: 4, VerifyWholeBelow: -1})
	data := randomBytes(30*testBlock, 33)
	fetcher := &memOrigin{data: data}
	f := c.Open(Content{ID: "v1", Name: "u", Size: int64(len(data)), Hashes: sha256Of(data)}, fetcher)
	defer f.Close()
	_, err := f.ReadAt(testCtx(t), make([]byte, 10), 5*testBlock)
	require.NoError(t, err)
	got, errs := readAll(testCtx(t), f, testBlock/2)
	for i, err := range errs[:len(errs)-1] {
		require.NoError(t, err, "read %d", i)
	}
	assert.Equal(t, data, got)
	offsets := fetcher.offsets()
	require.GreaterOrEqual(t, len(offsets), 4)
	// What follows block 6's stream depends on scheduling: on a loaded
	// machine under -race the reader can outrun it, and later blocks are
	// then filled one by one. The stream stopping at block 5 and resuming
	// at 6 does not.
	assert.Equal(t, []int64{5 * testBlock, 0, testBlock, 6 * testBlock}, offsets[:4],
		"a stream for blocks 1-4, then one from block 6")
}

// shortStreamOrigin cuts every range longer than a block after 2.5 blocks.
type shortStreamOrigin struct{ memOrigin }

func (o *shortStreamOrigin) OpenRange(ctx context.Context, off, n int64) (io.ReadCloser, bool, error) {
	rc, toEnd, err := o.memOrigin.OpenRange(ctx, off, n)
	if err != nil || n <= testBlock {
		return rc, toEnd, err
	}
	return io.NopCloser(io.LimitReader(rc, 5*testBlock/2)), toEnd, nil
}

func TestShortStreamReleasesBlocksToOrdinaryFills(t *testing.T) {
	c, logs := newTestCache(t, Config{ReadAhead: 4, VerifyWholeBelow: -1})
	data := randomBytes(12*testBlock, 34)
	fetcher := &shortStreamOrigin{memOrigin{data: data}}
	f := c.Open(Content{ID: "v1", Name: "u", Size: int64(len(data)), Hashes: sha256Of(data)}, fetcher)
	defer f.Close()
	got, errs := readAll(testCtx(t), f, testBlock/2)
	for i, err := range errs[:len(errs)-1] {
		require.NoError(t, err, "read %d", i)
	}
	assert.Equal(t, data, got, "every byte as published")
	assert.Contains(t, logs.String(), "stream stopped")
	assert.Contains(t, logs.String(), "short body")
	assert.GreaterOrEqual(t, c.Stats().Streamed, uint64(2), "the blocks before the cut came from the stream")
}

func TestCloseEndsStream(t *testing.T) {
	c, _ := newTestCache(t, Config{ReadAhead: 2})
	data := randomBytes(10*testBlock, 17)
	fetcher := &memOrigin{data: data, gate: make(chan struct{}), gateFrom: testBlock}
	f := c.Open(Content{ID: "v1", Name: "u", Size: int64(len(data))}, fetcher)
	for _, off := range []int64{0, 10} {
		_, err := f.ReadAt(testCtx(t), make([]byte, 10), off)
		require.NoError(t, err)
	}
	eventually(t, func() bool { return fetcher.calls.Load() == 2 }, "the stream to reach the fetcher")
	closed := make(chan struct{})
	go func() { f.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(hangBound):
		t.Fatal("Close did not return")
	}
	assert.Equal(t, int64(1), fetcher.cancelled.Load(), "Close waits for the stream to end")
	assert.False(t, c.cachedOrFilling(blockKey{"v1", 1}), "its claims are released")
	assert.Equal(t, 1, c.Stats().Blocks)

	_, err := f.ReadAt(testCtx(t), make([]byte, 10), 0)
	assert.ErrorIs(t, err, errClosed)
}

func TestReaderWaitingOnStreamSurvivesItsClose(t *testing.T) {
	c, _ := newTestCache(t, Config{ReadAhead: 1})
	data := randomBytes(40*testBlock, 18)
	fetcher := &memOrigin{data: data, gate: make(chan struct{}, 10), gateFrom: testBlock}
	content := Content{ID: "v1", Name: "u", Size: int64(len(data))}
	streamer := c.Open(content, fetcher)
	for _, off := range []int64{0, 10} {
		_, err := streamer.ReadAt(testCtx(t), make([]byte, 10), off)
		require.NoError(t, err)
	}
	eventually(t, func() bool { return fetcher.calls.Load() == 2 }, "the stream to reach the fetcher")

	reader := c.Open(content, fetcher)
	defer reader.Close()
	buf := make([]byte, 10)
	done := make(chan error, 1)
	go func() {
		_, err := reader.ReadAt(testCtx(t), buf, testBlock+5)
		done <- err
	}()
	eventually(t, func() bool { return c.Stats().Misses == 2 }, "reader to wait on the stream's block")
	streamer.Close()
	fetcher.gate <- struct{}{} // for the reader's own fill
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(hangBound):
		t.Fatal("reader did not return")
	}
	assert.Equal(t, data[testBlock+5:testBlock+15], buf)
	assert.Equal(t, int64(1), fetcher.cancelled.Load())
	assert.Equal(t, []int64{0, testBlock, testBlock}, fetcher.offsets())
}

func TestBlocksOnDiskAreNotStreamed(t *testing.T) {
	dir := t.TempDir()
	data := randomBytes(20*testBlock, 35)
	content := Content{ID: "v1", Name: "u", Size: int64(len(data)), Hashes: sha256Of(data)}
	first, _ := newTestCache(t, Config{ReadAhead: 4, DiskDir: dir, VerifyWholeBelow: -1})
	f := first.Open(content, &memOrigin{data: data})
	got, _ := readAll(testCtx(t), f, testBlock)
	f.Close()
	first.Close()
	require.Equal(t, data, got)

	second, _ := newTestCache(t, Config{ReadAhead: 4, DiskDir: dir, VerifyWholeBelow: -1})
	defer second.Close()
	fetcher := &memOrigin{data: data}
	eventually(t, func() bool { return second.Stats().DiskBlocks == 20 }, "the disk index")
	f = second.Open(content, fetcher)
	defer f.Close()
	got, _ = readAll(testCtx(t), f, testBlock/2)
	assert.True(t, bytes.Equal(data, got))
	assert.Zero(t, fetcher.calls.Load(), "every block from disk, none streamed")
	st := second.Stats()
	assert.Zero(t, st.Streamed)
	assert.Equal(t, uint64(20), st.DiskHits)
}
