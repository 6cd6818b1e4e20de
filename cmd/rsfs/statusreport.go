package main

import (
	"encoding/json"
	"os"
	"strconv"
	"time"

	"rsfs/cache"
	"rsfs/fetch"
	"rsfs/fs"
	"rsfs/mountutil"
	"rsfs/status"
)

// statusWindow is how far back status counts failures; statusLatest is how
// many of their reasons it shows.
const (
	statusWindow = time.Hour
	statusLatest = 5
)

// reporter gathers a mount's state from its parts, read-only.
type reporter struct {
	url, dir string
	started  time.Time
	interval time.Duration
	memMax   int64
	diskMax  int64 // 0: no disk cache
	mountParts
}

// mountParts are what a reporter reads of a mount, whichever protocol it
// serves.
type mountParts struct {
	protocol string // "resourcesync" or "atompmh"
	origin   string
	client   *fetch.Client
	fsys     *fs.FS
	follower status.Follower
	blocks   *cache.Cache
	count    func() int
}

func (r *reporter) report() *status.Report {
	now := time.Now()
	st := r.follower.Status()
	rep := &status.Report{
		Source: r.url, Protocol: r.protocol, Origin: r.origin, Dir: r.dir, PID: os.Getpid(),
		Started: r.started.UTC(), Now: now.UTC(), Resources: r.count(),
		PollInterval: r.interval.String(), Pushed: st.Pushed,
		Verification: r.blocks.VerifyFailures(statusWindow, statusLatest),
		ReadErrors:   r.fsys.ReadErrors(statusWindow, statusLatest),
		Sets:         []status.SetReport{},
		Fetched:      []status.OriginReport{},
	}
	for _, s := range st.Sets {
		rep.Sets = append(rep.Sets, status.SetReport{
			Set: s.Set, Position: s.Position.UTC(), NewestChange: s.Newest.UTC(),
			BehindSeconds: s.Newest.Sub(s.Position).Seconds(), Resources: s.Resources,
		})
	}
	rep.Polls = status.PollReport{Count: st.Polls, Failures: st.PollFailures, Applied: st.Applied, Reloads: st.Reloads}
	if !st.LastPoll.IsZero() {
		last := st.LastPoll.UTC()
		rep.Polls.Last, rep.Polls.LastTook, rep.Polls.Result = &last, st.LastPollTook.Seconds(), "ok"
		if st.LastPollErr != "" {
			rep.Polls.Result = st.LastPollErr
		}
	}
	if !st.NextPoll.IsZero() && r.interval > 0 {
		next := st.NextPoll.UTC()
		rep.Polls.Next = &next
	}
	if until, ok := mountutil.HeldUntil(r.dir); ok {
		rep.Hold = &status.HoldReport{Until: until.UTC()}
	}
	rep.Cache = r.cacheReport()
	bytes := r.client.BytesByOrigin()
	byOrigin := map[string]int{}
	for _, t := range r.client.Traffic() {
		i, ok := byOrigin[t.Origin]
		if !ok {
			i = len(rep.Fetched)
			byOrigin[t.Origin] = i
			rep.Fetched = append(rep.Fetched, status.OriginReport{Origin: t.Origin, Bytes: bytes[t.Origin]})
		}
		rep.Fetched[i].Requests += t.Requests
	}
	return rep
}

func (r *reporter) cacheReport() status.CacheReport {
	cs := r.blocks.Stats()
	mem := status.TierReport{Bytes: cs.Bytes, MaxBytes: r.memMax, Blocks: cs.Blocks, Hits: cs.Hits, Lookups: cs.Hits + cs.Misses}
	mem.HitRatio = ratio(mem.Hits, mem.Lookups)
	out := status.CacheReport{Memory: mem}
	if r.diskMax > 0 {
		// The disk is asked on each memory miss.
		disk := status.TierReport{Bytes: cs.DiskBytes, MaxBytes: r.diskMax, Blocks: cs.DiskBlocks, Hits: cs.DiskHits, Lookups: cs.Misses}
		disk.HitRatio = ratio(disk.Hits, disk.Lookups)
		out.Disk = &disk
	}
	return out
}

func ratio(a, b uint64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// json renders the report for fs.XattrStatus.
func (r *reporter) json() []byte {
	data, err := json.Marshal(r.report())
	if err != nil {
		return []byte(`{"error":` + strconv.Quote(err.Error()) + `}`)
	}
	return data
}

func newReporter(mf *mountFlags, rawURL, dir, stateDir string) *reporter {
	r := &reporter{url: rawURL, dir: dir, started: time.Now(), interval: mf.pollInterval, memMax: mf.sizes.cache}
	if r.memMax == 0 {
		r.memMax = cache.DefaultMaxBytes
	}
	if stateDir != "" {
		r.diskMax = mf.sizes.disk
		if r.diskMax == 0 {
			r.diskMax = cache.DefaultDiskMaxBytes
		}
	}
	return r
}

// attach gives the reporter the mount's parts; before the mount serves.
func (r *reporter) attach(p mountParts) { r.mountParts = p }

// heldUntil is mountutil.HeldUntil, for the metrics.
var heldUntil = mountutil.HeldUntil
