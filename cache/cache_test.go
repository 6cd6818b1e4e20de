package cache

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGetMissThenHit(t *testing.T) {
	c := New(Config{})
	ctx := testCtx(t)
	var calls atomic.Int64
	fill := func(context.Context) ([]byte, error) {
		calls.Add(1)
		return []byte("block"), nil
	}
	got, err := c.Get(ctx, "v1", 3, fill)
	require.NoError(t, err)
	assert.Equal(t, []byte("block"), got)
	got, err = c.Get(ctx, "v1", 3, fill)
	require.NoError(t, err)
	assert.Equal(t, []byte("block"), got)
	assert.Equal(t, int64(1), calls.Load())

	st := c.Stats()
	assert.Equal(t, uint64(1), st.Hits)
	assert.Equal(t, uint64(1), st.Misses)
	assert.Equal(t, uint64(1), st.Fills)
	assert.Equal(t, int64(5), st.Bytes)
	assert.Equal(t, 1, st.Blocks)
}

func TestGetFillErrorIsNotCached(t *testing.T) {
	c := New(Config{})
	ctx := testCtx(t)
	boom := errors.New("boom")
	_, err := c.Get(ctx, "v1", 0, func(context.Context) ([]byte, error) { return nil, boom })
	require.ErrorIs(t, err, boom)
	got, err := c.Get(ctx, "v1", 0, func(context.Context) ([]byte, error) { return []byte("ok"), nil })
	require.NoError(t, err)
	assert.Equal(t, []byte("ok"), got)
	assert.Equal(t, uint64(1), c.Stats().FillErrors)
}

func TestGetSingleflight(t *testing.T) {
	c := New(Config{})
	ctx := testCtx(t)
	var calls atomic.Int64
	release := make(chan struct{})
	fill := func(context.Context) ([]byte, error) {
		calls.Add(1)
		<-release
		return []byte("shared"), nil
	}
	const waiters = 32
	results := make([][]byte, waiters)
	errs := make([]error, waiters)
	var wg sync.WaitGroup
	for i := range waiters {
		wg.Go(func() { results[i], errs[i] = c.Get(ctx, "v1", 0, fill) })
	}
	eventually(t, func() bool { return c.Stats().Misses == waiters }, "all waiters to miss")
	close(release)
	wg.Wait()
	assert.Equal(t, int64(1), calls.Load())
	for i := range waiters {
		require.NoError(t, errs[i])
		assert.Equal(t, []byte("shared"), results[i])
	}
}

func TestGetCancelledWaiterDoesNotFailOthers(t *testing.T) {
	c := New(Config{})
	release := make(chan struct{})
	fillCtxErr := make(chan error, 1)
	fill := func(ctx context.Context) ([]byte, error) {
		<-release
		fillCtxErr <- ctx.Err()
		return []byte("data"), nil
	}
	firstCtx, cancelFirst := context.WithCancel(context.Background())
	firstErr := make(chan error, 1)
	go func() {
		_, err := c.Get(firstCtx, "v1", 0, fill)
		firstErr <- err
	}()
	eventually(t, func() bool { return c.Stats().Fills == 1 }, "the fill to start")

	secondDone := make(chan struct{})
	var second []byte
	var secondErr error
	go func() {
		defer close(secondDone)
		second, secondErr = c.Get(testCtx(t), "v1", 0, fill)
	}()
	eventually(t, func() bool { return c.Stats().Misses == 2 }, "the second waiter")

	cancelFirst()
	select {
	case err := <-firstErr:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(hangBound):
		t.Fatal("cancelled waiter did not return")
	}
	close(release)
	select {
	case <-secondDone:
	case <-time.After(hangBound):
		t.Fatal("second waiter did not return")
	}
	require.NoError(t, secondErr)
	assert.Equal(t, []byte("data"), second)
	assert.NoError(t, <-fillCtxErr, "the fill's context must not follow a waiter's")
	assert.Equal(t, uint64(1), c.Stats().Fills)
}

func TestGetFillHasItsOwnTimeout(t *testing.T) {
	c := New(Config{FillTimeout: 50 * time.Millisecond})
	_, err := c.Get(testCtx(t), "v1", 0, func(ctx context.Context) ([]byte, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestByteBoundEvictsLeastRecentlyUsed(t *testing.T) {
	const block, maxBlocks = 100, 10
	c := New(Config{MaxBytes: block * maxBlocks})
	ctx := testCtx(t)
	put := func(from, to int64) {
		for i := from; i <= to; i++ {
			c.Put("v1", i, make([]byte, block))
			require.LessOrEqual(t, c.Stats().Bytes, int64(block*maxBlocks), "after put %d", i)
		}
	}
	put(0, 12) // blocks 3..12 remain
	_, err := c.Get(ctx, "v1", 5, func(context.Context) ([]byte, error) {
		return nil, errors.New("block 5 must be cached")
	})
	require.NoError(t, err)
	put(13, 16) // evicts 3, 4, then 6, 7: block 5 was used recently

	st := c.Stats()
	assert.Equal(t, int64(block*maxBlocks), st.Bytes)
	assert.Equal(t, maxBlocks, st.Blocks)
	assert.Equal(t, uint64(7), st.Evictions)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, b := range []int64{5, 8, 9, 10, 11, 12, 13, 14, 15, 16} {
		assert.True(t, c.lru.contains(blockKey{"v1", b}), "block %d", b)
	}
	for _, b := range []int64{0, 3, 4, 6, 7} {
		assert.False(t, c.lru.contains(blockKey{"v1", b}), "block %d", b)
	}
}

func TestByteBoundReplacingBlockAdjustsBytes(t *testing.T) {
	c := New(Config{MaxBytes: 1000})
	c.Put("v1", 0, make([]byte, 600))
	c.Put("v1", 0, make([]byte, 300))
	c.Put("v1", 1, make([]byte, 700))
	st := c.Stats()
	assert.Equal(t, int64(1000), st.Bytes)
	assert.Equal(t, 2, st.Blocks)
	assert.Equal(t, uint64(0), st.Evictions)
}

func TestBlockLargerThanBoundIsNotStored(t *testing.T) {
	c := New(Config{MaxBytes: 100})
	c.Put("v1", 0, make([]byte, 50))
	c.Put("v1", 1, make([]byte, 101))
	st := c.Stats()
	assert.Equal(t, int64(50), st.Bytes)
	assert.Equal(t, 1, st.Blocks)
}

func TestConcurrentGetsStayWithinBound(t *testing.T) {
	const maxBytes = 64 * 1024
	c := New(Config{MaxBytes: maxBytes})
	ctx := testCtx(t)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				id := fmt.Sprintf("v%d", (g+i)%5)
				b := int64(i % 37)
				data, err := c.Get(ctx, id, b, func(context.Context) ([]byte, error) {
					return []byte(fmt.Sprintf("%s/%d", id, b) + string(make([]byte, 4000))), nil
				})
				if !assert.NoError(t, err) {
					return
				}
				assert.Equal(t, fmt.Sprintf("%s/%d", id, b), string(data[:len(data)-4000]))
				assert.LessOrEqual(t, c.Stats().Bytes, int64(maxBytes))
			}
		})
	}
	wg.Wait()
	assert.LessOrEqual(t, c.Stats().Bytes, int64(maxBytes))
}

func TestDropContent(t *testing.T) {
	c := New(Config{})
	for i := range int64(1000) {
		c.Put("old", i, []byte{1, 2, 3})
	}
	c.Put("other", 0, []byte{9})
	c.DropContent("old")
	st := c.Stats()
	assert.Equal(t, 1, st.Blocks)
	assert.Equal(t, int64(1), st.Bytes)
	assert.Equal(t, uint64(1000), st.Drops)
	c.mu.Lock()
	_, indexed := c.lru.byID["old"]
	c.mu.Unlock()
	assert.False(t, indexed, "the id index must forget a dropped id")

	var calls atomic.Int64
	got, err := c.Get(testCtx(t), "old", 7, func(context.Context) ([]byte, error) {
		calls.Add(1)
		return []byte("new"), nil
	})
	require.NoError(t, err)
	assert.Equal(t, []byte("new"), got)
	assert.Equal(t, int64(1), calls.Load())
}

func TestDropContentDuringFillDoesNotStoreIt(t *testing.T) {
	c := New(Config{})
	release := make(chan struct{})
	done := make(chan []byte, 1)
	go func() {
		data, _ := c.Get(testCtx(t), "v1", 0, func(context.Context) ([]byte, error) {
			<-release
			return []byte("stale"), nil
		})
		done <- data
	}()
	eventually(t, func() bool { return c.Stats().Fills == 1 }, "the fill to start")
	c.DropContent("v1")
	close(release)
	assert.Equal(t, []byte("stale"), <-done, "the waiter still gets its bytes")
	assert.Equal(t, 0, c.Stats().Blocks, "but they are not cached")
}

// Bounds are the cache's own, defaults applied: what status and metrics
// report as the memory and disk maxima.
func TestBounds(t *testing.T) {
	mem := New(Config{})
	m, d := mem.Bounds()
	assert.Equal(t, int64(DefaultMaxBytes), m)
	assert.Zero(t, d, "no disk cache")
	both, err := NewWithDisk(Config{MaxBytes: 1 << 20, DiskDir: t.TempDir(), DiskMaxBytes: 5 << 20})
	require.NoError(t, err)
	defer both.Close()
	m, d = both.Bounds()
	assert.Equal(t, int64(1<<20), m)
	assert.Equal(t, int64(5<<20), d)
}
