package changes

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"rsfs/catalog"
	"rsfs/fetch"
	"rsfs/follow"
	"rsfs/resourcesync"
	"rsfs/source"
)

// A change dated more than source.FutureBound ahead of now is applied but
// never moves the position.
// maxAttempts is how many polls a change that fails to apply is tried at
// before it is given up with a warning.
const maxAttempts = 3

// EffectFunc is told of every change applied to the catalog, so the file
// system can tell the kernel.
type EffectFunc func([]catalog.Effect)

// Follower keeps a catalog in step with the Source's Change Lists. Its
// polls are run by the follow.Loop it embeds (Run, Poll, PollSoon), one at
// a time; documents are read and lengths learned with no lock held, and
// applyMu is held only while a batch of changes is applied to the catalog
// and the positions.
type Follower struct {
	*follow.Loop
	s       *source.Source
	cat     *catalog.Catalog
	effects EffectFunc
	now     func() time.Time

	applyMu sync.Mutex // one batch of changes at a time, polled or pushed; never held across I/O
	// discovered: the structure was just read by discovery, so the first
	// poll (a remount's catch-up) does not read it again.
	discovered atomic.Bool

	mu         sync.Mutex
	positions  map[*source.Set]*Position
	validators map[string]*fetch.Validators
	indexes    map[string][]resourcesync.Entry // children of the Change List Indexes seen
	failures   map[string]int                  // by change key: polls it failed to apply at
	gapChecked map[*source.Set]bool            // a gap was met and the Resource Lists checked
	retired    map[*source.Set][]string        // Change Lists a Capability List stopped naming, to read once more
	closedTo   map[string]string               // a closed Change List polled directly → the index that replaced it
	coverage   map[string]coverage             // by document: what it covered when last read whole
	warned     map[string]bool                 // documents whose lasting condition was said
	// driftDue: sets whose Resource Lists to check at the next whole poll;
	// driftChecked: when each set's were last checked (drift.go).
	driftDue     map[*source.Set]bool
	driftChecked map[*source.Set]time.Time

	// listedFresh: sets whose position is still their Resource Lists' time
	// since a load or reload, until a poll reads every document (stale.go).
	listedFresh map[*source.Set]bool

	pushMu  sync.Mutex // guards pushes; taken inside mu (Status), never around it
	pushes  *pushState // the notification subscriptions, once Subscribe ran (push.go)
	applied int64
	reloads int64
	docs    int64       // change documents requested
	st      followState // for Status
}

// FollowOptions configure a Follower: when it polls (follow.Options), and
// whom it tells of the changes applied.
type FollowOptions struct {
	follow.Options
	Effects EffectFunc
}

// New returns a Follower keeping cat (src's catalog) in step with src's
// changes. Each set starts from the time its Resource Lists speak for
// (src.Load sets it), or from its position in restored, from a snapshot.
func New(src *source.Source, cat *catalog.Catalog, opts FollowOptions, restored map[string]Position) *Follower {
	f := &Follower{
		s: src, cat: cat, effects: opts.Effects, now: time.Now,
		positions:  map[*source.Set]*Position{},
		validators: map[string]*fetch.Validators{},
		indexes:    map[string][]resourcesync.Entry{},
		failures:   map[string]int{},
		gapChecked: map[*source.Set]bool{},
		retired:    map[*source.Set][]string{},
		closedTo:   map[string]string{},
		coverage:   map[string]coverage{},
		warned:     map[string]bool{},
		driftDue:   map[*source.Set]bool{}, driftChecked: map[*source.Set]time.Time{},
		listedFresh: map[*source.Set]bool{},
	}
	if opts.Log == nil {
		opts.Log = src.Logger()
	}
	f.Loop = follow.New(f.pollOnce, opts.Options)
	f.discovered.Store(true)
	for _, set := range src.Sets() {
		pos := &Position{Time: set.ListedAt}
		if p, ok := restored[f.s.SetKey(set)]; ok {
			c := p.clone()
			pos = &c
		} else {
			f.listedFresh[set] = true
		}
		f.positions[set] = pos
	}
	return f
}

// Positions returns the position of every set, keyed by Capability List
// URL, for a snapshot.
func (f *Follower) Positions() map[string]Position {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]Position{}
	for set, p := range f.positions {
		out[f.s.SetKey(set)] = p.clone()
	}
	return out
}

// FollowStats says what a Follower has done.
type FollowStats struct{ Polls, Applied, Reloads, Docs int64 }

// Stats returns counters.
func (f *Follower) Stats() FollowStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return FollowStats{f.Polling().Polls, f.applied, f.reloads, f.docs}
}

// pollOnce is the Follower's follow.PollFunc: a whole poll (sets nil)
// reads the structure first, then the documents that could not be read
// (unreadcaps.go: one that reads now reloads), then every set's change
// documents, then checks for drift where it is due (drift.go); an early
// poll reads the change documents of the sets asked for only (an unknown
// set, 0, polls them all).
func (f *Follower) pollOnce(ctx context.Context, sets []uint16) error {
	if sets != nil {
		return f.pollSets(ctx, f.setsNumbered(sets))
	}
	var errs []error
	reload, err := f.refreshStructure(ctx)
	if err != nil {
		errs = append(errs, err)
	}
	why := reloadStructure
	if again, whyAgain := f.retryUnread(ctx, reload); again && !reload {
		reload, why = true, whyAgain
	}
	if reload {
		if err := f.reload(ctx, why); err != nil {
			return errors.Join(append(errs, err)...)
		}
	}
	if err := f.pollSets(ctx, f.sets()); err != nil {
		errs = append(errs, err)
	}
	if err := f.checkDrift(ctx); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// setsNumbered returns the sets of the numbers given (catalog.Resource.Set);
// 0, or a number no set has, stands for all of them.
func (f *Follower) setsNumbered(numbers []uint16) []*source.Set {
	all := f.sets()
	var sets []*source.Set
	for _, n := range numbers {
		if n == 0 || int(n) > len(all) {
			return all
		}
		sets = append(sets, all[n-1])
	}
	return sets
}

// pollSets reads the change documents of sets and applies what is new; a
// gap costs one check of the Resource Lists, never a loop.
func (f *Follower) pollSets(ctx context.Context, sets []*source.Set) error {
	var errs []error
	var gaps []*source.Set
	for _, set := range sets {
		gap, err := f.pollSet(ctx, set)
		if err != nil {
			errs = append(errs, err)
		}
		if gap {
			gaps = append(gaps, set)
		}
	}
	if len(gaps) > 0 {
		if err := f.closeGaps(ctx, gaps); err != nil {
			errs = append(errs, err)
		}
		for _, set := range gaps { // the gap is accepted now: never a loop
			if _, err := f.pollSet(ctx, set); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// pollRead is one read of a set's change documents: a walk (engine.go)
// whose documents are read by conditional GET at a poll (polledReads).
type pollRead struct {
	*walk
	reads *polledReads
	set   *source.Set
}

// newRead starts a read of set's change documents from its position: a
// poll's (conditional) uses and keeps validators, a push's does not.
func (f *Follower) newRead(set *source.Set, conditional bool) *pollRead {
	f.mu.Lock()
	pos := f.positionOf(set).clone()
	fresh := f.listedFresh[set] && conditional
	f.mu.Unlock()
	reads := &polledReads{f: f, condition: conditional, vals: map[string]*fetch.Validators{}}
	w := newWalk(f.s, reads, pos, f.now())
	w.cat, w.fresh, w.log, w.firstWarning = f.cat, fresh, f.s.Logger(), f.firstWarning
	if conditional {
		w.closed = func(u string, h *resourcesync.Header) { f.followClosed(set, u, h) }
	}
	return &pollRead{walk: w, reads: reads, set: set}
}

// pollSet applies a set's new changes. One document that cannot be read
// never blocks the others: their changes are applied, but as if pushed
// (ahead of the position, which holds until a poll reads every document),
// and the set is degraded until the document is read again. A Change List
// the Capability List stopped naming is read once more and then dropped;
// at once if it answers 404 or 410. pollSet reports a gap: the Change
// Lists no longer reach back to the position, and the Resource Lists were
// not checked since.
func (f *Follower) pollSet(ctx context.Context, set *source.Set) (gap bool, err error) {
	started := f.now()
	r := f.newRead(set, true)
	docs, retired := f.changeDocs(set)
	r.changeLists(ctx, docs)
	for _, u := range retired {
		if err := r.changeList(ctx, u, -1, time.Time{}, 0); err != nil {
			f.s.Logger().Warn("a Change List the Capability List no longer names could not be read once more; dropped, so changes only it listed are left to drift repair",
				"set", f.s.SetKey(set), "document", u, "err", err)
		}
	}
	r.changeDumps(ctx, f.changeDumps(set))
	f.staleListed(r)
	f.noteNewest(set, r.changes)
	complete := len(r.failed) == 0
	f.noteRead(set, started, r.failed)
	f.noteWarnings(set, r.walk)
	var resume time.Time // a gap accepted: where the Change Lists go on
	if gap, at := r.cov.gapAt(&r.pos); complete && gap {
		f.mu.Lock()
		checked := f.gapChecked[set]
		f.mu.Unlock()
		if !checked {
			return true, nil
		}
		resume = at
	}
	if complete { // a gap accepted is closed: the next one is checked anew
		f.mu.Lock()
		delete(f.gapChecked, set)
		f.mu.Unlock()
	}
	how := polled
	if !complete {
		how = pushed // the position holds until a poll reads every document
	}
	failed := f.applyChanges(ctx, set, r.changes, how)
	if !failed {
		f.dropRetired(set, retired)
		if !resume.IsZero() {
			f.acceptGap(set, r, resume)
		}
	}
	if complete && !failed {
		f.mu.Lock()
		delete(f.listedFresh, set) // its Resource Lists were checked against every document
		delete(f.st.skipped, set)  // what a skip left out, this poll carried (or drift repair will)
		f.mu.Unlock()
	}
	f.mu.Lock()
	for u, v := range r.reads.vals {
		if failed || !complete {
			delete(f.validators, u) // read it whole again: its changes are retried
		} else {
			f.validators[u] = v
		}
	}
	f.mu.Unlock()
	return false, r.err()
}

// acceptGap moves the position, once the changes read are applied, to
// where the Change Lists go on after a gap (start), after the Resource
// Lists were found unchanged (or reloaded): what changed in the gap cannot
// be known. Said once per gap.
func (f *Follower) acceptGap(set *source.Set, r *pollRead, start time.Time) {
	if start.After(r.horizon) {
		start = r.horizon
	}
	f.s.Logger().Warn("the Change Lists leave a gap after the last change applied and the Resource Lists are unchanged: changes in it cannot be known; going on from where they go on",
		"set", f.s.SetKey(set), "position", r.pos.Time, "start", start)
	f.applyMu.Lock()
	f.mu.Lock()
	if pos := f.positions[set]; start.After(pos.Time) {
		pos.Time, pos.Seen = start, nil
		pos.pruneAhead()
	}
	f.mu.Unlock()
	f.applyMu.Unlock()
}

// firstWarning reports whether a warning about document u is the first:
// a condition a document keeps at every poll is said once.
func (f *Follower) firstWarning(u string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.warned[u] {
		return false
	}
	f.warned[u] = true
	return true
}
