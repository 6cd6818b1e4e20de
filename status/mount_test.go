package status

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type fakeFollower struct{ st Follow }

func (f *fakeFollower) Status() Follow { return f.st }

// The report is assembled from the mount's parts alone: each field of
// `rsfs status` comes from the part that owns it.
func TestMountReportFromItsParts(t *testing.T) {
	started := time.Now().Add(-time.Hour)
	last := time.Now().Add(-time.Minute)
	var reads, verify Events
	reads.Add("/a.txt: EIO")
	verify.Add("/b.txt: hash mismatch")
	verify.Add("/c.txt: hash mismatch")
	m := &Mount{
		URL: "http://h/", Dir: "/mnt/h", Started: started, Interval: time.Minute,
		Protocol: "resourcesync", Origin: "http://h", HoldFile: "/run/hold",
		Follower: &fakeFollower{Follow{Polling: Polling{Polls: 3, PollFailures: 1, LastPoll: last, LastPollTook: time.Second},
			Applied: 7, Sets: []Set{{Set: "http://h/cl.xml", Resources: 5,
				Warnings: []DocWarning{{Doc: "http://h/c1.xml", Msg: "2 entries without a change attribute"}}}}}},
		Count:        func() int { return 5 },
		Cache:        func() CacheReport { return CacheReport{Memory: TierReport{Bytes: 4096, MaxBytes: 1 << 20, Blocks: 1}} },
		Fetched:      func() []OriginReport { return []OriginReport{{Origin: "http://h", Requests: 9, Bytes: 2048}} },
		Verification: verify.Since,
		ReadErrors:   reads.Since,
		HeldUntil: func(path string) (time.Time, bool) {
			return time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC), path == "/run/hold"
		},
	}
	var rep Report
	require.NoError(t, json.Unmarshal(m.JSON(), &rep))
	assert.Equal(t, "http://h/", rep.Source)
	assert.Equal(t, 5, rep.Resources)
	assert.Equal(t, "1m0s", rep.PollInterval)
	assert.Equal(t, PollReport{Count: 3, Failures: 1, Applied: 7, Last: rep.Polls.Last, LastTook: 1, Result: "ok"}, rep.Polls)
	require.Len(t, rep.Sets, 1)
	assert.Equal(t, "http://h/cl.xml", rep.Sets[0].Set)
	assert.Equal(t, []WarningReport{{Doc: "http://h/c1.xml", Warning: "2 entries without a change attribute"}}, rep.Sets[0].Warnings)
	assert.Equal(t, uint64(1), rep.ReadErrors.Total)
	assert.Equal(t, "/a.txt: EIO", rep.ReadErrors.Latest[0].Reason)
	assert.Equal(t, uint64(2), rep.Verification.Total)
	assert.Equal(t, int64(4096), rep.Cache.Memory.Bytes)
	assert.Nil(t, rep.Cache.Disk)
	assert.Equal(t, []OriginReport{{Origin: "http://h", Requests: 9, Bytes: 2048}}, rep.Fetched)
	require.NotNil(t, rep.Hold)
	assert.Equal(t, "/run/hold", rep.HoldFile)

	var text strings.Builder
	rep.WriteText(&text, rsfsHints)
	for _, line := range []string{
		"Source:     http://h/ (origin http://h)",
		"Following:  every 1m0s: 3 polls (1 failed), 7 changes applied, 0 reloads, 0 drift repaired",
		"Hold:       changes held back until 2030-01-02T03:04:05Z",
		"  http://h: 9 requests, 2.0 KiB",
		"Verification failures: 2 in the last hour (2 in all)",
		"Read errors: 1 in the last hour (1 in all)",
		"    warning: http://h/c1.xml: 2 entries without a change attribute",
	} {
		assert.Contains(t, text.String(), line+"\n")
	}
}

// A set followed but never read whole shows "none" for the times it does
// not know and a lower bound for how far behind it is; a failed poll
// makes the Source unreachable since then, and a poll that succeeds after
// clears it.
func TestReportSaysNoneAndUnreachableSince(t *testing.T) {
	started := time.Now().Add(-time.Hour)
	failed := time.Now().Add(-time.Minute)
	fol := &fakeFollower{Follow{Polling: Polling{Polls: 1, PollFailures: 1, LastPoll: failed, LastPollErr: "connection refused"},
		Sets: []Set{{Set: "http://h/cl.xml"}}}}
	m := &Mount{URL: "http://h/", Dir: "/mnt/h", Started: started, Interval: time.Minute, Protocol: "resourcesync",
		Follower: fol, Count: func() int { return 0 }, Cache: func() CacheReport { return CacheReport{} },
		Fetched: func() []OriginReport { return nil }, Verification: (&Events{}).Since, ReadErrors: (&Events{}).Since,
		HeldUntil: func(string) (time.Time, bool) { return time.Time{}, false }, Reach: &Reachability{}}
	rep := m.Report()
	require.NotNil(t, rep.Unreachable)
	assert.Equal(t, failed.UTC(), rep.Unreachable.Since)
	var text strings.Builder
	rep.WriteText(&text, rsfsHints)
	assert.Contains(t, text.String(), "    position none, newest change none, behind at least 1h0m0s (not read whole since the mount)\n")
	assert.Contains(t, text.String(), "Unreachable: since "+failed.UTC().Format(time.RFC3339)+" (1m0s ago): connection refused\n")
	assert.Contains(t, text.String(), "Log:        stderr\n")

	// An error of several lines (errors.Join): each under the first.
	joined := m.Report()
	joined.Unreachable.Error = errors.Join(errors.New("load: no Resource List could be read:"),
		errors.New("http://h/rl1.xml: 404"), errors.New("http://h/rl2.xml: 404")).Error()
	text.Reset()
	joined.WriteText(&text, rsfsHints)
	assert.Contains(t, text.String(), " ago): load: no Resource List could be read:\n             http://h/rl1.xml: 404\n             http://h/rl2.xml: 404\n")
	joined.Polls.Result = joined.Unreachable.Error // the last poll's error, the same lines
	text.Reset()
	joined.WriteText(&text, rsfsHints)
	assert.Contains(t, text.String(), ": load: no Resource List could be read:\n            http://h/rl1.xml: 404\n            http://h/rl2.xml: 404\nPushed:", "the last poll's error, indented")

	later := failed.Add(30 * time.Second)
	m.Reach.Observe(Polling{LastPoll: later, LastPollErr: "timeout"})
	fol.st.LastPoll, fol.st.LastPollErr = later, "timeout"
	rep = m.Report()
	require.NotNil(t, rep.Unreachable)
	assert.Equal(t, failed.UTC(), rep.Unreachable.Since, "since the first of the failed polls in a row")
	assert.Equal(t, "timeout", rep.Unreachable.Error, "with the last error")

	fol.st.LastPoll, fol.st.LastPollErr = time.Now(), ""
	assert.Nil(t, m.Report().Unreachable, "a poll that succeeds clears it")
}

// A set with Change Lists and no Resource List nor Resource Dump says it
// has no baseline, in text and JSON.
func TestReportSaysASetHasNoBaseline(t *testing.T) {
	fol := &fakeFollower{Follow{Sets: []Set{{Set: "http://h/caps.xml", Resources: 3, NoBaseline: true}, {Set: "http://h/other.xml"}}}}
	m := &Mount{URL: "http://h/", Dir: "/mnt/h", Started: time.Now(), Interval: time.Minute, Protocol: "resourcesync",
		Follower: fol, Count: func() int { return 3 }, Cache: func() CacheReport { return CacheReport{} },
		Fetched: func() []OriginReport { return nil }, Verification: (&Events{}).Since, ReadErrors: (&Events{}).Since,
		HeldUntil: func(string) (time.Time, bool) { return time.Time{}, false }, Reach: &Reachability{}}
	rep := m.Report()
	require.Len(t, rep.Sets, 2)
	assert.True(t, rep.Sets[0].NoBaseline)
	assert.False(t, rep.Sets[1].NoBaseline)
	var text strings.Builder
	rep.WriteText(&text, rsfsHints)
	assert.Contains(t, text.String(), "  set http://h/caps.xml: 3 resources\n    "+NoBaselineText+"\n")
	assert.Equal(t, 1, strings.Count(text.String(), "no baseline"), "only the set without one")
}
