package changes

import (
	"time"

	"rsfs/source"
	"rsfs/status"
)

// followState is what Status reports beyond the counters and the loop's
// Polling; guarded by Follower.mu.
type followState struct {
	pushed int64
	newest map[*source.Set]time.Time
}

// Status returns a copy of the Follower's state.
func (f *Follower) Status() status.Follow {
	sets := f.sets()
	counts := f.cat.CountBySet()
	f.mu.Lock()
	defer f.mu.Unlock()
	st := status.Follow{Polling: f.Polling(), Applied: f.applied, Reloads: f.reloads, Pushed: f.st.pushed}
	for _, set := range sets {
		pos := f.positions[set]
		ss := status.Set{Set: setKey(set), Newest: f.st.newest[set], Resources: counts[f.s.SetNumber(set)]}
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

// Applied returns the changes applied so far, polled or pushed, at no
// cost: Status also counts the resources of every set, which walks the
// whole catalog.
func (f *Follower) Applied() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.applied
}

// notePushed counts a pushed notification.
func (f *Follower) notePushed() {
	f.mu.Lock()
	f.st.pushed++
	f.mu.Unlock()
}

// noteNewest records the newest of changes listed for set.
func (f *Follower) noteNewest(set *source.Set, changes []change) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.st.newest == nil {
		f.st.newest = map[*source.Set]time.Time{}
	}
	for _, c := range changes {
		if c.at.After(f.st.newest[set]) {
			f.st.newest[set] = c.at
		}
	}
}
