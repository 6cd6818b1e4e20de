package cache

import "testing"

func TestGCPercent(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		live, blocks int64
		want         int
	}{
		{0, 0, 100},
		{10 * mib, 0, 100},                  // small heap: GOGC=100 would allow less than the floor
		{400 * mib, 0, 100},                 // no blocks: plain GOGC=100
		{256*mib + 32*mib, 256 * mib, 10},   // a full cache over a small heap: ~16 MiB headroom (clamped to 10%)
		{256*mib + 128*mib, 256 * mib, 30},  // 128 MiB of other heap earns 128 MiB of headroom
		{1024*mib + 256*mib, 256 * mib, 80}, // a large catalog keeps most of its headroom
		{100 * mib, 200 * mib, 15},          // blocks counted but no longer live: the floor
		{1034 * mib, 1024 * mib, 5},         // a large cache over a tiny heap: never below 5%
	} {
		if got := gcPercent(c.live, c.blocks); got != c.want {
			t.Errorf("gcPercent(%d MiB live, %d MiB blocks) = %d, want %d", c.live/mib, c.blocks/mib, got, c.want)
		}
	}
}
