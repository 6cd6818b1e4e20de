package changes

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"rsfs/catalog"
	"rsfs/fetch"
	"rsfs/resourcesync"
	"rsfs/source"
)

// Truth returns the Source as it is now: its Resource Lists, plus every
// change its Change Lists (and indexes) and Change Dumps list after the
// lists' time (at), dated exactly as the follower dates them.
//
// It is what a fresh mount would show once it has caught up: the Resource
// Lists are loaded as Load loads them (src.LoadEach: dump copies attached,
// missing lengths learned by HEAD, dump-only resources added), the catalog
// is sealed, and then, set by set, every change document the Capability
// List names now is read whole (an unconditional GET; an index is followed
// to its children, up to three levels, skipping a child closed, by its
// until, before the set's list time, as the follower does). Entries are
// dated by datedChanges, the follower's own rule (source.ChangeTime,
// undated entries by their place); the changes at or after the set's list
// time (the follower's position after a fresh load: a change at exactly
// that instant is applied), and the undated ones before it whose result
// the catalog lacks (the follower's doubts), are applied in date order, of
// several to one URI only the last; deleted removes.
//
// A created or updated resource whose change publishes no length is
// HEADed (fetch.HeadEach), as the follower does; where that fails its
// length is left unknown (resourcesync.NoLength) and Compare then judges
// it by hash, else by lastmod alone.
//
// src is used as a load uses it: its Resource Lists' validators and times
// are replaced by those just read, which is what drift repair (drift.go),
// passing the followed Source, wants as its next baseline; audit passes a
// Source discovered for the purpose. Gaps (Change Lists that start after the lists' time) are
// not checked: what changed between cannot be known, here as in the
// follower.
func Truth(ctx context.Context, src *source.Source) (*catalog.Catalog, error) {
	cat := catalog.New(catalog.Options{Origin: src.Origin})
	st, err := src.LoadEach(ctx, cat.Add)
	if err != nil {
		return nil, fmt.Errorf("truth: %w", err)
	}
	if err := cat.Seal(); err != nil {
		return nil, fmt.Errorf("truth: %w", err)
	}
	for _, set := range src.Sets {
		t := &truthRead{s: src, cat: cat, listedAt: st.ListedAt(set)}
		for _, u := range set.Docs[resourcesync.CapChangeList] {
			if err := t.readChangeDoc(ctx, u, 0); err != nil {
				return nil, fmt.Errorf("truth: %w", err)
			}
		}
		for _, u := range set.Docs[resourcesync.CapChangeDump] {
			if err := t.readChangeDump(ctx, u, 0); err != nil {
				return nil, fmt.Errorf("truth: %w", err)
			}
		}
		t.changes = append(t.changes, staleBefore(t.cat, t.before, t.changes)...)
		if err := t.apply(ctx, cat, src.SetNumber(set)); err != nil {
			return nil, fmt.Errorf("truth: %w", err)
		}
	}
	return cat, nil
}

// truthRead collects one set's changes past its list time.
type truthRead struct {
	s        *source.Source
	cat      *catalog.Catalog // the Resource Lists, and the sets before
	listedAt time.Time
	changes  []change
	seen     map[string]struct{} // changes kept, by key and time
	before   map[string]change   // each resource's latest change before the list time
}

func (t *truthRead) readChangeDoc(ctx context.Context, u string, depth int) error {
	if depth > 3 {
		return fmt.Errorf("change list %s: indexes nested too deep", u)
	}
	doc, err := t.s.GetDoc(ctx, u)
	if err != nil {
		return fmt.Errorf("change list: %w", err)
	}
	if doc.Header.Root == resourcesync.SitemapIndex {
		for i := range doc.Entries {
			e := &doc.Entries[i]
			if until := e.MD.Until; !until.IsZero() && until.Before(t.listedAt) {
				continue
			}
			t.s.AllowDoc(e.Loc)
			if err := t.readChangeDoc(ctx, e.Loc, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	t.collect(u, &doc.Header, doc.Entries)
	return nil
}

// collect keeps a document's changes at or after the list time, dated as
// the follower dates them, as the follower's collect keeps them after a
// fresh load: a change met twice (a list read directly and through an
// index) once, and an undated entry that falls before the list time when
// the catalog does not hold its result (the follower's doubt).
func (t *truthRead) collect(u string, h *resourcesync.Header, entries []resourcesync.Entry) {
	cs, _ := datedChanges(u, h, entries, t.listedAt)
	if t.seen == nil {
		t.seen = map[string]struct{}{}
	}
	var skipped source.NonWebLocs
	defer skipped.Warn(t.s.Logger(), u)
	for i := range cs {
		c := &cs[i]
		if skipped.Skip(c.entry.Loc) || c.entry.MD.Change == "" {
			continue
		}
		id := c.key + "@" + c.at.UTC().Format(time.RFC3339Nano)
		if _, dup := t.seen[id]; dup {
			continue
		}
		t.seen[id] = struct{}{}
		if c.at.Before(t.listedAt) {
			t.before = latestBefore(t.before, c)
			if !c.undated || catalogHolds(t.cat, c) {
				continue
			}
			c.doubt = true
		}
		t.changes = append(t.changes, *c)
	}
}

// catalogHolds reports whether cat already holds a change's result (the
// follower's doubts and Truth's ask it): a deleted resource is absent; a
// created or updated one is there in the version the entry lists
// (source.SameVersion).
func catalogHolds(cat *catalog.Catalog, c *change) bool {
	e := c.entry
	id, ok := cat.ByURI(e.Loc)
	if e.MD.Change == resourcesync.ChangeDeleted {
		return !ok
	}
	if !ok {
		return false
	}
	res, ok := cat.Resource(id)
	return ok && source.SameVersion(res, e.MD.Hashes, e.Lastmod, e.MD.Length)
}

func (t *truthRead) readChangeDump(ctx context.Context, u string, depth int) error {
	if depth > 3 {
		return fmt.Errorf("change dump %s: indexes nested too deep", u)
	}
	doc, err := t.s.GetDoc(ctx, u)
	if err != nil {
		return fmt.Errorf("change dump: %w", err)
	}
	for i := range doc.Entries {
		e := &doc.Entries[i]
		if until := e.MD.Until; !until.IsZero() && until.Before(t.listedAt) {
			continue
		}
		t.s.AllowDoc(e.Loc)
		if doc.Header.Root == resourcesync.SitemapIndex {
			if err := t.readChangeDump(ctx, e.Loc, depth+1); err != nil {
				return err
			}
			continue
		}
		if err := t.readPackage(ctx, e.Loc); err != nil {
			return err
		}
	}
	return nil
}

// readPackage reads a Change Dump package's manifest as the follower does
// (packageEntries).
func (t *truthRead) readPackage(ctx context.Context, pkgURL string) error {
	h, entries, err := packageEntries(ctx, t.s, pkgURL)
	if err != nil {
		return err
	}
	t.collect(pkgURL, h, entries)
	return nil
}

// apply applies the set's changes in date order; of several to one URI
// only the last. Lengths not published are learned by HEAD first; one that
// cannot be learned stays unknown.
func (t *truthRead) apply(ctx context.Context, cat *catalog.Catalog, set uint16) error {
	changes := t.changes
	sort.SliceStable(changes, func(i, j int) bool { return changes[i].at.Before(changes[j].at) })
	last := make(map[string]int, len(changes))
	for i := range changes {
		last[changes[i].entry.Loc] = i
	}
	var todo []int
	for i := range changes {
		e := changes[i].entry
		if last[e.Loc] == i && e.MD.Change != resourcesync.ChangeDeleted && e.MD.Length == resourcesync.NoLength {
			todo = append(todo, i)
		}
	}
	lengths := make(map[int]int64, len(todo))
	var mu sync.Mutex
	err := fetch.HeadEach(ctx, t.s.Client(), todo, fetch.HeadParallel,
		func(i int) string { return changes[i].entry.Loc },
		func(i int, meta *fetch.Meta, err error) error {
			if err == nil && meta.Length >= 0 {
				mu.Lock()
				lengths[i] = meta.Length
				mu.Unlock()
			}
			return nil
		})
	if err != nil {
		return err
	}
	for i := range changes {
		c := &changes[i]
		if last[c.entry.Loc] != i {
			continue
		}
		if c.entry.MD.Change == resourcesync.ChangeDeleted {
			cat.Remove(c.entry.Loc)
			continue
		}
		res := source.ResourceOf(c.entry, c.at)
		res.Set = set
		if res.Length == resourcesync.NoLength {
			if n, ok := lengths[i]; ok {
				res.Length = n
			}
		}
		if _, err := cat.TryUpsert(res); err != nil {
			return fmt.Errorf("%s: %w", res.URI, err)
		}
	}
	return nil
}

// Drift is how a catalog differs from the truth: URIs (sorted) the truth
// has and the catalog lacks (Created), has in another version (Updated),
// or the catalog has and the truth lacks (Deleted).
type Drift struct{ Created, Updated, Deleted []string }

// Len is the number of resources that differ.
func (d Drift) Len() int { return len(d.Created) + len(d.Updated) + len(d.Deleted) }

// String says how many differ, and names up to three:
// "3 created, 1 deleted, 2 updated (examples: ...)"; "no drift" when none.
func (d Drift) String() string {
	if d.Len() == 0 {
		return "no drift"
	}
	s := fmt.Sprintf("%d created, %d deleted, %d updated", len(d.Created), len(d.Deleted), len(d.Updated))
	var ex []string
	for _, l := range [][]string{d.Created, d.Deleted, d.Updated} {
		for _, u := range l {
			if len(ex) == 3 {
				break
			}
			ex = append(ex, u)
		}
	}
	return s + " (examples: " + strings.Join(ex, ", ") + ")"
}

// Compare compares have (e.g. a mount's catalog) with want (Truth). Two
// records are the same version when SameVersion says so.
func Compare(have, want *catalog.Catalog) Drift {
	var d Drift
	for _, u := range want.URIs() {
		w := resourceAt(want, u)
		h := resourceAt(have, u)
		switch {
		case w == nil:
		case h == nil:
			d.Created = append(d.Created, u)
		case !SameVersion(h, w):
			d.Updated = append(d.Updated, u)
		}
	}
	for _, u := range have.URIs() {
		if _, ok := want.ByURI(u); !ok {
			d.Deleted = append(d.Deleted, u)
		}
	}
	slices.Sort(d.Created)
	slices.Sort(d.Updated)
	slices.Sort(d.Deleted)
	return d
}

func resourceAt(c *catalog.Catalog, uri string) *catalog.Resource {
	id, ok := c.ByURI(uri)
	if !ok {
		return nil
	}
	r, ok := c.Resource(id)
	if !ok {
		return nil
	}
	return r
}

// SameVersion reports whether have and want record the same version of a
// resource, by source.SameVersion (a hash both publish with one algorithm
// agrees, else the lastmod, and the length where both are known, agree),
// except that two records without a lastmod and without a common hash
// are the same version when their lengths agree (or one is unknown).
func SameVersion(have, want *catalog.Resource) bool {
	if have.Lastmod.IsZero() && want.Lastmod.IsZero() && !commonHash(have.Hashes, want.Hashes) {
		return have.Length < 0 || want.Length < 0 || have.Length == want.Length
	}
	return source.SameVersion(have, want.Hashes, want.Lastmod, want.Length)
}

func commonHash(a, b []resourcesync.Hash) bool {
	for _, x := range a {
		for _, y := range b {
			if x.Alg == y.Alg {
				return true
			}
		}
	}
	return false
}
