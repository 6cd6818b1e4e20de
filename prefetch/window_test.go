package prefetch

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"rsfs/catalog"
	"rsfs/tests/wait"
)

// A fill is sized from the network measured: files for a round trip of a
// fast reader, bytes for four round trips of the bandwidth, within bounds;
// fixed sizes until something is measured.
func TestWindowSizeFollowsTheNetwork(t *testing.T) {
	for _, c := range []struct {
		rtt       time.Duration
		bandwidth float64
		want      windowSize
	}{
		{0, 0, windowSize{files: warmAhead, bytes: warmAheadBytes}},
		{50 * time.Millisecond, 0, windowSize{files: 1000, bytes: warmAheadBytes}},
		{50 * time.Millisecond, 100e6, windowSize{files: 1000, bytes: 20e6}},
		{150 * time.Millisecond, 10e6, windowSize{files: warmFilesMax, bytes: 6e6}},
		{10 * time.Millisecond, 10e6, windowSize{files: 200, bytes: warmBytesMin}},
		{time.Millisecond, 1e9, windowSize{files: warmFilesMin, bytes: warmBytesMin}},
		{time.Second, 1e9, windowSize{files: warmFilesMax, bytes: warmBytesMax}},
	} {
		p := &Prefetcher{cfg: Config{Network: func() (time.Duration, float64) { return c.rtt, c.bandwidth }}}
		assert.Equal(t, c.want, p.windowSize(), "rtt %v, bandwidth %.0f", c.rtt, c.bandwidth)
	}
	assert.Equal(t, windowSize{files: warmAhead, bytes: warmAheadBytes}, (&Prefetcher{}).windowSize(), "no network")
}

// A walk's fills double from its second crossing one, up to
// warmGrownFiles and warmGrownBytes; a size the network gives above those
// stays as it is.
func TestGrownFillsDoubleUpToTheirBound(t *testing.T) {
	fast := windowSize{files: warmFilesMin, bytes: warmBytesMin}
	for walked, want := range []windowSize{
		{files: 64, bytes: 4 << 20}, {files: 128, bytes: 8 << 20}, {files: 256, bytes: 16 << 20}, {files: 256, bytes: 16 << 20},
	} {
		assert.Equal(t, want, fast.grown(walked), "after %d fills", walked)
	}
	assert.Equal(t, windowSize{files: 256, bytes: 16 << 20}, fast.grown(1000), "no overflow")
	slow := windowSize{files: 1000, bytes: 20e6}
	assert.Equal(t, slow, slow.grown(5), "the network's size, where it is more")
}

// On a fast network a long walk's fills grow: the reader waits at fewer
// refill points, and a reader that stops leaves at most one grown fill.
func TestWalkOnAFastNetworkGrowsItsFills(t *testing.T) {
	paths := fanOut(3000, 20, 25)
	w := newWarmTree(t, paths, true)
	w.p.cfg.Network = func() (time.Duration, float64) { return 100 * time.Microsecond, 1e9 }
	var sizes []int
	batch := w.p.cfg.Batch
	w.p.cfg.Batch = func(ctx context.Context, rs []*catalog.Resource) [][]byte {
		w.mu.Lock()
		sizes = append(sizes, len(rs))
		w.mu.Unlock()
		return batch(ctx, rs)
	}
	order := readdirOrder(paths)
	for _, p := range order[:1500] {
		w.read(t, p)
	}
	wait.For(t, "the fills to be read", func() bool { return w.askedAll() == w.blocks.Stats().Warms })
	w.mu.Lock()
	defer w.mu.Unlock()
	assert.Equal(t, warmGrownFiles, slices.Max(sizes), "fills grew to their bound: %v", sizes)
	assert.Less(t, len(sizes), 1500/warmFilesMin, "fewer fills than of the network's size: %v", sizes)
	for i, n := range sizes {
		assert.LessOrEqual(t, n, warmGrownFiles, "fill %d", i)
	}
}
