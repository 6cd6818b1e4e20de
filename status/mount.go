package status

import (
	"encoding/json"
	"os"
	"strconv"
	"time"
)

// statusWindow is how far back the report counts failures; statusLatest is
// how many of their reasons it shows.
const (
	statusWindow = time.Hour
	statusLatest = 5
)

// Failures summarises the failures of the last window, with the latest n
// reasons (Events.Since, cache.Cache.VerifyFailures).
type Failures func(window time.Duration, n int) Summary

// Mount is a mount's parts as its status reads them, whichever protocol it
// serves, each behind a small interface, so that the report depends on no
// other part of rsfs and none of them on the report. Set every field
// before the mount serves.
type Mount struct {
	URL, Dir string // the Source's URL as given, the mount point
	Started  time.Time
	Interval time.Duration // how often to poll; 0: not following
	Protocol string        // "resourcesync" or "atompmh"
	Origin   string
	HoldFile string // the file the mount reads its hold from
	LogFile  string // where the mount logs; "" for stderr
	// Reach is since when the Source has failed to answer, if it has
	// (nil: the polls alone say).
	Reach *Reachability
	// Offline is what the HTTP client knows of the Source's origin; nil:
	// nothing (the polls alone say).
	Offline func() Offline
	// OnDisk is what of the tree's files the disk cache holds; nil: no
	// disk cache.
	OnDisk   func() Coverage
	Follower Follower
	Count    func() int // resources in the tree
	// Cache is the cache's tiers now; Fetched what was fetched from where.
	Cache   func() CacheReport
	Fetched func() []OriginReport
	// Throttled is the origins paced now because they said "slow down";
	// nil: none ever is.
	Throttled func() []ThrottleReport
	// Verification and ReadErrors are the contents that failed
	// verification and the reads that failed.
	Verification, ReadErrors Failures
	// HeldUntil says until when changes are held back, if they are, by
	// the hold file (mountutil.HeldUntil).
	HeldUntil func(holdFile string) (time.Time, bool)
	// Hints are the flags the report's Fix names (cmd/rsfs's).
	Hints Hints
}

// Report is the mount's status now: what `rsfs status` prints.
func (m *Mount) Report() *Report {
	now := time.Now()
	st := m.Follower.Status()
	rep := &Report{
		Source: m.URL, Protocol: m.Protocol, Origin: m.Origin, Dir: m.Dir, PID: os.Getpid(),
		Started: m.Started.UTC(), Now: now.UTC(), Resources: m.Count(),
		PollInterval: m.Interval.String(), Pushed: st.Pushed,
		Verification: m.Verification(statusWindow, statusLatest),
		ReadErrors:   m.ReadErrors(statusWindow, statusLatest),
		Sets:         []SetReport{},
		Push:         []PushReport{},
		HoldFile:     m.HoldFile,
		LogFile:      m.LogFile,
		Cache:        m.Cache(),
		Fetched:      m.Fetched(),
		Throttled:    []ThrottleReport{},
	}
	if m.Throttled != nil {
		rep.Throttled = m.Throttled()
	}
	for _, s := range st.Sets {
		rep.Sets = append(rep.Sets, setReport(s, now, m.Started))
	}
	for _, p := range st.Push {
		pr := PushReport{Hub: p.Hub, Topic: p.Topic, State: p.State, Error: p.Err}
		if !p.Next.IsZero() {
			next := p.Next.UTC()
			pr.Next = &next
		}
		rep.Push = append(rep.Push, pr)
	}
	rep.Polls = PollReport{Count: st.Polls, Failures: st.PollFailures, Applied: st.Applied, Reloads: st.Reloads, Drift: st.Drift}
	if !st.LastPoll.IsZero() {
		last := st.LastPoll.UTC()
		rep.Polls.Last, rep.Polls.LastTook, rep.Polls.Result = &last, st.LastPollTook.Seconds(), "ok"
		if st.LastPollErr != "" {
			rep.Polls.Result = st.LastPollErr
		}
	}
	if !st.NextPoll.IsZero() && m.Interval > 0 {
		next := st.NextPoll.UTC()
		rep.Polls.Next = &next
	}
	reach := m.Reach
	if reach == nil {
		reach = &Reachability{}
	}
	var off Offline
	if m.Offline != nil {
		off = m.Offline()
	}
	rep.Unreachable = reach.report(st.Polling, off, m.Hints)
	if m.OnDisk != nil && rep.Cache.Disk != nil {
		c := m.OnDisk()
		rep.Cache.OnDisk = &c
	}
	if until, ok := m.HeldUntil(m.HoldFile); ok {
		rep.Hold = &HoldReport{Until: until.UTC()}
	}
	return rep
}

func setReport(s Set, now, started time.Time) SetReport {
	sr := SetReport{
		Set: s.Set, Position: s.Position.UTC(), NewestChange: s.Newest.UTC(),
		BehindSeconds: s.Behind(now, started).Seconds(), Resources: s.Resources,
		NothingToFollow: s.NothingToFollow, NoBaseline: s.NoBaseline,
		Degraded: []DocReport{}, Warnings: []WarningReport{},
	}
	if !s.Complete.IsZero() {
		c := s.Complete.UTC()
		sr.Complete = &c
	}
	for _, d := range s.Degraded {
		sr.Degraded = append(sr.Degraded, DocReport{Doc: d.Doc, Error: d.Err, Since: d.Since.UTC()})
	}
	for _, d := range s.Warnings {
		sr.Warnings = append(sr.Warnings, WarningReport{Doc: d.Doc, Warning: d.Msg})
	}
	return sr
}

// JSON renders the report, for the file system's status attribute
// (fs.Config.Status, user.rsfs.status).
func (m *Mount) JSON() []byte {
	data, err := json.Marshal(m.Report())
	if err != nil {
		return []byte(`{"error":` + strconv.Quote(err.Error()) + `}`)
	}
	return data
}
