package changes

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"rsfs/resourcesync"
	"rsfs/source"
)

// DriftEvery is how often, at most, a set's Resource Lists are asked
// whether they changed (one conditional GET each, or a header read where
// they have no validators) when nothing else says they may have: drift
// repair's bound on how long a change lost by any path stays lost. A
// Capability List that names other documents than before asks at once.
const DriftEvery = 10 * time.Minute

// markDriftDue asks for set's Resource Lists to be checked at the next
// whole poll.
func (f *Follower) markDriftDue(set *source.Set) {
	f.mu.Lock()
	f.driftDue[set] = true
	f.mu.Unlock()
}

// checkDrift asks the Resource Lists of the sets due whether they changed,
// and if one did, repairs the drift. It runs at the end of a whole poll,
// never the first (a catch-up, or the load, just read them).
func (f *Follower) checkDrift(ctx context.Context) error {
	now := f.now()
	var due, known []*source.Set
	f.mu.Lock()
	for _, set := range f.s.Sets() {
		last, ok := f.driftChecked[set]
		if !ok {
			f.driftChecked[set] = now // known since now: the first check is DriftEvery on
			last = now
		} else {
			known = append(known, set)
		}
		if f.driftDue[set] || now.Sub(last) >= DriftEvery {
			due = append(due, set)
		}
	}
	f.mu.Unlock()
	due = withListsOnly(f.s, due, known)
	var errs []error
	changed := false
	for _, set := range due {
		c, err := f.s.ResourceListsChanged(ctx, set)
		if err != nil {
			errs = append(errs, fmt.Errorf("check the resource lists for drift: %w", err))
			continue
		}
		f.mu.Lock()
		f.driftChecked[set] = now
		delete(f.driftDue, set)
		f.mu.Unlock()
		changed = changed || c
	}
	if changed {
		errs = append(errs, f.repairDrift(ctx))
	}
	return errors.Join(errs...)
}

// withListsOnly adds to due the sets of known (those an earlier whole
// poll met) that publish no Change List and no Change Dump (the POD
// aggregator's, which rewrites its Resource Lists as uploads come): their
// Resource Lists are the only way they say anything changed, so they are
// asked at every whole poll but the first after the set was met (the
// load, or the catch-up, just read them or the snapshot), each with a
// conditional GET.
func withListsOnly(src *source.Source, due, known []*source.Set) []*source.Set {
	for _, set := range known {
		if len(src.Docs(set, resourcesync.CapChangeList)) == 0 && len(src.Docs(set, resourcesync.CapChangeDump)) == 0 &&
			!slices.Contains(due, set) {
			due = append(due, set)
		}
	}
	return due
}

// repairDrift compares the catalog with the Source as it is now (Truth:
// the Resource Lists plus the changes after them) and makes it so: what
// differs is applied, said in one warning with examples, and counted
// (status Drift), by the one apply with no position, which skips a
// resource the catalog has no room for (named in the log and the status).
// Positions do not move: the Change Lists are still followed from where
// they were. This is the safety net: a change
// lost by any path is late by at most DriftEvery, never lost for good.
func (f *Follower) repairDrift(ctx context.Context) error {
	truth, err := Truth(ctx, f.s)
	if err != nil {
		return fmt.Errorf("drift repair: %w", err)
	}
	f.applyMu.Lock()
	d := Compare(f.cat, truth)
	var steps []step
	for _, uri := range d.Deleted {
		steps = append(steps, step{uri: uri})
	}
	for _, uri := range append(append([]string(nil), d.Created...), d.Updated...) {
		// A resource whose length is not known (its list gives none) goes
		// in without one: the file system learns it when it is looked up.
		if res := resourceAt(truth, uri); res != nil {
			steps = append(steps, step{uri: uri, res: res})
		}
	}
	const next = "the next repair tries it again"
	sets := f.sets()
	a := &applier{cat: f.cat, fail: failSkip, move: posNone, mirrors: f.s.AllowMirrors, log: f.s.Logger(),
		what: "drift repair: a resource", next: next, skipped: func(s *step, err error) {
			if n := int(s.res.Set); n >= 1 && n <= len(sets) {
				f.noteSkipped(sets[n-1], "drift repair", s.uri, err, next)
			}
		}}
	done, _ := a.apply(steps) // failSkip never fails it
	effects := done.effects
	f.mu.Lock()
	f.st.drift += int64(d.Len())
	f.mu.Unlock()
	f.applyMu.Unlock()
	if d.Len() > 0 {
		f.s.Logger().Warn("drift repaired: "+d.String(), "created", len(d.Created), "deleted", len(d.Deleted), "updated", len(d.Updated))
		if f.effects != nil {
			f.effects(effects)
		}
	} else {
		f.s.Logger().Info("the Resource Lists changed; the tree agrees with them and the changes after them")
	}
	return nil
}
