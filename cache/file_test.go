package cache

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/resourcesync"
	"rsfs/tests/logbuf"
)

const testBlock = 4096

func newTestCache(t *testing.T, cfg Config) (*Cache, *logbuf.Buffer) {
	logs := &logbuf.Buffer{}
	cfg.Logger = logs.Logger()
	if cfg.BlockSize == 0 {
		cfg.BlockSize = testBlock
	}
	c := New(cfg)
	return c, logs
}

func TestSmallContentCorrectHash(t *testing.T) {
	c, _ := newTestCache(t, Config{})
	data := randomBytes(1000, 1)
	fetcher := &memOrigin{data: data}
	f := c.Open(Content{ID: "v1", Name: "http://x/a", Size: 1000, Hashes: sha256Of(data)}, fetcher)
	defer f.Close()
	buf := make([]byte, 2000)
	n, err := f.ReadAt(testCtx(t), buf, 0)
	assert.ErrorIs(t, err, io.EOF)
	assert.Equal(t, 1000, n)
	assert.Equal(t, data, buf[:n])
	n, err = f.ReadAt(testCtx(t), buf[:10], 990)
	require.NoError(t, err)
	assert.Equal(t, data[990:], buf[:n])
	assert.Equal(t, int64(1), fetcher.calls.Load())
	assert.Equal(t, [][2]int64{{0, 1000}}, fetcher.ranges)
}

func TestSmallContentHashMismatchCachesNothing(t *testing.T) {
	c, logs := newTestCache(t, Config{})
	data := randomBytes(1000, 2)
	fetcher := &memOrigin{data: data}
	f := c.Open(Content{ID: "v1", Name: "http://x/bad", Size: 1000, Hashes: wrongSHA256()}, fetcher)
	defer f.Close()
	buf := make([]byte, 100)
	for range 2 {
		n, err := f.ReadAt(testCtx(t), buf, 0)
		require.ErrorIs(t, err, ErrIntegrity)
		assert.Equal(t, 0, n)
		assert.Contains(t, err.Error(), "http://x/bad")
		assert.Contains(t, err.Error(), "sha-256 mismatch")
	}
	st := c.Stats()
	assert.Equal(t, 0, st.Blocks)
	assert.Equal(t, int64(0), st.Bytes)
	assert.Equal(t, int64(1), fetcher.calls.Load(), "a version no copy of which verifies is bad: not fetched again")
	assert.True(t, c.Bad("v1"))
	assert.Contains(t, logs.String(), "content hash mismatch")
	assert.Contains(t, logs.String(), "uri=http://x/bad")
}

func TestStrongestHashWins(t *testing.T) {
	c, _ := newTestCache(t, Config{})
	data := randomBytes(100, 3)
	wrongMD5 := md5Of([]byte("not it"))
	hashes := append([]resourcesync.Hash{wrongMD5}, sha256Of(data)...)
	f := c.Open(Content{ID: "v1", Name: "u", Size: 100, Hashes: hashes}, &memOrigin{data: data})
	defer f.Close()
	buf := make([]byte, 100)
	n, err := f.ReadAt(testCtx(t), buf, 0)
	require.NoError(t, err)
	assert.Equal(t, data, buf[:n])

	onlyMD5 := c.Open(Content{ID: "v2", Name: "u", Size: 100, Hashes: []resourcesync.Hash{wrongMD5, {Alg: "sha-512", Value: "zz"}}}, &memOrigin{data: data})
	defer onlyMD5.Close()
	_, err = onlyMD5.ReadAt(testCtx(t), buf, 0)
	require.ErrorIs(t, err, ErrIntegrity)
	assert.Contains(t, err.Error(), "md5 mismatch")
}

func TestEmptyContent(t *testing.T) {
	c, _ := newTestCache(t, Config{})
	fetcher := &memOrigin{}
	buf := make([]byte, 10)

	good := c.Open(Content{ID: "e1", Name: "u", Size: 0, Hashes: sha256Of(nil)}, fetcher)
	defer good.Close()
	n, err := good.ReadAt(testCtx(t), buf, 0)
	assert.Equal(t, 0, n)
	assert.ErrorIs(t, err, io.EOF)
	assert.NotErrorIs(t, err, ErrIntegrity)

	bad := c.Open(Content{ID: "e2", Name: "u", Size: 0, Hashes: wrongSHA256()}, fetcher)
	defer bad.Close()
	n, err = bad.ReadAt(testCtx(t), buf, 0)
	assert.Equal(t, 0, n)
	assert.ErrorIs(t, err, ErrIntegrity)

	noHash := c.Open(Content{ID: "e3", Name: "u", Size: 0}, fetcher)
	defer noHash.Close()
	_, err = noHash.ReadAt(testCtx(t), buf, 0)
	assert.ErrorIs(t, err, io.EOF)
	assert.Equal(t, int64(0), fetcher.calls.Load(), "an empty content needs no fetch")
}

func TestEOFSemantics(t *testing.T) {
	c, _ := newTestCache(t, Config{})
	data := randomBytes(3*testBlock+10, 4)
	size := int64(len(data))
	f := c.Open(Content{ID: "v1", Name: "u", Size: size}, &memOrigin{data: data})
	defer f.Close()
	ctx := testCtx(t)
	buf := make([]byte, 100)

	n, err := f.ReadAt(ctx, buf, size)
	assert.Equal(t, 0, n)
	assert.Equal(t, io.EOF, err)
	n, err = f.ReadAt(ctx, buf, size+5000)
	assert.Equal(t, 0, n)
	assert.Equal(t, io.EOF, err)

	n, err = f.ReadAt(ctx, buf, size-40)
	assert.Equal(t, 40, n)
	assert.Equal(t, io.EOF, err)
	assert.Equal(t, data[size-40:], buf[:n])

	n, err = f.ReadAt(ctx, buf, size-100)
	assert.Equal(t, 100, n)
	assert.NoError(t, err, "a full read ending exactly at the end may return nil")
	assert.Equal(t, data[size-100:], buf)

	_, err = f.ReadAt(ctx, buf, -1)
	assert.Error(t, err)
	assert.NotErrorIs(t, err, io.EOF)
}

func TestReadsSpanningBlocks(t *testing.T) {
	c, _ := newTestCache(t, Config{ReadAhead: -1})
	data := randomBytes(5*testBlock+123, 5)
	fetcher := &memOrigin{data: data}
	f := c.Open(Content{ID: "v1", Name: "u", Size: int64(len(data))}, fetcher)
	defer f.Close()
	buf := make([]byte, 3*testBlock)
	n, err := f.ReadAt(testCtx(t), buf, testBlock-7)
	require.NoError(t, err)
	assert.Equal(t, data[testBlock-7:4*testBlock-7], buf[:n])
	assert.ElementsMatch(t, []int64{0, testBlock, 2 * testBlock, 3 * testBlock}, fetcher.offsets())
	for _, r := range fetcher.ranges {
		assert.Equal(t, int64(testBlock), r[1], "aligned full blocks")
	}
}

func TestLargeContentCorrectHashPasses(t *testing.T) {
	c, logs := newTestCache(t, Config{})
	data := randomBytes(10*testBlock+77, 6)
	f := c.Open(Content{ID: "v1", Name: "u", Size: int64(len(data)), Hashes: sha256Of(data)}, &memOrigin{data: data})
	defer f.Close()
	got, errs := readAll(testCtx(t), f, 1000)
	assert.Equal(t, data, got)
	assert.Equal(t, io.EOF, errs[len(errs)-1])
	for i, err := range errs[:len(errs)-1] {
		require.NoError(t, err, "read %d", i)
	}
	assert.Empty(t, logs.String())
}

func TestLargeContentWrongHashFailsTheLastRead(t *testing.T) {
	c, logs := newTestCache(t, Config{VerifyWholeBelow: -1}) // streamed
	data := randomBytes(10*testBlock+77, 7)
	size := int64(len(data))
	f := c.Open(Content{ID: "v1", Name: "http://x/big", Size: size, Hashes: wrongSHA256()}, &memOrigin{data: data})
	defer f.Close()
	ctx := testCtx(t)
	const chunk = 1000
	buf := make([]byte, chunk)
	var off int64
	for ; off+chunk < size; off += chunk {
		n, err := f.ReadAt(ctx, buf, off)
		require.NoError(t, err, "read at %d", off)
		require.Equal(t, data[off:off+chunk], buf[:n])
	}
	n, err := f.ReadAt(ctx, buf, off)
	require.ErrorIs(t, err, ErrIntegrity)
	assert.Equal(t, 0, n, "the final bytes are not handed out")
	assert.Contains(t, err.Error(), "http://x/big")
	assert.Equal(t, 0, c.Stats().Blocks, "the content's blocks are dropped")
	assert.Contains(t, logs.String(), "content hash mismatch")
	assert.Contains(t, logs.String(), "expected="+wrongSHA256()[0].Value)
}

func TestOutOfOrderReadsStillVerify(t *testing.T) {
	data := randomBytes(8*testBlock, 8)
	size := int64(len(data))
	// Chunks of half a block, each pair of blocks read in reverse order, as
	// async readahead may deliver them.
	half := int64(testBlock / 2)
	var offs []int64
	for b := int64(0); b < 8; b += 2 {
		for _, blk := range []int64{b + 1, b} {
			offs = append(offs, blk*testBlock+half, blk*testBlock)
		}
	}
	for _, tc := range []struct {
		name   string
		hashes []resourcesync.Hash
	}{{"correct", sha256Of(data)}, {"wrong", wrongSHA256()}} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newTestCache(t, Config{VerifyWholeBelow: -1}) // streamed
			f := c.Open(Content{ID: "v1", Name: "u", Size: size, Hashes: tc.hashes}, &memOrigin{data: data})
			defer f.Close()
			buf := make([]byte, half)
			for i, off := range offs {
				n, err := f.ReadAt(testCtx(t), buf, off)
				// The pass completes with the read of block 6 (second-last
				// read); from then on every read of the File fails.
				if tc.name == "wrong" && i >= len(offs)-2 {
					require.ErrorIs(t, err, ErrIntegrity, "read %d at %d", i, off)
					assert.Equal(t, 0, n)
					continue
				}
				require.NoError(t, err, "read %d at %d", i, off)
				require.Equal(t, data[off:off+half], buf[:n])
			}
		})
	}
}

func TestShortBody(t *testing.T) {
	for _, ignoreRange := range []bool{false, true} {
		c, _ := newTestCache(t, Config{ReadAhead: -1})
		data := randomBytes(3*testBlock, 9)
		// Published one block and a bit longer than what the server has.
		f := c.Open(Content{ID: "v1", Name: "http://x/short", Size: int64(len(data)) + 100}, &memOrigin{data: data, ignoreRange: ignoreRange})
		buf := make([]byte, testBlock)
		n, err := f.ReadAt(testCtx(t), buf, 3*testBlock)
		assert.Equal(t, 0, n)
		require.ErrorIs(t, err, ErrIntegrity, "ignoreRange=%v", ignoreRange)
		assert.Contains(t, err.Error(), "short body")
		assert.Contains(t, err.Error(), "http://x/short")
		f.Close()
	}
}

func TestShortBodySmallContent(t *testing.T) {
	c, _ := newTestCache(t, Config{})
	f := c.Open(Content{ID: "v1", Name: "u", Size: 500}, &memOrigin{data: randomBytes(499, 10)})
	defer f.Close()
	_, err := f.ReadAt(testCtx(t), make([]byte, 10), 0)
	require.ErrorIs(t, err, ErrIntegrity)
	assert.Equal(t, 0, c.Stats().Blocks)
}

func TestLongBody(t *testing.T) {
	c, _ := newTestCache(t, Config{})
	data := randomBytes(3*testBlock, 11)
	f := c.Open(Content{ID: "v1", Name: "u", Size: 3 * testBlock}, longOrigin{data: data})
	defer f.Close()
	_, err := f.ReadAt(testCtx(t), make([]byte, 10), 0)
	require.ErrorIs(t, err, ErrIntegrity)
	assert.Contains(t, err.Error(), "longer")
}

func TestContentLongerThanPublished(t *testing.T) {
	c, _ := newTestCache(t, Config{ReadAhead: -1})
	data := randomBytes(3*testBlock+50, 12)
	// The server ignores Range and has 50 bytes more than published.
	fetcher := &memOrigin{data: data, ignoreRange: true}
	f := c.Open(Content{ID: "v1", Name: "u", Size: 3 * testBlock}, fetcher)
	defer f.Close()
	buf := make([]byte, testBlock)
	for b := int64(0); b < 2; b++ {
		_, err := f.ReadAt(testCtx(t), buf, b*testBlock)
		require.NoError(t, err)
	}
	_, err := f.ReadAt(testCtx(t), buf, 2*testBlock)
	require.ErrorIs(t, err, ErrIntegrity)
	assert.Contains(t, err.Error(), "published length")
}

func TestServerIgnoringRangeFillsFollowingBlocks(t *testing.T) {
	c, _ := newTestCache(t, Config{ReadAhead: -1, MaxBytes: 1 << 20})
	data := randomBytes(20*testBlock+1, 13)
	fetcher := &memOrigin{data: data, ignoreRange: true}
	f := c.Open(Content{ID: "v1", Name: "u", Size: int64(len(data)), Hashes: sha256Of(data)}, fetcher)
	defer f.Close()
	got, errs := readAll(testCtx(t), f, testBlock/4)
	assert.Equal(t, io.EOF, errs[len(errs)-1])
	for i, err := range errs[:len(errs)-1] {
		require.NoError(t, err, "read %d", i)
	}
	assert.Equal(t, data, got)
	assert.Equal(t, int64(1), fetcher.calls.Load(), "one stream serves every block: %v", fetcher.offsets())
	assert.Equal(t, uint64(20), c.Stats().Streamed)
}

func TestServerIgnoringRangeStreamsWithinHalfTheCache(t *testing.T) {
	// Half the cache holds 4 blocks: each stream serves its block and 4 more.
	c, _ := newTestCache(t, Config{ReadAhead: -1, MaxBytes: 8 * testBlock})
	data := randomBytes(20*testBlock, 14)
	fetcher := &memOrigin{data: data, ignoreRange: true}
	f := c.Open(Content{ID: "v1", Name: "u", Size: int64(len(data))}, fetcher)
	defer f.Close()
	got, _ := readAll(testCtx(t), f, testBlock)
	assert.Equal(t, data, got)
	assert.Equal(t, []int64{0, 5 * testBlock, 10 * testBlock, 15 * testBlock}, fetcher.offsets())
	assert.LessOrEqual(t, c.Stats().Bytes, int64(8*testBlock))
}

func TestServerIgnoringRangeWithPrefetchUsesOneStream(t *testing.T) {
	c, _ := newTestCache(t, Config{ReadAhead: 4, MaxBytes: 1 << 20})
	data := randomBytes(30*testBlock+9, 20)
	fetcher := &memOrigin{data: data, ignoreRange: true}
	f := c.Open(Content{ID: "v1", Name: "u", Size: int64(len(data)), Hashes: sha256Of(data)}, fetcher)
	defer f.Close()
	got, errs := readAll(testCtx(t), f, testBlock/4)
	assert.Equal(t, io.EOF, errs[len(errs)-1])
	assert.Equal(t, data, got)
	assert.Equal(t, []int64{0}, fetcher.offsets())
}

func TestRandomReadsDoNotPrefetch(t *testing.T) {
	c, _ := newTestCache(t, Config{ReadAhead: 4})
	data := randomBytes(40*testBlock, 16)
	fetcher := &memOrigin{data: data}
	f := c.Open(Content{ID: "v1", Name: "u", Size: int64(len(data))}, fetcher)
	defer f.Close()
	buf := make([]byte, 100)
	for _, b := range []int64{7, 2, 30, 12, 25} {
		_, err := f.ReadAt(testCtx(t), buf, b*testBlock+10)
		require.NoError(t, err)
	}
	idle(t, f)
	assert.Equal(t, int64(5), fetcher.calls.Load())
	assert.Equal(t, uint64(0), c.Stats().Prefetches)
	assert.Equal(t, uint64(0), c.Stats().Streamed, "no stream either")
}

// idle waits until every background read f's reads started (prefetches,
// streams) has ended, so what they fetched is counted: the wait is on
// the condition, not on a guess of how long they take.
func idle(t *testing.T, f *File) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		f.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-testCtx(t).Done():
		t.Fatal("the file's background reads did not end")
	}
}

func TestConcurrentFilesReadCorrectBytes(t *testing.T) {
	c, _ := newTestCache(t, Config{MaxBytes: 16 * testBlock})
	contents := make([][]byte, 4)
	for i := range contents {
		contents[i] = randomBytes(12*testBlock+i*333, uint64(100+i))
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			data := contents[g%4]
			f := c.Open(Content{ID: string(rune('a' + g%4)), Name: "u", Size: int64(len(data)), Hashes: sha256Of(data)}, &memOrigin{data: data, ignoreRange: g%2 == 1})
			defer f.Close()
			got, errs := readAll(testCtx(t), f, 3000+g*100)
			for _, err := range errs[:len(errs)-1] {
				if !assert.NoError(t, err) {
					return
				}
			}
			assert.True(t, bytes.Equal(data, got), "file %d", g)
		})
	}
	wg.Wait()
	assert.LessOrEqual(t, c.Stats().Bytes, int64(16*testBlock))
}

func TestCallerCancelDuringReadReturnsPromptly(t *testing.T) {
	c, _ := newTestCache(t, Config{})
	fetcher := &memOrigin{data: randomBytes(testBlock, 19), gate: make(chan struct{})}
	f := c.Open(Content{ID: "v1", Name: "u", Size: testBlock}, fetcher)
	defer f.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	_, err := f.ReadAt(ctx, make([]byte, 10), 0)
	require.True(t, errors.Is(err, context.DeadlineExceeded), "got %v", err)
	assert.NotErrorIs(t, err, ErrIntegrity, "a cancelled read is not an integrity failure")
	close(fetcher.gate)
}

func TestReadRangeHandsOutTheBlocksThemselves(t *testing.T) {
	c, _ := newTestCache(t, Config{})
	data := randomBytes(3*testBlock, 2)
	fetcher := &memOrigin{data: data}
	f := c.Open(Content{ID: "v1", Name: "http://x/a", Size: int64(len(data))}, fetcher)
	defer f.Close()

	parts, err := f.ReadRange(testCtx(t), testBlock-10, 20)
	require.NoError(t, err)
	require.Len(t, parts, 2, "a range across a block boundary is two slices")
	assert.Equal(t, data[testBlock-10:testBlock+10], bytes.Join(parts, nil))
	again, err := f.ReadRange(testCtx(t), testBlock, 10)
	require.NoError(t, err)
	assert.Same(t, &parts[1][0], &again[0][0], "the same cached block's memory, not a copy")

	parts, err = f.ReadRange(testCtx(t), int64(len(data))-5, 10)
	assert.ErrorIs(t, err, io.EOF, "fewer bytes than asked")
	assert.Equal(t, data[len(data)-5:], bytes.Join(parts, nil))
	assert.Equal(t, int64(3), fetcher.calls.Load(), "each block fetched once")
}
