package atomfeed

import (
	"time"

	"rsfs/atompmh"
	"rsfs/source"
)

// followState is what Status reports beyond the counters; guarded by
// Follower.mu, so that status is read while a poll runs.
type followState struct {
	pollFailures int64
	lastPoll     time.Time
	lastPollTook time.Duration
	lastPollErr  string
	nextPoll     time.Time
	mark         time.Time // the harvest mark (atompmh.State.Mark)
	newest       time.Time // the newest atom:updated read
	loaded       int64     // records applied by Load, not changes
}

var _ source.Following = (*Follower)(nil)

// Status returns what the follower has done and will do, for `rsfs
// status` and metrics, in the terms of a ResourceSync follower: one set,
// the feed, whose position is the harvest mark and whose newest change is
// the newest atom:updated read, and which holds every file. Reloads and
// pushes are always zero.
func (fl *Follower) Status() source.FollowStatus {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	set := source.SetStatus{Set: fl.f.URL, Position: fl.st.mark, Newest: fl.st.newest, Resources: fl.cat.Len()}
	if set.Newest.Before(set.Position) {
		set.Newest = set.Position
	}
	return source.FollowStatus{
		Polls: fl.polls.Load(), Applied: fl.applied.Load() - fl.st.loaded,
		PollFailures: fl.st.pollFailures,
		LastPoll:     fl.st.lastPoll, LastPollTook: fl.st.lastPollTook, LastPollErr: fl.st.lastPollErr,
		NextPoll: fl.st.nextPoll,
		Sets:     []source.SetStatus{set},
	}
}

// notePoll records a poll's outcome, and the harvest mark it left.
func (fl *Follower) notePoll(start time.Time, err error) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	fl.st.lastPoll, fl.st.lastPollTook, fl.st.lastPollErr = start, time.Since(start), ""
	if err != nil {
		fl.st.pollFailures++
		fl.st.lastPollErr = err.Error()
	}
	fl.st.mark = fl.state.Mark
}

// noteNewest records the newest atom:updated of changes read.
func (fl *Follower) noteNewest(changes []atompmh.Change) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	for _, c := range changes {
		if c.Updated.After(fl.st.newest) {
			fl.st.newest = c.Updated
		}
	}
}

// noteRestored records the mark and the newest atom:updated of a state
// restored from a snapshot.
func (fl *Follower) noteRestored() {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	fl.st.mark = fl.state.Mark
	for _, e := range fl.state.Pool {
		if e.Updated.After(fl.st.newest) {
			fl.st.newest = e.Updated
		}
	}
	for _, at := range fl.state.Deleted {
		if at.After(fl.st.newest) {
			fl.st.newest = at
		}
	}
}

// noteLoaded marks what has been applied so far as the load, not changes.
func (fl *Follower) noteLoaded() {
	fl.mu.Lock()
	fl.st.loaded = fl.applied.Load()
	fl.mu.Unlock()
}

// noteNext records when the next poll is due.
func (fl *Follower) noteNext(at time.Time) {
	fl.mu.Lock()
	fl.st.nextPoll = at
	fl.mu.Unlock()
}
