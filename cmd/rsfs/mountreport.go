package main

import (
	"time"

	"rsfs/cache"
	"rsfs/metrics"
)

// newMountReport is what the status and the metrics of a mount of rawURL
// on dir read; serve attaches the mount's parts before it serves.
func newMountReport(mf *mountFlags, rawURL, dir, stateDir string) *metrics.Mount {
	m := &metrics.Mount{URL: rawURL, Dir: dir, Started: time.Now(), Interval: mf.pollInterval, MemMax: mf.sizes.cache}
	if m.MemMax == 0 {
		m.MemMax = cache.DefaultMaxBytes
	}
	if stateDir != "" {
		m.DiskMax = mf.sizes.disk // 0: no disk cache
	}
	return m
}
