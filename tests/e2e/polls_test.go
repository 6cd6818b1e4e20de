package e2e

// Waiting on the mount's own events (issue 44). A test that expects the
// tree to follow the Source does not give it a fixed time: it waits until
// the mount says it has polled since the Source's last change, then once
// more, and only then fails. hangBound is not slack for a slow machine but
// a bound on a mount that stopped polling.

import (
	"encoding/json"
	"testing"
	"time"
)

// hangBound bounds every wait on the mount's events: a mount that has not
// ended two polls in this long hangs.
const hangBound = 30 * time.Second

// pollStatus is the part of `rsfs status --json` the waits read.
type pollStatus struct {
	Polls struct {
		Count  int64      `json:"count"`
		Last   *time.Time `json:"last"` // when the last poll that ended began
		Result string     `json:"last_result"`
	} `json:"polls"`
}

// lastPollBegan answers when the last poll that ended began, or false
// before the first (or when the mount does not answer).
func lastPollBegan(t *testing.T, dir string) (time.Time, bool) {
	t.Helper()
	out, _, err := run(t, 10*time.Second, rsfsBin, "status", "--json", dir)
	if err != nil {
		return time.Time{}, false
	}
	var st pollStatus
	if json.Unmarshal([]byte(out), &st) != nil || st.Polls.Last == nil {
		return time.Time{}, false
	}
	return *st.Polls.Last, true
}

// pollWatch counts the whole polls a mount ends after a moment: a poll
// counts when it began after the previous one counted was seen to end
// (the first: after the moment).
type pollWatch struct {
	dir   string
	after time.Time
	polls int
}

func watchPolls(m *mounted, since time.Time) *pollWatch {
	return &pollWatch{dir: m.dir, after: since}
}

// check asks the mount once and answers how many polls have counted.
func (w *pollWatch) check(t *testing.T) int {
	t.Helper()
	if began, ok := lastPollBegan(t, w.dir); ok && !began.Before(w.after) {
		w.polls++
		w.after = time.Now()
	}
	return w.polls
}

// pollsSince waits until n whole polls have ended since since (see
// pollWatch), failing only when the mount ends none for hangBound.
func pollsSince(t *testing.T, m *mounted, since time.Time, n int) {
	t.Helper()
	w := watchPolls(m, since)
	deadline := time.Now().Add(hangBound)
	for seen := 0; w.check(t) < n; {
		if w.polls > seen {
			seen, deadline = w.polls, time.Now().Add(hangBound)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d polls ended since %s, and none in the last %s: the mount stopped polling", w.polls, n, since.Format(time.RFC3339Nano), hangBound)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// converges waits until diff (which compares the tree with what the
// Source serves now) is empty. It fails only once the mount has ended two
// whole polls since the call, the first begun after the Source's last
// change and one more after it, with the difference then; or when the
// mount ends no poll for hangBound. It answers how long convergence took.
func converges(t *testing.T, m *mounted, what string, diff func() string) time.Duration {
	t.Helper()
	since := time.Now()
	w := watchPolls(m, since)
	deadline := since.Add(hangBound)
	for seen := 0; ; {
		d := diff()
		if d == "" {
			return time.Since(since)
		}
		if seen == 2 {
			t.Fatalf("after two polls since the Source's last change (%s), the tree still differs from the Source (%s):\n%s",
				time.Since(since).Round(10*time.Millisecond), what, firstLines(d, 40))
		}
		if w.check(t) > seen {
			seen, deadline = w.polls, time.Now().Add(hangBound)
			continue // compare at once after the poll
		}
		if time.Now().After(deadline) {
			t.Fatalf("the mount ended %d polls since the Source's last change, none in the last %s (%s); the tree differs:\n%s",
				w.polls, hangBound, what, firstLines(d, 40))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// becomes is converges for a condition: it waits until cond holds, and
// fails once the mount has ended two polls since the call without it.
func becomes(t *testing.T, m *mounted, what string, cond func() bool) time.Duration {
	t.Helper()
	return converges(t, m, what, func() string {
		if cond() {
			return ""
		}
		return "not yet: " + what
	})
}

// pollCount answers how many polls the mount has begun.
func pollCount(t *testing.T, m *mounted) int64 {
	t.Helper()
	out, stderr, err := run(t, 10*time.Second, rsfsBin, "status", "--json", m.dir)
	if err != nil {
		t.Fatalf("rsfs status --json %s: %v\n%s", m.dir, err, stderr)
	}
	var st pollStatus
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("rsfs status --json %s: %v\n%s", m.dir, err, out)
	}
	return st.Polls.Count
}
