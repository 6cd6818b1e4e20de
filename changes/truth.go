package changes

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"rsfs/catalog"
	"rsfs/resourcesync"
	"rsfs/source"
)

// Truth returns the Source as it is now: its Resource Lists, plus every
// change its Change Lists (and indexes) and Change Dumps list after the
// lists' time (at), read and dated by the follower's own engine
// (engine.go).
//
// It is what a fresh mount would show once it has caught up: the Resource
// Lists are loaded as Load loads them (src.LoadEach: dump copies attached,
// lengths the lists omit left unknown, dump-only resources added), the catalog
// is sealed, and then, set by set, every change document the Capability
// List names now is walked as the follower's first poll after a load walks
// it, but read whole (an unconditional GET): from the set's list time, an
// index followed to its children (up to source.MaxDepth levels) but those closed
// before that time, entries dated by datedChanges, changes met twice kept
// once, undated ones behind the list time whose result the catalog lacks
// kept as doubts, and the latest change behind the list time of each
// resource the Resource Lists are stale about (staleBefore) added. They
// are applied by the follower's apply plan: in time order, of several to
// one URI only the last; deleted removes.
//
// A created or updated resource whose change publishes no length is
// HEADed, as the follower does; where that fails its length is left
// unknown (resourcesync.NoLength) and Compare then judges it by hash, else
// by lastmod alone. A change that does not say its kind and whose HEAD
// fails (neither a length nor 404 or 410) fails Truth, naming it, as a
// full catalog does (applyTruth).
//
// A change document that cannot be read is skipped, as the follower skips
// it, and named in the error; the catalog returned beside it is the truth
// as far as the other documents tell it, which no caller trusts: drift
// repair then repairs nothing, and audit says which document failed.
//
// src is used as a load uses it: its Resource Lists' validators and times
// are replaced by those just read, which is what drift repair (drift.go),
// passing the followed Source, wants as its next baseline; audit passes a
// Source discovered for the purpose. Gaps (Change Lists that start after
// the lists' time) are not checked: what changed between cannot be known,
// here as in the follower.
func Truth(ctx context.Context, src *source.Source) (*catalog.Catalog, error) {
	cat := catalog.New(catalog.Options{Origin: src.Origin})
	st, err := src.LoadEach(ctx, cat.Add)
	if err != nil {
		return nil, fmt.Errorf("truth: %w", err)
	}
	if err := cat.Seal(); err != nil {
		return nil, fmt.Errorf("truth: %w", err)
	}
	if err := unreadDumpsErr(src, st); err != nil {
		return nil, err
	}
	var failed []error
	for _, set := range src.Sets() {
		w := newWalk(src, loadedReads{wholeReads{src}, st.Reads}, Position{Time: st.ListedAt(set)}, time.Now())
		w.cat, w.fresh = cat, true
		w.changeLists(ctx, src.Docs(set, resourcesync.CapChangeList))
		w.changeDumps(ctx, src.Docs(set, resourcesync.CapChangeDump))
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("truth: %w", err)
		}
		if err := w.err(); err != nil {
			failed = append(failed, err)
		}
		w.staleBehind()
		if err := applyTruth(ctx, src, cat, w.changes, src.SetNumber(set)); err != nil {
			return nil, fmt.Errorf("truth: %w", err)
		}
	}
	if len(failed) > 0 {
		return cat, fmt.Errorf("truth: change documents could not be read: %w", errors.Join(failed...))
	}
	return cat, nil
}

// catalogHolds reports whether cat already holds a change's result (the
// follower's doubts and Truth's ask it): a deleted resource is absent; a
// created or updated one is there in the version the entry lists
// (catalog.SameVersion).
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
	return ok && catalog.SameVersion(res, e.MD.Hashes, e.Lastmod, e.MD.Length)
}

// applyTruth applies a set's changes to cat by the apply plan, with no
// position, aborting at the first that fails (a truth that lacks a change
// is no truth). A length neither published nor learned stays unknown; a
// change that does not say its kind and whose HEAD failed (neither found
// nor gone) fails, naming it: which it is cannot be known.
func applyTruth(ctx context.Context, src *source.Source, cat *catalog.Catalog, changes []change, set uint16) error {
	plan := planApply(changes, nil)
	lengths := plan.learnLengths(ctx, src.Client())
	if err := ctx.Err(); err != nil {
		return err
	}
	a := &applier{cat: cat, set: set, fail: failAbort, move: posNone}
	_, err := a.apply(changeSteps(plan, lengths, set, true))
	return err
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

// Compare compares have (e.g. a mount's catalog) with want (Truth). A
// record is updated when catalog.CompareVersion says it is another version;
// two that nothing tells apart (no lastmod, no common hash, lengths that do
// not disagree) are no drift.
func Compare(have, want *catalog.Catalog) Drift {
	var d Drift
	for _, u := range want.URIs() {
		w := resourceAt(want, u)
		h := resourceAt(have, u)
		switch {
		case w == nil:
		case h == nil:
			d.Created = append(d.Created, u)
		case catalog.CompareVersion(h, w.Hashes, w.Lastmod, w.Length) == catalog.VersionOther:
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

// unreadDumpsErr is why a truth that left out a Resource Dump (a package or
// the dump document, that could not be read) is not the Source's whole
// state (a Change Dump's packages the walk reads, and reports): the
// resources only it holds would read as deleted, and drift repair would
// remove them.
func unreadDumpsErr(src *source.Source, st *source.LoadStats) error {
	n := int(st.SkippedResourceDumpPackages)
	for _, set := range src.Sets() {
		for u := range src.UnreadDumps(set) {
			if slices.Contains(src.Docs(set, resourcesync.CapResourceDump), u) {
				n++
			}
		}
	}
	if n == 0 {
		return nil
	}
	return fmt.Errorf("truth: %d dump packages or documents could not be read, so the resources only they hold are not known", n)
}
