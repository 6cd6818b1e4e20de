package changes

import (
	"context"
	"fmt"
	"sync"

	"rsfs/catalog"
	"rsfs/fetch"
	"rsfs/source"
)

// applyChanges applies changes in datetime order, each once; of several
// changes to one resource the last wins. Lengths are learned first, with
// no lock held. A polled batch moves the position, but never past a change
// that failed to apply (it is retried at the next poll) nor past now plus
// source.FutureBound; a pushed batch marks its changes ahead of the
// position and leaves it where it is. It reports whether a change failed.
func (f *Follower) applyChanges(ctx context.Context, set *source.Set, changes []change, pushed bool) (failed bool) {
	if len(changes) == 0 {
		return false
	}
	horizon := f.now().Add(source.FutureBound)
	f.mu.Lock()
	plan := planApply(changes, func(c *change) bool { return !c.doubt && f.positions[set].passed(c) })
	f.mu.Unlock()
	changes = plan.changes
	lengths := plan.learnLengths(ctx, f.s.Client())

	f.applyMu.Lock()
	var effects []catalog.Effect
	blocked, applied := false, 0
	pos := f.positions[set] // written only under applyMu (and mu, for readers)
	for i := range changes {
		c := &changes[i]
		if pos.passed(c) && !c.doubt {
			continue
		}
		ahead := pos.appliedAhead(c, horizon)
		if plan.wins(i) && !ahead {
			eff, err := f.applyOne(set, c, lengths[i])
			if err != nil {
				var gaveUp bool
				if eff, gaveUp = f.giveUp(set, c, err); !gaveUp {
					blocked, failed = true, true
					continue
				}
			}
			effects = append(effects, eff...)
			applied++
		}
		f.mu.Lock()
		if !ahead {
			f.applied++
		}
		switch {
		case pushed:
			pos.markAhead(c)
		case blocked && !c.at.After(horizon):
			// applied, but the position stays before the failed change
		default:
			pos.advance(c, horizon)
		}
		f.mu.Unlock()
	}
	f.applyMu.Unlock()

	if len(effects) > 0 && f.effects != nil {
		f.effects(effects)
	}
	f.s.Logger().Info("changes applied", "set", f.s.SetKey(set), "changes", applied, "effects", len(effects), "pushed", pushed)
	return failed
}

func (f *Follower) applyOne(set *source.Set, c *change, l learned) ([]catalog.Effect, error) {
	e := c.entry
	if deletes(e, l) {
		return f.cat.Remove(e.Loc), nil
	}
	res, err := resourceOf(c, f.s.SetNumber(set), l)
	if err != nil {
		return nil, err
	}
	f.s.AllowMirrors(res.Links)
	eff, err := f.cat.TryUpsert(res)
	if err != nil {
		return nil, fmt.Errorf("the catalog has no room for it: %w", err)
	}
	f.mu.Lock()
	delete(f.failures, c.key)
	f.mu.Unlock()
	return eff, nil
}

// giveUp counts a failed change and reports whether it has failed too
// often to hold the position any longer. A given-up update keeps the file
// at its old length with the new version's time and hashes, so reading it
// fails (EIO, "changed since it was listed" in the log) rather than serve
// bytes the Source no longer publishes; the effects of marking it are
// returned, for the kernel to be told the file's version changed.
func (f *Follower) giveUp(set *source.Set, c *change, err error) ([]catalog.Effect, bool) {
	f.mu.Lock()
	f.failures[c.key]++
	n := f.failures[c.key]
	f.mu.Unlock()
	e := c.entry
	if n < maxAttempts {
		f.s.Logger().Warn("change not applied; retried at the next poll", "uri", e.Loc, "change", e.MD.Change,
			"document", c.doc, "attempt", n, "err", err)
		return nil, false
	}
	f.s.Logger().Error("change given up: it failed at every poll; its file reads EIO until the Source lists it again",
		"uri", e.Loc, "change", e.MD.Change, "document", c.doc, "attempts", n, "err", err)
	f.mu.Lock()
	delete(f.failures, c.key)
	f.mu.Unlock()
	id, ok := f.cat.ByURI(e.Loc)
	if !ok {
		return nil, true
	}
	old, ok := f.cat.Resource(id)
	if !ok {
		return nil, true
	}
	res := source.ResourceOf(e, c.at)
	res.Length, res.Set = old.Length, f.s.SetNumber(set)
	eff, err := f.cat.TryUpsert(res)
	if err != nil {
		f.s.Logger().Error("a given-up change could not even be marked; its file may serve its old version", "uri", e.Loc, "err", err)
	}
	return eff, true
}

// closeGaps handles sets whose Change Lists start after their position:
// one round of conditional GETs of the Resource Lists. Unchanged, the gap
// is accepted (the next pollSet says so once); changed, they are reloaded.
// Either way the gap is then marked checked, so it never loops.
func (f *Follower) closeGaps(ctx context.Context, sets []*source.Set) error {
	unchanged, err := f.s.ResourceListsUnchanged(ctx, sets)
	if err != nil {
		f.s.Logger().Warn("checking the Resource Lists after a gap", "err", err)
	}
	if !unchanged {
		if err := f.reload(ctx, reloadGap); err != nil {
			return err
		}
	}
	f.mu.Lock()
	for _, set := range sets {
		f.gapChecked[set] = true
	}
	f.mu.Unlock()
	return nil
}

// Reload reads every Resource List again and reconciles the catalog with
// it: what changed is upserted, what is gone is removed. Positions restart
// from the lists' times.
func (f *Follower) Reload(ctx context.Context) error {
	return f.reload(ctx, reloadGap)
}

// Why a reload is due, as its warning says.
const (
	reloadGap       = "Change List no longer reaches back to the last change applied; reloading the Resource Lists"
	reloadStructure = "the Source's resource sets changed; reloading the Resource Lists"
	reloadDumps     = "a dump the last load could not read reads now; reloading the Resource Lists and dumps"
)

// reload reads with no lock held; only the reconciling, and the new list
// times, hold applyMu (a snapshot reads the sets under it). A resource the
// catalog has no room for fails the reload, which keeps what it had.
func (f *Follower) reload(ctx context.Context, why string) error {
	f.s.Logger().Warn(why)
	seen := map[string]struct{}{}
	var effects []catalog.Effect
	var mu sync.Mutex
	sink := func(r *catalog.Resource) error {
		eff, err := f.cat.TryUpsert(r)
		if err != nil {
			return err
		}
		mu.Lock()
		seen[r.URI] = struct{}{}
		effects = append(effects, eff...)
		mu.Unlock()
		return nil
	}
	st, err := f.s.LoadEach(ctx, sink)
	if err != nil {
		if len(effects) > 0 && f.effects != nil {
			f.effects(effects)
		}
		return fmt.Errorf("reload: %w", err)
	}
	f.applyMu.Lock()
	for _, uri := range f.cat.URIs() {
		if _, ok := seen[uri]; !ok {
			effects = append(effects, f.cat.Remove(uri)...)
		}
	}
	f.mu.Lock()
	f.positions = map[*source.Set]*Position{}
	for _, set := range f.s.Sets() {
		set.ListedAt = st.ListedAt(set)
		f.positions[set] = &Position{Time: set.ListedAt}
		f.listedFresh[set] = true
	}
	f.validators = map[string]*fetch.Validators{}
	f.reloads++
	f.mu.Unlock()
	f.applyMu.Unlock()
	if len(effects) > 0 && f.effects != nil {
		f.effects(effects)
	}
	f.s.Logger().Info("reloaded", "resources", len(seen), "effects", len(effects))
	return nil
}
