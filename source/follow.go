package source

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"time"

	"rsfs/catalog"
	"rsfs/fetch"
	"rsfs/resourcesync"
)

// Position is how far a resource set's changes have been applied: every
// change up to Time, and of those at exactly Time, the ones in Seen.
type Position struct {
	Time time.Time `json:"time"`
	Seen []string  `json:"seen,omitempty"`
}

// after reports whether a change at t with key k is past the position.
func (p *Position) after(t time.Time, k string) bool {
	if t.After(p.Time) {
		return true
	}
	if t.Before(p.Time) {
		return false
	}
	for _, s := range p.Seen {
		if s == k {
			return false
		}
	}
	return true
}

// advance moves the position past a change at t with key k.
func (p *Position) advance(t time.Time, k string) {
	if t.After(p.Time) {
		p.Time, p.Seen = t, nil
	}
	p.Seen = append(p.Seen, k)
}

// EffectFunc is told of every change applied to the catalog, so the file
// system can tell the kernel.
type EffectFunc func([]catalog.Effect)

// Follower keeps a catalog in step with the Source's Change Lists.
type Follower struct {
	s        *Source
	cat      *catalog.Catalog
	effects  EffectFunc
	interval time.Duration
	held     func() bool

	applyMu sync.Mutex // one batch of changes at a time, polled or pushed

	mu         sync.Mutex
	positions  map[*Set]*Position
	validators map[string]*fetch.Validators
	indexes    map[string][]resourcesync.Entry // children of the Change List Indexes seen
	polls      int64
	applied    int64
	reloads    int64
}

// FollowOptions configure a Follower.
type FollowOptions struct {
	Interval time.Duration // between polls; jittered by ±10%
	Effects  EffectFunc
	// Held, when it returns true, holds changes back: polls are skipped.
	Held func() bool
}

// NewFollower starts from the time each set's Resource Lists speak for
// (Load sets it), or from positions restored from a snapshot.
func (s *Source) NewFollower(cat *catalog.Catalog, opts FollowOptions, restored map[string]Position) *Follower {
	f := &Follower{
		s: s, cat: cat, effects: opts.Effects, interval: opts.Interval, held: opts.Held,
		positions:  map[*Set]*Position{},
		validators: map[string]*fetch.Validators{},
		indexes:    map[string][]resourcesync.Entry{},
	}
	for _, set := range s.Sets {
		pos := &Position{Time: set.ListedAt}
		if p, ok := restored[setKey(set)]; ok {
			pos = &p
		}
		f.positions[set] = pos
	}
	return f
}

func setKey(set *Set) string {
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
		out[setKey(set)] = Position{Time: p.Time, Seen: append([]string(nil), p.Seen...)}
	}
	return out
}

// FollowStats says what a Follower has done.
type FollowStats struct{ Polls, Applied, Reloads int64 }

// Stats returns counters.
func (f *Follower) Stats() FollowStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return FollowStats{f.polls, f.applied, f.reloads}
}

// Run polls until ctx ends.
func (f *Follower) Run(ctx context.Context) {
	for {
		jitter := time.Duration((rand.Float64()*0.2 - 0.1) * float64(f.interval))
		select {
		case <-ctx.Done():
			return
		case <-time.After(f.interval + jitter):
		}
		if f.held != nil && f.held() {
			f.s.log.Debug("changes held back; poll skipped")
			continue
		}
		if err := f.Poll(ctx); err != nil && ctx.Err() == nil {
			f.s.log.Error("following changes", "err", err)
		}
	}
}

// Poll reads every set's Change Lists once and applies what is new.
func (f *Follower) Poll(ctx context.Context) error {
	f.applyMu.Lock()
	defer f.applyMu.Unlock()
	f.mu.Lock()
	f.polls++
	f.mu.Unlock()
	var errs []error
	reload := false
	for _, set := range f.s.Sets {
		gap, err := f.pollSet(ctx, set)
		if err != nil {
			errs = append(errs, err)
		}
		reload = reload || gap
	}
	if reload {
		if err := f.reload(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// change is one Change List entry with its time.
type change struct {
	at    time.Time
	entry *resourcesync.Entry
}

func (c *change) key() string { return string(c.entry.MD.Change) + " " + c.entry.Loc }

// changesAfter returns the entries past pos, each at its datetime (else its
// lastmod).
func changesAfter(entries []resourcesync.Entry, pos *Position) []change {
	var out []change
	for i := range entries {
		e := &entries[i]
		c := change{at: e.MD.Datetime, entry: e}
		if c.at.IsZero() {
			c.at = e.Lastmod
		}
		if pos.after(c.at, c.key()) {
			out = append(out, c)
		}
	}
	return out
}

// pollSet applies a set's new changes. It reports a gap: the Change Lists
// no longer reach back to the position.
func (f *Follower) pollSet(ctx context.Context, set *Set) (gap bool, err error) {
	f.mu.Lock()
	pos := *f.positions[set]
	f.mu.Unlock()
	var changes []change
	for _, u := range set.Docs[resourcesync.CapChangeList] {
		cs, g, err := f.readChangeDoc(ctx, u, &pos, 0)
		if err != nil {
			return false, err
		}
		gap = gap || g
		changes = append(changes, cs...)
	}
	if gap {
		return true, nil
	}
	return false, f.applyChanges(ctx, set, changes)
}

// readChangeDoc reads a Change List, or an index or archive of them, and
// returns the entries past pos. A document unchanged since the last poll
// (304) has nothing new.
func (f *Follower) readChangeDoc(ctx context.Context, u string, pos *Position, depth int) ([]change, bool, error) {
	if depth > 3 {
		return nil, false, fmt.Errorf("change list %s: indexes nested too deep", u)
	}
	f.mu.Lock()
	v := f.validators[u]
	f.mu.Unlock()
	resp, err := f.s.opts.Client.Get(ctx, u, v)
	if errors.Is(err, fetch.ErrNotModified) {
		// An unchanged index still has children that may have grown.
		f.mu.Lock()
		children, isIndex := f.indexes[u]
		f.mu.Unlock()
		if isIndex {
			return f.readChildren(ctx, children, pos, depth)
		}
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("poll change list: %w", err)
	}
	defer resp.Body.Close()
	doc, err := resourcesync.Parse(resp.Body, resp.URL, f.s.opts.Parse)
	if err != nil {
		return nil, false, fmt.Errorf("poll change list: %w", err)
	}
	f.s.warn(doc.Warnings)
	var out []change
	gap := false
	if doc.Header.Root == resourcesync.SitemapIndex {
		f.mu.Lock()
		f.indexes[u] = doc.Entries
		f.mu.Unlock()
		out, gap, err = f.readChildren(ctx, doc.Entries, pos, depth)
		if err != nil {
			return nil, false, err
		}
	} else {
		// 1.1's from says where the list's coverage starts. (1.0's modified
		// is only the list's last change, which says nothing about that.)
		from := doc.Header.MD.From
		gap = !pos.Time.IsZero() && from.After(pos.Time)
		out = changesAfter(doc.Entries, pos)
	}
	f.mu.Lock()
	f.validators[u] = resp.Validators()
	f.mu.Unlock()
	return out, gap, nil
}

// readChildren reads the Change Lists an index (or 1.0 archive) names,
// skipping those that end before the position.
func (f *Follower) readChildren(ctx context.Context, children []resourcesync.Entry, pos *Position, depth int) ([]change, bool, error) {
	var out []change
	gap := false
	for i := range children {
		e := &children[i]
		if until := e.MD.Until; !until.IsZero() && until.Before(pos.Time) {
			continue // an archived list that ends before the position
		}
		f.s.allowDoc(e.Loc)
		cs, g, err := f.readChangeDoc(ctx, e.Loc, pos, depth+1)
		if err != nil {
			return nil, false, err
		}
		out, gap = append(out, cs...), gap || g
	}
	return out, gap, nil
}

// applyChanges applies changes in datetime order, each once; of several
// changes to one resource the last wins.
func (f *Follower) applyChanges(ctx context.Context, set *Set, changes []change) error {
	if len(changes) == 0 {
		return nil
	}
	sort.SliceStable(changes, func(i, j int) bool { return changes[i].at.Before(changes[j].at) })
	last := map[string]int{}
	for i, c := range changes {
		last[c.entry.Loc] = i
	}
	var effects []catalog.Effect
	f.mu.Lock()
	pos := f.positions[set]
	f.mu.Unlock()
	for i := range changes {
		c := &changes[i]
		if last[c.entry.Loc] == i {
			eff, err := f.applyOne(ctx, c)
			if err != nil {
				f.s.log.Error("change not applied", "uri", c.entry.Loc, "change", c.entry.MD.Change, "err", err)
			}
			effects = append(effects, eff...)
		}
		f.mu.Lock()
		pos.advance(c.at, c.key())
		f.applied++
		f.mu.Unlock()
	}
	if len(effects) > 0 && f.effects != nil {
		f.effects(effects)
	}
	f.s.log.Info("changes applied", "set", setKey(set), "changes", len(changes), "effects", len(effects))
	return nil
}

func (f *Follower) applyOne(ctx context.Context, c *change) ([]catalog.Effect, error) {
	e := c.entry
	if e.MD.Change == resourcesync.ChangeDeleted {
		return f.cat.Remove(e.Loc), nil
	}
	res := resourceOf(e, c.at)
	f.s.allowMirrors(res.Links)
	if res.Length == resourcesync.NoLength {
		meta, err := f.s.opts.Client.Head(ctx, res.URI)
		if err != nil || meta.Length < 0 {
			return nil, fmt.Errorf("its length is not published and could not be learned: %v", err)
		}
		res.Length = meta.Length
	}
	return f.cat.Upsert(res), nil
}

// Reload reads every Resource List again and reconciles the catalog with
// it: what changed is upserted, what is gone is removed. Positions restart
// from the lists' times.
func (f *Follower) Reload(ctx context.Context) error {
	f.applyMu.Lock()
	defer f.applyMu.Unlock()
	return f.reload(ctx)
}

func (f *Follower) reload(ctx context.Context) error {
	f.s.log.Warn("Change List no longer reaches back to the last change applied; reloading the Resource Lists")
	seen := map[string]struct{}{}
	var effects []catalog.Effect
	var mu sync.Mutex
	sink := func(r *catalog.Resource) {
		eff := f.cat.Upsert(r)
		mu.Lock()
		seen[r.URI] = struct{}{}
		effects = append(effects, eff...)
		mu.Unlock()
	}
	for _, set := range f.s.Sets {
		set.ListedAt = time.Time{}
	}
	if _, err := f.s.loadInto(ctx, sink, nil); err != nil {
		return fmt.Errorf("reload: %w", err)
	}
	for _, uri := range f.cat.URIs() {
		if _, ok := seen[uri]; !ok {
			effects = append(effects, f.cat.Remove(uri)...)
		}
	}
	f.mu.Lock()
	for _, set := range f.s.Sets {
		f.positions[set] = &Position{Time: set.ListedAt}
	}
	f.validators = map[string]*fetch.Validators{}
	f.reloads++
	f.mu.Unlock()
	if len(effects) > 0 && f.effects != nil {
		f.effects(effects)
	}
	f.s.log.Info("reloaded", "resources", len(seen), "effects", len(effects))
	return nil
}
