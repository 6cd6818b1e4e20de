package source

import (
	"time"
)

// Following is a follower as `rsfs status` and metrics see it, whichever
// protocol it follows: a ResourceSync Follower, or an Atom-PMH feed's
// (package atomfeed), whose one set is the feed.
type Following interface {
	Status() FollowStatus
}

// FollowStatus is what a follower has done and will do, for `rsfs status`
// and metrics.
type FollowStatus struct {
	Polls, Applied, Reloads int64
	PollFailures            int64 // polls that ended in an error
	Pushed                  int64 // notifications received (held ones too)
	LastPoll                time.Time
	LastPollTook            time.Duration
	LastPollErr             string    // "" when the last poll succeeded
	NextPoll                time.Time // zero when not following by polling
	Sets                    []SetStatus
}

// SetStatus is one resource set's follow position (an Atom-PMH feed's:
// its harvest mark).
type SetStatus struct {
	Set string // its Capability List URL (or first Resource List); a feed's URL
	// Position: every change up to this time is applied.
	Position time.Time
	// Newest is the newest change the set's Change Lists (or its pushed
	// notifications) listed so far; zero before any was seen. Newest minus
	// Position is how far behind the Source the set is.
	Newest time.Time
	// Resources is how many resources in the tree the set lists.
	Resources int
}

// followState is what FollowStatus reports beyond the counters; guarded by
// Follower.mu.
type followState struct {
	pollFailures int64
	pushed       int64
	lastPoll     time.Time
	lastPollTook time.Duration
	lastPollErr  string
	nextPoll     time.Time
	newest       map[*Set]time.Time
}

// Status returns a copy of the Follower's state.
func (f *Follower) Status() FollowStatus {
	sets := f.sets()
	counts := f.cat.CountBySet()
	f.mu.Lock()
	defer f.mu.Unlock()
	st := FollowStatus{
		Polls: f.polls, Applied: f.applied, Reloads: f.reloads,
		PollFailures: f.st.pollFailures, Pushed: f.st.pushed,
		LastPoll: f.st.lastPoll, LastPollTook: f.st.lastPollTook, LastPollErr: f.st.lastPollErr,
		NextPoll: f.st.nextPoll,
	}
	for _, set := range sets {
		pos := f.positions[set]
		ss := SetStatus{Set: setKey(set), Newest: f.st.newest[set], Resources: counts[f.s.setNumber(set)]}
		if pos != nil {
			ss.Position = pos.Time
		}
		if ss.Newest.Before(ss.Position) {
			ss.Newest = ss.Position
		}
		st.Sets = append(st.Sets, ss)
	}
	return st
}

// LastPoll returns when the last poll started, the changes applied so far,
// and the last poll's error ("" when it succeeded): what a status line
// needs, at no cost. Status also counts the resources of every set, which
// walks the whole catalog.
func (f *Follower) LastPoll() (at time.Time, applied int64, errText string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.st.lastPoll, f.applied, f.st.lastPollErr
}

// notePoll records a poll's outcome.
func (f *Follower) notePoll(start time.Time, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.st.lastPoll, f.st.lastPollTook, f.st.lastPollErr = start, time.Since(start), ""
	if err != nil {
		f.st.pollFailures++
		f.st.lastPollErr = err.Error()
	}
}

// noteNext records when the next poll is due.
func (f *Follower) noteNext(at time.Time) {
	f.mu.Lock()
	f.st.nextPoll = at
	f.mu.Unlock()
}

// notePushed counts a pushed notification.
func (f *Follower) notePushed() {
	f.mu.Lock()
	f.st.pushed++
	f.mu.Unlock()
}

// noteNewest records the newest of changes listed for set.
func (f *Follower) noteNewest(set *Set, changes []change) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.st.newest == nil {
		f.st.newest = map[*Set]time.Time{}
	}
	for _, c := range changes {
		if c.at.After(f.st.newest[set]) {
			f.st.newest[set] = c.at
		}
	}
}
