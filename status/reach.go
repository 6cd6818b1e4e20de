package status

import (
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

// report is what is recorded, p observed first. Nil: reachable.
func (r *Reachability) report(p Polling) *UnreachableReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.observeLocked(p)
	if r.since.IsZero() {
		return nil
	}
	return &UnreachableReport{Since: r.since.UTC(), Error: r.err}
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
