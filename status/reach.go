package status

import (
	"cmp"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Reachability remembers since when the Source has failed to answer: a
// catch-up at mount time that failed (a remount from the snapshot while
// the Source is down) and the polls that failed since. A poll that
// succeeds after it clears it. The zero value is ready to use.
type Reachability struct {
	mu    sync.Mutex
	since time.Time // zero: reachable, as far as is known
	err   string
}

// Failed records that reaching the Source failed at at with err; the
// first failure of a run of them is the one since when it is unreachable.
func (r *Reachability) Failed(at time.Time, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.since.IsZero() {
		r.since = at
	}
	r.err = err.Error()
}

// Observe adds the poll loop's state p, after each poll, to what was
// recorded: a poll that succeeded after the first failure clears it; a
// poll that failed starts a run of failures if none was recorded.
func (r *Reachability) Observe(p Polling) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.observeLocked(p)
}

// report is what is recorded, p observed first, with what the HTTP client
// knows (off): offline, or failing since earlier; its Fix names the flags
// of h. Nil: reachable.
func (r *Reachability) report(p Polling, off Offline, h Hints) *UnreachableReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.observeLocked(p)
	since, cause := r.since, r.err
	if !off.Since.IsZero() && (since.IsZero() || off.Since.Before(since) || off.Offline) {
		since, cause = off.Since, off.Err
	}
	if since.IsZero() {
		return nil
	}
	u := &UnreachableReport{Since: since.UTC(), Error: cause, Offline: off.Offline, Hang: off.Hang}
	switch {
	case off.Forced && h.Offline != "":
		u.Fix = fmt.Sprintf("mounted %[1]s: nothing is asked of the Source; remount without %[1]s to reach it", h.Offline)
	case off.Forced:
		u.Fix = "mounted offline by choice: nothing is asked of the Source; remount online to reach it"
	case off.Hang:
		timeout := cmp.Or(h.Timeout, "the timeout")
		u.Fix = fmt.Sprintf("the Source accepts connections but sends no answer within %[1]s (%[2]s): a hung server, or a proxy or firewall holding connections; have the server or the network path fixed (raising %[1]s only makes each wait longer); files on disk are served meanwhile", timeout, off.Timeout)
	case off.Offline && strings.Contains(cause, "refused"):
		u.Fix = "nothing listens at the Source's address: check that its server runs; files on disk are served meanwhile"
	}
	return u
}

func (r *Reachability) observeLocked(p Polling) {
	switch {
	case p.LastPoll.IsZero():
	case p.LastPollErr == "" && !p.LastPoll.Before(r.since):
		r.since, r.err = time.Time{}, ""
	case p.LastPollErr != "":
		if r.since.IsZero() {
			r.since = p.LastPoll
		}
		r.err = p.LastPollErr
	}
}
