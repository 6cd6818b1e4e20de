package prefetch

import "time"

// A fill's size is derived from the Source's network as its requests
// measure it (Config.Network): enough files to cover a few round trips of
// a reader that finds them in memory, and a few times the bytes the
// network carries in a round trip, within bounds. Until a request has
// completed, a fill is warmAhead files and warmAheadBytes bytes.
const (
	warmReaderRate   = 20000    // small files a second a reader finds in memory, at most (grep -r reads about 5,000 on 2 cores)
	warmFilesMin     = 64       // files in one fill, at least
	warmFilesMax     = 2048     // and at most
	warmBytesMin     = 4 << 20  // bytes of one fill, at least
	warmBytesMax     = 64 << 20 // and at most (the cache's warm budget bounds them too)
	warmBytesPerTrip = 4        // a fill's bytes: this many round trips of the bandwidth
	// A walk that goes on doubles its fills, from the second that crosses
	// directories, up to warmGrownFiles files and warmGrownBytes bytes
	// (or the network's size, where that is more). On a fast network a
	// fill is warmFilesMin files, and each costs its reader a wait at the
	// refill point and at the fill's first file, while rsfs's own
	// fetching is the limit: a first grep -r of 20,000 files from nginx on
	// 127.0.0.1 took 6 % less with fills of 256. A reader that stops
	// leaves at most one grown fill fetched for nothing.
	warmGrownFiles = 256
	warmGrownBytes = 16 << 20
)

// windowSize bounds one fill.
type windowSize struct {
	files int
	bytes int64
}

// windowSize is the size of a fill on the network measured now.
func (p *Prefetcher) windowSize() windowSize {
	size := windowSize{files: warmAhead, bytes: warmAheadBytes}
	if p.cfg.Network == nil {
		return size
	}
	rtt, bandwidth := p.cfg.Network()
	if rtt <= 0 {
		return size
	}
	size.files = clampTo(int64(rtt.Seconds()*warmReaderRate), warmFilesMin, warmFilesMax)
	if bandwidth > 0 {
		size.bytes = int64(clampTo(int64(warmBytesPerTrip*bandwidth*rtt.Seconds()), warmBytesMin, warmBytesMax))
	}
	return size
}

// clampTo is v within [lo, hi].
func clampTo(v int64, lo, hi int) int { return int(min(max(v, int64(lo)), int64(hi))) }

// NetworkFunc returns the round trip and bandwidth (bytes a second)
// measured to the Source; zero where not measured yet.
type NetworkFunc func() (rtt time.Duration, bandwidth float64)

// grown is the size of a walk's fill after walked fills that crossed
// directories before it: doubled for each, within warmGrownFiles and
// warmGrownBytes, never less than s.
func (s windowSize) grown(walked int) windowSize {
	factor := int64(1) << min(walked, 16)
	files := min(int64(s.files)*factor, warmGrownFiles)
	return windowSize{files: max(s.files, int(files)), bytes: max(s.bytes, min(s.bytes*factor, warmGrownBytes))}
}
