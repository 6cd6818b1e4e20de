package main

import (
	"time"

	"rsfs/cache"
	"rsfs/metrics"
	"rsfs/mountsrc"
	"rsfs/mountutil"
	"rsfs/status"
)

// newMountReport is what the status and the metrics of a mount of rawURL
// on dir read: src's follower (once src.Follow made it) and catalog, the cache, and the file
// system's failed reads (readErrors, which the file system is given).
func newMountReport(mf *mountFlags, rawURL, dir, holdFile string, src *mountsrc.Source, blocks *cache.Cache, readErrors *status.Events) (*status.Mount, *metrics.Mount) {
	m := &metrics.Mount{Started: time.Now(), Client: src.Client(), Follower: src,
		Cache: blocks, ReadErrors: readErrors, Count: src.Catalog().Len, HoldFile: holdFile}
	m.MemMax, m.DiskMax = blocks.Bounds()
	s := &status.Mount{URL: rawURL, Dir: dir, Started: m.Started, Interval: mf.pollInterval,
		Protocol: src.Protocol(), Origin: src.Origin(), HoldFile: holdFile, Follower: m.Follower, Count: m.Count,
		Cache: m.CacheReport, Fetched: m.Fetched, Verification: blocks.VerifyFailures, ReadErrors: readErrors.Since,
		HeldUntil: mountutil.HeldUntil}
	return s, m
}
