package changes

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"rsfs/catalog"
	"rsfs/notify"
	"rsfs/resourcesync"
	"rsfs/source"
)

// applyFramework re-reads exactly the documents a Framework Notification
// names, each as what it is to the set: a Change List (or a child of its
// index) is read and its changes applied; a Resource List is read by
// conditional GET and its differences from the catalog applied as changes;
// the set's Capability List is re-read and what it names adopted. Any
// other document, or one deleted, asks for an early poll of the set.
func (f *Follower) applyFramework(ctx context.Context, set *source.Set, n notify.Notification) error {
	r := f.newRead(set, false)
	var errs []error
	for i := range n.Doc.Entries {
		e := &n.Doc.Entries[i]
		var err error
		switch {
		case e.MD.Change == resourcesync.ChangeDeleted:
			f.pollSetSoon(set, e)
		case f.knownChangeDoc(set, e.Loc):
			err = r.changeList(ctx, e.Loc, -1, time.Time{}, 1)
		case f.knownResourceList(set, e.Loc):
			err = f.rereadResourceList(ctx, set, e.Loc)
		case e.Loc == set.URL:
			err = f.refreshSet(ctx, set)
		default:
			f.pollSetSoon(set, e)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("framework notification: %w", err))
		}
	}
	f.noteNewest(set, r.changes)
	f.applyChanges(ctx, set, r.changes, pushed)
	return errors.Join(errs...)
}

func (f *Follower) pollSetSoon(set *source.Set, e *resourcesync.Entry) {
	f.s.Logger().Info("framework notification: polling the set early", "set", f.s.SetKey(set), "document", e.Loc,
		"capability", e.MD.Capability, "change", e.MD.Change)
	n := f.s.SetNumber(set)
	f.PollSoon(n)
}

// knownResourceList reports whether u is one of set's Resource Lists (not
// an index's child: those are read through a poll's gap check).
func (f *Follower) knownResourceList(set *source.Set, u string) bool {
	return slices.Contains(f.s.Docs(set, resourcesync.CapResourceList), u)
}

// refreshSet re-reads set's Capability List by conditional GET and adopts
// what it names now.
func (f *Follower) refreshSet(ctx context.Context, set *source.Set) error {
	doc, err := f.getIfChanged(ctx, set.URL)
	if err != nil || doc == nil {
		return err
	}
	if c := doc.Header.Capability(); c != resourcesync.CapCapabilityList {
		return fmt.Errorf("re-read capability list %s: capability is %q; kept what it said before", set.URL, c)
	}
	f.adoptDocs(set, f.s.SetFromCapabilityList(set.URL, doc))
	return nil
}

// rereadResourceList reads one of set's Resource Lists by conditional GET
// (with the validators of its last load) and applies where it differs from
// the catalog: a resource it lists that the catalog lacks or holds in
// another version is created or updated. When it is the set's only list,
// a resource of the set it no longer lists is deleted. The changes are
// marked ahead of the position, like pushed ones: a Change List entry
// older than them is not applied over them.
func (f *Follower) rereadResourceList(ctx context.Context, set *source.Set, u string) error {
	doc, vals, err := f.s.GetDocIfChanged(ctx, u, f.s.ListValidators(set, u))
	f.mu.Lock()
	f.docs++
	f.mu.Unlock()
	if err != nil {
		return fmt.Errorf("re-read resource list: %w", err)
	}
	if doc == nil {
		return nil // unchanged since it was loaded
	}
	if doc.Header.Root == resourcesync.SitemapIndex {
		f.s.Logger().Info("framework notification names a Resource List Index: polling the set early", "document", u)
		f.pollSetSoon(set, &resourcesync.Entry{Loc: u})
		return nil
	}
	at := source.ListTime(&doc.Header.MD)
	changes := f.listDifferences(set, u, doc, at)
	f.s.NoteListValidators(set, u, vals)
	if len(changes) == 0 {
		return nil
	}
	// Each is applied whatever the position (the catalog lacks what the
	// list says), and one at or after it marked ahead of it, like a pushed
	// change: a Change List entry older than it is not applied over it.
	// One that fails is skipped with a warning: the Change List carries it.
	f.applyChanges(ctx, set, changes, listed)
	return nil
}

// listDifferences returns, as changes, where a Resource List differs from
// the catalog.
func (f *Follower) listDifferences(set *source.Set, u string, doc *resourcesync.Document, at time.Time) []change {
	var out []change
	listed := make(map[string]bool, len(doc.Entries))
	var skipped source.NonWebLocs
	defer skipped.Warn(f.s.Logger(), u)
	for i := range doc.Entries {
		e := doc.Entries[i]
		if skipped.Skip(e.Loc) {
			continue
		}
		listed[e.Loc] = true
		e.MD.Change = resourcesync.ChangeCreated
		if id, ok := f.cat.ByURI(e.Loc); ok {
			old, _ := f.cat.Resource(id)
			if old != nil && sameListedVersion(old, &e, at) {
				continue
			}
			e.MD.Change = resourcesync.ChangeUpdated
		}
		when := e.Lastmod
		if when.IsZero() {
			when = at
		}
		out = append(out, change{at: when, key: baseKey(&e), entry: &e, doc: u})
	}
	only := slices.Equal(f.s.Docs(set, resourcesync.CapResourceList), []string{u})
	n := f.s.SetNumber(set)
	if !only || n == 0 {
		return out
	}
	for _, uri := range f.cat.URIs() {
		if listed[uri] {
			continue
		}
		if id, ok := f.cat.ByURI(uri); ok {
			if r, ok := f.cat.Resource(id); ok && r.Set == n {
				e := &resourcesync.Entry{Loc: uri, MD: resourcesync.MD{Change: resourcesync.ChangeDeleted, Length: resourcesync.NoLength}}
				out = append(out, change{at: at, key: baseKey(e), entry: e, doc: u})
			}
		}
	}
	return out
}

// sameListedVersion reports whether a listed entry is the version the
// catalog holds (catalog.SameVersion), an entry without lastmod taking the
// list's time (at).
func sameListedVersion(old *catalog.Resource, e *resourcesync.Entry, at time.Time) bool {
	lastmod := e.Lastmod
	if lastmod.IsZero() {
		lastmod = at
	}
	return catalog.SameVersion(old, e.MD.Hashes, lastmod, e.MD.Length)
}
