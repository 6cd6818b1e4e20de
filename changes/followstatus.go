package changes

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"rsfs/resourcesync"
	"rsfs/source"
	"rsfs/status"
)

// followState is what Status reports beyond the counters and the loop's
// Polling; guarded by Follower.mu.
type followState struct {
	pushed   int64
	drift    int64
	newest   map[*source.Set]time.Time
	complete map[*source.Set]time.Time         // the start of the last poll that read every document (those that failed since: source.Unread)
	warnings map[*source.Set]map[string]string // by document, as last read: how it departs from the standard
	// skipped: by set and document (or "drift repair"), the changes a
	// skip policy left out since the set's last poll that read every
	// document and applied every change (noteSkipped).
	skipped map[*source.Set]map[string]skippedNote
}

// skippedNote is the changes of one document left out by a skip policy:
// how many, the latest one's URI and error, and what becomes of them.
type skippedNote struct {
	n              int
	uri, err, next string
}

func (n skippedNote) String() string {
	s := fmt.Sprintf("a change to %s not applied: %s", n.uri, n.err)
	if n.n > 1 {
		s = fmt.Sprintf("%d changes not applied (the latest to %s: %s)", n.n, n.uri, n.err)
	}
	return s + "; " + n.next
}

// Status returns a copy of the Follower's state.
func (f *Follower) Status() status.Follow {
	sets := f.sets()
	counts := f.cat.CountBySet()
	nothing := make(map[*source.Set]bool, len(sets))
	for _, set := range sets {
		nothing[set] = len(f.s.Docs(set, resourcesync.CapChangeList))+len(f.s.Docs(set, resourcesync.CapChangeDump)) == 0
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	st := status.Follow{Polling: f.Polling(), Applied: f.applied, Reloads: f.reloads, Pushed: f.st.pushed, Drift: f.st.drift}
	for _, set := range sets {
		pos := f.positions[set]
		ss := status.Set{Set: f.s.SetKey(set), Newest: f.st.newest[set], Resources: counts[f.s.SetNumber(set)],
			NothingToFollow: nothing[set], NoBaseline: f.s.NoBaseline(set)}
		if pos != nil {
			ss.Position = pos.Time
		}
		if ss.Newest.Before(ss.Position) {
			ss.Newest = ss.Position
		}
		ss.Complete = f.st.complete[set]
		for _, d := range f.s.Unread(set) {
			ss.Degraded = append(ss.Degraded, status.DocError{Doc: d.URL, Err: d.Err.Error(), Since: d.Since})
		}
		for _, doc := range slices.Sorted(maps.Keys(f.st.warnings[set])) {
			ss.Warnings = append(ss.Warnings, status.DocWarning{Doc: doc, Msg: f.st.warnings[set][doc]})
		}
		for _, doc := range slices.Sorted(maps.Keys(f.st.skipped[set])) {
			ss.Warnings = append(ss.Warnings, status.DocWarning{Doc: doc, Msg: f.st.skipped[set][doc].String()})
		}
		st.Sets = append(st.Sets, ss)
	}
	st.Push = f.pushStates()
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

// noteNewest records the newest of changes listed for set; one dated past
// now plus source.FutureBound is not news of how far behind the set is.
func (f *Follower) noteNewest(set *source.Set, changes []change) {
	horizon := f.now().Add(source.FutureBound)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.st.newest == nil {
		f.st.newest = map[*source.Set]time.Time{}
	}
	for _, c := range changes {
		if c.at.After(f.st.newest[set]) && !c.at.After(horizon) {
			f.st.newest[set] = c.at
		}
	}
}

// noteRead records how a poll that started at started read set's
// documents: complete when none failed; those that did are unread
// (source.NoteChangeDocuments), each since the first poll it failed at.
func (f *Follower) noteRead(set *source.Set, started time.Time, failed map[string]error) {
	f.s.NoteChangeDocuments(set, started, failed)
	if len(failed) > 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.st.complete == nil {
		f.st.complete = map[*source.Set]time.Time{}
	}
	f.st.complete[set] = started
}

// noteSkipped records, for status, a change of set that a skip policy
// left out: listed by doc (or found by drift repair), to uri, for err.
func (f *Follower) noteSkipped(set *source.Set, doc, uri string, err error, next string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.st.skipped == nil {
		f.st.skipped = map[*source.Set]map[string]skippedNote{}
	}
	if f.st.skipped[set] == nil {
		f.st.skipped[set] = map[string]skippedNote{}
	}
	n := f.st.skipped[set][doc]
	f.st.skipped[set][doc] = skippedNote{n: n.n + 1, uri: uri, err: err.Error(), next: next}
}

// noteWarnings records, for status, how the documents a poll of set read
// whole (and the packages of its Change Dumps) depart from the standard;
// a document unchanged since (304) keeps what it had, and one no longer
// walked is forgotten.
func (f *Follower) noteWarnings(set *source.Set, w *walk) {
	read := make(map[string]*listRead, len(w.lists))
	for i := range w.lists {
		read[w.lists[i].url] = &w.lists[i]
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.st.warnings == nil {
		f.st.warnings = map[*source.Set]map[string]string{}
	}
	was := f.st.warnings[set]
	now := map[string]string{}
	for u, lr := range read {
		if lr.unsaid > 0 {
			now[u] = unsaidWarning(lr.unsaid)
		}
	}
	for _, v := range w.visits {
		if msg, had := was[v.url]; had && read[v.url] == nil {
			now[v.url] = msg
		}
	}
	f.st.warnings[set] = now
}
