package metrics

import (
	"sort"
	"time"

	"rsfs/cache"
	"rsfs/fetch"
	"rsfs/status"
)

// Mount is a mount's parts as its metrics read them, read-only, whichever
// protocol it serves; it also gives the status (status.Mount) the cache's
// tiers and the traffic, in the status model. Set every field before the
// mount serves.
type Mount struct {
	Started    time.Time
	MemMax     int64 // the memory cache's bound
	DiskMax    int64 // the disk cache's bound; 0: no disk cache
	Client     *fetch.Client
	Follower   status.Follower
	Cache      *cache.Cache
	ReadErrors *status.Events // the file system's failed reads (fs.Config.ReadErrors)
	Count      func() int     // resources in the tree
	PageStores func() int64   // warmed files handed to the kernel's page cache (fs.FS.PageStores); nil: none
	HoldFile   string         // the file the mount reads its hold from (mountutil.HoldPath)
}

// CacheReport is the cache's tiers now, for status.Mount.Cache.
func (r *Mount) CacheReport() status.CacheReport {
	cs := r.Cache.Stats()
	mem := status.TierReport{Bytes: cs.Bytes, MaxBytes: r.MemMax, Blocks: cs.Blocks, Hits: cs.Hits, Lookups: cs.Hits + cs.Misses}
	mem.HitRatio = ratio(mem.Hits, mem.Lookups)
	out := status.CacheReport{Memory: mem}
	if r.DiskMax > 0 {
		// The disk is asked by every fill, a memory miss's, a prefetch's
		// or a warm's: its own count, so that hits never exceed lookups.
		disk := status.TierReport{Bytes: cs.DiskBytes, MaxBytes: r.DiskMax, Blocks: cs.DiskBlocks, Hits: cs.DiskHits, Lookups: cs.DiskLookups,
			Writes: cs.DiskWrites, Evictions: cs.DiskEvictions}
		disk.HitRatio = ratio(disk.Hits, disk.Lookups)
		out.Disk = &disk
	}
	return out
}

// Fetched is what was fetched from each origin, in the order first
// fetched, for status.Mount.Fetched.
func (r *Mount) Fetched() []status.OriginReport {
	bytes := r.Client.BytesByOrigin()
	out := []status.OriginReport{}
	byOrigin := map[string]int{}
	for _, t := range r.Client.Traffic() {
		i, ok := byOrigin[t.Origin]
		if !ok {
			i = len(out)
			byOrigin[t.Origin] = i
			out = append(out, status.OriginReport{Origin: t.Origin, Bytes: bytes[t.Origin]})
		}
		out[i].Requests += t.Requests
	}
	return out
}

// Throttled is the origins that said "slow down" in the last minute, or
// that are paused now, for status.Mount.Throttled.
func (r *Mount) Throttled() []status.ThrottleReport {
	out := []status.ThrottleReport{}
	for _, p := range r.Client.Pacing() {
		if p.Throttled == 0 && p.Paused.IsZero() {
			continue
		}
		t := status.ThrottleReport{Origin: p.Origin, Answers: p.Throttled, InFlight: p.InFlight, Limit: p.Limit,
			Rate: p.Rate, MaxRate: p.MaxRate, Waiting: p.Waiting}
		if !p.Paused.IsZero() {
			until := p.Paused.UTC()
			t.PausedUntil = &until
		}
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Origin < out[j].Origin })
	return out
}

func ratio(a, b uint64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
