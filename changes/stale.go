package changes

import (
	"sort"

	"rsfs/catalog"
	"rsfs/resourcesync"
)

// A Resource List's at is when the Source began taking its snapshot:
// every change up to it is in the list (1.1 §4 on at). Some publishers
// stamp it when the list is done (resync-simulator sets at to now after
// building the list), so a change dated just before at can be missing from
// the list, and a fresh load, whose position starts at at, would pass it
// for good. So the first poll after a load looks at each resource's latest
// change dated before the position: where the list's record is older than
// that change (or lacks the resource, or still has a deleted one), the
// list is stale and the change is applied, as a doubt with one warning.

// latestBefore keeps c in before if it is the latest change seen for its
// resource; it returns before, made if nil.
func latestBefore(before map[string]change, c *change) map[string]change {
	if before == nil {
		before = map[string]change{}
	}
	if prev, ok := before[c.entry.Loc]; !ok || !c.at.Before(prev.at) {
		before[c.entry.Loc] = *c
	}
	return before
}

// staleListed adds to r's changes those behind the position that the
// Resource Lists' records are older than (staleBefore), with a warning.
func (f *Follower) staleListed(r *pollRead) {
	stale := r.staleBehind()
	if len(stale) == 0 {
		return
	}
	f.s.Logger().Warn("changes dated before the Resource Lists' time are missing from them (a list stamped after it was taken): applied",
		"set", f.s.SetKey(r.set), "changes", len(stale), "example", stale[0].entry.Loc, "listed_at", r.pos.Time)
}

// staleBefore returns, as doubts, the changes of before (each resource's
// latest behind the Resource Lists' time) whose resource no change of
// changes decides and whose record in cat, from the Resource Lists, is
// older than the change (listedBefore). Truth asks it too.
func staleBefore(cat *catalog.Catalog, before map[string]change, changes []change) []change {
	if len(before) == 0 {
		return nil
	}
	decided := make(map[string]bool, len(changes))
	for i := range changes {
		decided[changes[i].entry.Loc] = true
	}
	var out []change
	for uri, c := range before {
		if decided[uri] || !listedBefore(cat, &c) {
			continue
		}
		c.doubt = true
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].entry.Loc < out[j].entry.Loc })
	return out
}

// listedBefore reports whether cat's record of c's resource, from the
// Resource Lists, is older than c: a created or updated resource it lacks
// or holds in an older, other version; a deleted one it still holds from
// before the deletion.
func listedBefore(cat *catalog.Catalog, c *change) bool {
	res := resourceAt(cat, c.entry.Loc)
	if c.entry.MD.Change == resourcesync.ChangeDeleted {
		return res != nil && res.Lastmod.Before(c.at)
	}
	if res == nil {
		return true
	}
	return res.Lastmod.Before(c.at) && !catalogHolds(cat, c)
}
