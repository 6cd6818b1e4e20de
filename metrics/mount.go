package metrics

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

// Mount is a mount's parts as its status and its metrics read them,
// read-only, whichever protocol it serves. Set every field before the
// mount serves.
type Mount struct {
	URL, Dir string // the Source's URL as given, the mount point
	Started  time.Time
	Interval time.Duration // --poll-interval; 0: not following
	MemMax   int64         // the memory cache's bound
	DiskMax  int64         // the disk cache's bound; 0: no disk cache
	Protocol string        // protocol.ResourceSync or protocol.AtomPMH
	Origin   string
	Client   *fetch.Client
	FS       *fs.FS
	Follower status.Follower
	Cache    *cache.Cache
	Count    func() int // resources in the tree
	HoldFile string     // the file the mount reads its hold from (mountutil.HoldPath)
}

// Report is the mount's status now: what `rsfs status` prints.
func (r *Mount) Report() *status.Report {
	now := time.Now()
	st := r.Follower.Status()
	rep := &status.Report{
		Source: r.URL, Protocol: r.Protocol, Origin: r.Origin, Dir: r.Dir, PID: os.Getpid(),
		Started: r.Started.UTC(), Now: now.UTC(), Resources: r.Count(),
		PollInterval: r.Interval.String(), Pushed: st.Pushed,
		Verification: r.Cache.VerifyFailures(statusWindow, statusLatest),
		ReadErrors:   r.FS.ReadErrors(statusWindow, statusLatest),
		Sets:         []status.SetReport{},
		Fetched:      []status.OriginReport{},
	}
	for _, s := range st.Sets {
		sr := status.SetReport{
			Set: s.Set, Position: s.Position.UTC(), NewestChange: s.Newest.UTC(),
			BehindSeconds: s.Behind(now, r.Started).Seconds(), Resources: s.Resources,
			Degraded: []status.DocReport{},
		}
		if !s.Complete.IsZero() {
			c := s.Complete.UTC()
			sr.Complete = &c
		}
		for _, d := range s.Degraded {
			sr.Degraded = append(sr.Degraded, status.DocReport{Doc: d.Doc, Error: d.Err, Since: d.Since.UTC()})
		}
		rep.Sets = append(rep.Sets, sr)
	}
	rep.Push = []status.PushReport{}
	for _, p := range st.Push {
		pr := status.PushReport{Hub: p.Hub, Topic: p.Topic, State: p.State, Error: p.Err}
		if !p.Next.IsZero() {
			next := p.Next.UTC()
			pr.Next = &next
		}
		rep.Push = append(rep.Push, pr)
	}
	rep.Polls = status.PollReport{Count: st.Polls, Failures: st.PollFailures, Applied: st.Applied, Reloads: st.Reloads, Drift: st.Drift}
	if !st.LastPoll.IsZero() {
		last := st.LastPoll.UTC()
		rep.Polls.Last, rep.Polls.LastTook, rep.Polls.Result = &last, st.LastPollTook.Seconds(), "ok"
		if st.LastPollErr != "" {
			rep.Polls.Result = st.LastPollErr
		}
	}
	if !st.NextPoll.IsZero() && r.Interval > 0 {
		next := st.NextPoll.UTC()
		rep.Polls.Next = &next
	}
	rep.HoldFile = r.HoldFile
	if until, ok := mountutil.HeldUntil(r.HoldFile); ok {
		rep.Hold = &status.HoldReport{Until: until.UTC()}
	}
	rep.Cache = r.cacheReport()
	bytes := r.Client.BytesByOrigin()
	byOrigin := map[string]int{}
	for _, t := range r.Client.Traffic() {
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

func (r *Mount) cacheReport() status.CacheReport {
	cs := r.Cache.Stats()
	mem := status.TierReport{Bytes: cs.Bytes, MaxBytes: r.MemMax, Blocks: cs.Blocks, Hits: cs.Hits, Lookups: cs.Hits + cs.Misses}
	mem.HitRatio = ratio(mem.Hits, mem.Lookups)
	out := status.CacheReport{Memory: mem}
	if r.DiskMax > 0 {
		// The disk is asked on each memory miss.
		disk := status.TierReport{Bytes: cs.DiskBytes, MaxBytes: r.DiskMax, Blocks: cs.DiskBlocks, Hits: cs.DiskHits, Lookups: cs.Misses}
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

// JSON renders the report, for fs.Config.Status (user.rsfs.status).
func (r *Mount) JSON() []byte {
	data, err := json.Marshal(r.Report())
	if err != nil {
		return []byte(`{"error":` + strconv.Quote(err.Error()) + `}`)
	}
	return data
}
