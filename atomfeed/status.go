package atomfeed

import (
	"time"

	"rsfs/atompmh"
	"rsfs/status"
)

// followState is what Status reports beyond the counters; guarded by
// Follower.mu, so that status is read while a poll runs.
type followState struct {
	mark   time.Time // the harvest mark (atompmh.State.Mark)
	newest time.Time // the newest atom:updated read
	loaded int64     // records applied by Load, not changes
	// complete: when the last harvest that read the whole feed began;
	// failed: what the harvests since failed with.
	complete time.Time
	failed   *status.DocError
}

var _ status.Follower = (*Follower)(nil)

// Status returns what the follower has done and will do, for `rsfs
// status` and metrics, in the terms of a ResourceSync follower: one set,
// the feed, whose position is the harvest mark and whose newest change is
// the newest atom:updated read, and which holds every file. Reloads and
// pushes are always zero.
func (fl *Follower) Status() status.Follow {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	set := status.Set{Set: fl.f.URL, Position: fl.st.mark, Newest: fl.st.newest, Resources: fl.cat.Len(), Complete: fl.st.complete}
	if fl.st.failed != nil {
		set.Degraded = []status.DocError{*fl.st.failed}
	}
	if set.Newest.Before(set.Position) {
		set.Newest = set.Position
	}
	return status.Follow{Polling: fl.Polling(), Applied: fl.applied.Load() - fl.st.loaded, Sets: []status.Set{set}}
}

// noteHarvest records the harvest mark a poll that began at start left,
// and whether it read the whole feed (err nil).
func (fl *Tree) noteHarvest(start time.Time, err error) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	fl.st.mark = fl.state.Mark
	switch {
	case err == nil:
		fl.st.complete, fl.st.failed = start, nil
	case fl.st.failed == nil:
		fl.st.failed = &status.DocError{Doc: fl.f.URL, Err: err.Error(), Since: start}
	default:
		fl.st.failed.Err = err.Error()
	}
}

// noteNewest records the newest atom:updated of changes read.
func (fl *Tree) noteNewest(changes []atompmh.Change) {
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
func (fl *Tree) noteRestored() {
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
func (fl *Tree) noteLoaded() {
	fl.mu.Lock()
	fl.st.loaded = fl.applied.Load()
	fl.mu.Unlock()
}

// Applied returns the record changes applied after Load.
func (fl *Tree) Applied() int64 {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	return fl.applied.Load() - fl.st.loaded
}
