package changes

import (
	"context"
	"fmt"
	"sync"

	"rsfs/catalog"
	"rsfs/fetch"
	"rsfs/source"
)

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
	var gone []step
	for _, uri := range f.cat.URIs() {
		if _, ok := seen[uri]; !ok {
			gone = append(gone, step{uri: uri})
		}
	}
	removed, _ := (&applier{cat: f.cat, fail: failAbort, move: posNone}).apply(gone) // a removal never fails
	effects = append(effects, removed.effects...)
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
