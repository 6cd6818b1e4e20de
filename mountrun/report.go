package mountrun

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"rsfs/cache"
	"rsfs/metrics"
	"rsfs/mountsrc"
	"rsfs/mountutil"
	"rsfs/status"
)

// newReport is what the status and the metrics of the mount of cfg read:
// src's follower (once src.Follow made it) and catalog, the cache, and the
// file system's failed reads (readErrors, which the file system is given).
func newReport(cfg Config, holdFile string, src *mountsrc.Source, blocks *cache.Cache, readErrors *status.Events, reach *status.Reachability) (*status.Mount, *metrics.Mount) {
	m := &metrics.Mount{Started: time.Now(), Client: src.Client(), Follower: src,
		Cache: blocks, ReadErrors: readErrors, Count: src.Catalog().Len, HoldFile: holdFile}
	m.MemMax, m.DiskMax = blocks.Bounds()
	s := &status.Mount{URL: cfg.URL, Dir: cfg.Dir, Started: m.Started, Interval: cfg.PollInterval,
		Protocol: src.Protocol(), Origin: src.Origin(), HoldFile: holdFile, Follower: m.Follower, Count: m.Count,
		Cache: m.CacheReport, Fetched: m.Fetched, Throttled: m.Throttled, Verification: blocks.VerifyFailures, ReadErrors: readErrors.Since,
		HeldUntil: mountutil.HeldUntil, LogFile: cfg.LogFile, Reach: reach, Hints: cfg.StatusHints}
	return s, m
}

// pollNow is fs.Config.Poll: the follower's PollNow, reported.
func pollNow(stat *status.Mount, src *mountsrc.Source) func(ctx context.Context) []byte {
	return func(ctx context.Context) []byte {
		fl := src.Follower()
		rep := stat.PollNow(func() error {
			if fl == nil {
				return errors.New("the mount is not following yet")
			}
			return fl.PollNow(ctx)
		})
		data, err := json.Marshal(rep)
		if err != nil {
			data = []byte(`{"error":"` + err.Error() + `"}`)
		}
		return data
	}
}
