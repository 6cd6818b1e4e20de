package main

import (
	"fmt"
	"time"

	"rsfs/cache"
	"rsfs/metrics"
	"rsfs/mountsrc"
	"rsfs/mountutil"
	"rsfs/report"
	"rsfs/status"
)

// newMountReport is what the status and the metrics of a mount of rawURL
// on dir read: src's follower (once src.Follow made it) and catalog, the cache, and the file
// system's failed reads (readErrors, which the file system is given).
func newMountReport(mf *mountFlags, rawURL, dir, holdFile, logFile string, src *mountsrc.Source, blocks *cache.Cache, readErrors *status.Events, reach *status.Reachability) (*status.Mount, *metrics.Mount) {
	m := &metrics.Mount{Started: time.Now(), Client: src.Client(), Follower: src,
		Cache: blocks, ReadErrors: readErrors, Count: src.Catalog().Len, HoldFile: holdFile}
	m.MemMax, m.DiskMax = blocks.Bounds()
	s := &status.Mount{URL: rawURL, Dir: dir, Started: m.Started, Interval: mf.pollInterval,
		Protocol: src.Protocol(), Origin: src.Origin(), HoldFile: holdFile, Follower: m.Follower, Count: m.Count,
		Cache: m.CacheReport, Fetched: m.Fetched, Throttled: m.Throttled, Verification: blocks.VerifyFailures, ReadErrors: readErrors.Since,
		HeldUntil: mountutil.HeldUntil, LogFile: logFile, Reach: reach}
	return s, m
}

// mountedLine is what a mount that worked says on the terminal: "mounted
// 5,013 resources from URL at DIR (log: PATH)".
func mountedLine(resources int, rawURL, dir, logFile string) string {
	line := fmt.Sprintf("mounted %s resources from %s at %s", report.Thousands(int64(resources)), rawURL, dir)
	if logFile != "" {
		line += " (log: " + logFile + ")"
	}
	return line
}
