package changes

import (
	"context"
	"errors"
	"fmt"
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
	for _, set := range src.Sets {
		pos := &Position{Time: set.ListedAt}
		if p, ok := restored[setKey(set)]; ok {
			c := p.clone()
			pos = &c
		} else {
			f.listedFresh[set] = true
		}
		f.positions[set] = pos
	}
	return f
}

func setKey(set *source.Set) string {
	if set.URL != "" {
		return set.URL
	}
	return set.Docs[resourcesync.CapResourceList][0]
}

// Positions returns the position of every set, keyed by Capability List
// URL, for a snapshot.
func (f *Follower) Positions() map[string]Position {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]Position{}
	for set, p := range f.positions {
		out[setKey(set)] = p.clone()
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
// reads the structure first, then every set's change documents, then
// checks for drift where it is due (drift.go); an early
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
	if reload {
		if err := f.reload(ctx); err != nil {
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

// pollRead is what one read of a set's change documents found.
type pollRead struct {
	pos       Position
	horizon   time.Time
	changes   []change
	cov       coverage
	vals      map[string]*fetch.Validators // to keep once the changes are applied
	condition bool                         // use and keep validators (polls do, pushes not)
	set       *source.Set
	seen      map[string]struct{} // the changes collected, by key and time
	failed    map[string]error    // the documents that could not be read
	// fresh: the set's position is its Resource Lists' time, from a load;
	// before then holds, by URI, the latest change behind it.
	fresh  bool
	before map[string]change
}

func (f *Follower) newRead(set *source.Set, conditional bool) *pollRead {
	f.mu.Lock()
	p, ok := f.positions[set]
	if !ok { // a set the Source Description added, before its reload
		p = &Position{Time: set.ListedAt}
		f.positions[set] = p
	}
	pos := p.clone()
	fresh := f.listedFresh[set] && conditional
	f.mu.Unlock()
	return &pollRead{pos: pos, horizon: f.now().Add(source.FutureBound), vals: map[string]*fetch.Validators{}, condition: conditional, set: set, fresh: fresh}
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
	for _, u := range docs {
		r.fail(u, f.readChangeDoc(ctx, u, r, 0))
	}
	for _, u := range retired {
		if err := f.readChangeDoc(ctx, u, r, 0); err != nil {
			f.s.Logger().Warn("a Change List the Capability List no longer names could not be read once more; dropped, so changes only it listed are left to drift repair",
				"set", setKey(set), "document", u, "err", err)
		}
	}
	for _, u := range f.changeDumps(set) {
		r.fail(u, f.readChangeDump(ctx, u, r, 0))
	}
	f.staleListed(r)
	f.noteNewest(set, r.changes)
	complete := len(r.failed) == 0
	f.noteRead(set, started, r.failed)
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
	failed := f.applyChanges(ctx, set, r.changes, !complete)
	if !failed {
		f.dropRetired(set, retired)
		if !resume.IsZero() {
			f.acceptGap(set, r, resume)
		}
	}
	if complete && !failed {
		f.mu.Lock()
		delete(f.listedFresh, set) // its Resource Lists were checked against every document
		f.mu.Unlock()
	}
	f.mu.Lock()
	for u, v := range r.vals {
		if failed || !complete {
			delete(f.validators, u) // read it whole again: its changes are retried
		} else {
			f.validators[u] = v
		}
	}
	f.mu.Unlock()
	return false, r.err()
}

// fail notes that document u could not be read (err not nil).
func (r *pollRead) fail(u string, err error) {
	if err == nil {
		return
	}
	if r.failed == nil {
		r.failed = map[string]error{}
	}
	r.failed[u] = err
}

// err joins the errors of the documents that could not be read.
func (r *pollRead) err() error {
	var errs []error
	for _, err := range r.failed {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
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
		"set", setKey(set), "position", r.pos.Time, "start", start)
	f.applyMu.Lock()
	f.mu.Lock()
	if pos := f.positions[set]; start.After(pos.Time) {
		pos.Time, pos.Seen = start, nil
		pos.pruneAhead()
	}
	f.mu.Unlock()
	f.applyMu.Unlock()
}

// readChangeDoc reads a Change List, or an index or archive of them, and
// collects the changes past the position. A document unchanged since the
// last poll (304) has nothing new.
func (f *Follower) readChangeDoc(ctx context.Context, u string, r *pollRead, depth int) error {
	if depth > 3 {
		return fmt.Errorf("change list %s: indexes nested too deep", u)
	}
	doc, err := f.readCond(ctx, u, r)
	if err != nil {
		return fmt.Errorf("poll change list: %w", err)
	}
	if doc == nil {
		// An unchanged index still has children that may have grown; an
		// unchanged list still covers what it covered.
		f.mu.Lock()
		children, isIndex := f.indexes[u]
		cov := f.coverage[u]
		f.mu.Unlock()
		if isIndex {
			return f.readChildren(ctx, children, r, depth)
		}
		r.cov = r.cov.with(cov)
		return nil
	}
	if doc.Header.Root == resourcesync.SitemapIndex {
		f.mu.Lock()
		f.indexes[u] = doc.Entries
		f.mu.Unlock()
		return f.readChildren(ctx, doc.Entries, r, depth)
	}
	f.collect(r, u, &doc.Header, doc.Entries)
	if depth == 0 && r.condition && !doc.Header.MD.Until.IsZero() {
		f.followClosed(r.set, u, &doc.Header)
	}
	return nil
}

// collect keeps a document's changes that are past the position. A change
// met twice in one read (a list read directly and through an index that
// names it) is kept once. An undated entry that falls at or before the
// position cannot be told new from old by time: it is compared with the
// catalog, and kept (a doubt, said in a warning naming the document) when
// the catalog does not hold its result.
func (f *Follower) collect(r *pollRead, u string, h *resourcesync.Header, entries []resourcesync.Entry) {
	cs, cov := datedChanges(u, h, entries, r.pos.Time)
	r.cov = r.cov.with(cov)
	if r.condition {
		f.noteCoverage(u, cov)
	}
	if r.seen == nil {
		r.seen = map[string]struct{}{}
	}
	var skipped source.NonWebLocs
	defer skipped.Warn(f.s.Logger(), u)
	doubts, future := 0, 0
	for i := range cs {
		c := &cs[i]
		if skipped.Skip(c.entry.Loc) || c.entry.MD.Change == "" {
			continue
		}
		if c.at.After(r.horizon) {
			future++
		}
		id := c.key + "@" + c.at.UTC().Format(time.RFC3339Nano)
		if _, dup := r.seen[id]; dup {
			continue
		}
		r.seen[id] = struct{}{}
		if r.pos.passed(c) {
			if r.fresh {
				r.noteBefore(c)
			}
			if !c.undated || catalogHolds(f.cat, c) {
				continue
			}
			c.doubt = true
			doubts++
		}
		r.changes = append(r.changes, *c)
	}
	if future > 0 && f.firstWarning(u) {
		f.s.Logger().Warn("changes dated more than a day ahead of now: applied, but the position does not move past now (said once per document)",
			"document", u, "changes", future, "horizon", r.horizon)
	}
	if doubts > 0 {
		f.s.Logger().Warn("entries without a date fall at or before the last change applied, yet the tree does not hold them: applied",
			"document", u, "entries", doubts, "position", r.pos.Time)
	}
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

// readChildren reads the Change Lists an index (or 1.0 archive) names, in
// order, from the first whose interval holds the position: those closed
// (until) before it are skipped.
func (f *Follower) readChildren(ctx context.Context, children []resourcesync.Entry, r *pollRead, depth int) error {
	for i := range children {
		e := &children[i]
		if until := e.MD.Until; !until.IsZero() && until.Before(r.pos.Time) {
			continue
		}
		f.s.AllowDoc(e.Loc)
		r.fail(e.Loc, f.readChangeDoc(ctx, e.Loc, r, depth+1))
	}
	return nil
}

// noteCoverage remembers what a polled document covers, for the polls at
// which it answers 304: a rotation is never a gap.
func (f *Follower) noteCoverage(u string, cov coverage) {
	f.mu.Lock()
	f.coverage[u] = cov
	f.mu.Unlock()
}
