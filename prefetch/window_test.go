package prefetch

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
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
