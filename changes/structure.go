package changes

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"rsfs/resourcesync"
	"rsfs/source"
)

// getIfChanged fetches a document with the validators of its last read,
// and returns nil (no error) when it is unchanged. The new validators are
// kept.
func (f *Follower) getIfChanged(ctx context.Context, u string) (*resourcesync.Document, error) {
	f.mu.Lock()
	v := f.validators[u]
	f.docs++
	f.mu.Unlock()
	doc, vals, err := f.s.GetDocIfChanged(ctx, u, v)
	if err != nil || doc == nil {
		return nil, err
	}
	f.mu.Lock()
	f.validators[u] = vals
	f.mu.Unlock()
	return doc, nil
}

// refreshStructure re-reads, by conditional GET, the Source Description
// and every Capability List, and adopts what changed: a set's new
// documents (a new Change List URL, new dumps), and a set added or gone
// (which reloads the Resource Lists). It reports whether a reload is due.
func (f *Follower) refreshStructure(ctx context.Context) (reload bool, err error) {
	if f.discovered.Swap(false) {
		return false, nil
	}
	var errs []error
	if desc := f.s.Entry; f.isDescription(desc) {
		doc, err := f.getIfChanged(ctx, desc)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("re-read source description: %w", err))
		case doc != nil && doc.Header.Capability() == resourcesync.CapDescription:
			reload = f.adoptSetURLs(ctx, doc)
		}
	}
	for _, set := range f.sets() {
		if _, unread := f.s.UnreadCapabilityList(set); set.URL == "" || unread {
			continue // an unread one is retried after (retryUnread)
		}
		doc, err := f.getIfChanged(ctx, set.URL)
		if err != nil {
			errs = append(errs, fmt.Errorf("re-read capability list: %w", err))
			continue
		}
		if doc == nil {
			continue
		}
		if c := doc.Header.Capability(); c != resourcesync.CapCapabilityList {
			errs = append(errs, fmt.Errorf("re-read capability list %s: capability is %q; kept what it said before", set.URL, c))
			continue
		}
		if f.adoptDocs(set, f.s.SetFromCapabilityList(set.URL, doc)) {
			f.markDriftDue(set) // new documents often come with a new Resource List
		}
	}
	return reload, errors.Join(errs...)
}

// isDescription reports whether u is a Source Description the sets came
// from (not one of the sets' own documents).
func (f *Follower) isDescription(u string) bool {
	if u == "" {
		return false
	}
	for _, set := range f.sets() {
		if set.URL == u || set.URL == "" {
			return false
		}
		for _, docs := range f.s.AllDocs(set) {
			if slices.Contains(docs, u) {
				return false // the URL given was one of the set's documents (a Change List): polled as such
			}
		}
	}
	return true
}

// sets returns the sets (a snapshot: a refresh may replace them).
func (f *Follower) sets() []*source.Set {
	return f.s.Sets()
}

// adoptDocs takes a re-read Capability List's documents for set, and
// reports whether they changed. A Change List it no longer names is read
// once more (it may hold changes past the position), then dropped.
func (f *Follower) adoptDocs(set *source.Set, fresh *source.Set) bool {
	f.replaceClosed(fresh)
	f.applyMu.Lock() // against followClosed's read and replace
	defer f.applyMu.Unlock()
	old, changed := f.s.AdoptDocs(set, fresh)
	if !changed {
		return false
	}
	for _, u := range old[resourcesync.CapChangeList] {
		if !slices.Contains(fresh.Docs[resourcesync.CapChangeList], u) {
			f.mu.Lock()
			f.retired[set] = append(f.retired[set], u)
			f.mu.Unlock()
		}
	}
	f.s.Logger().Info("capability list changed; following what it names now", "set", set.URL,
		"changelists", fresh.Docs[resourcesync.CapChangeList], "changedumps", fresh.Docs[resourcesync.CapChangeDump])
	return true
}

// replaceClosed puts in fresh's Change Lists, for each closed one already
// replaced by its index (followClosed), the index: a Capability List that
// still names the closed list must not lead the set back to it.
func (f *Follower) replaceClosed(fresh *source.Set) {
	f.mu.Lock()
	defer f.mu.Unlock()
	lists := fresh.Docs[resourcesync.CapChangeList]
	var out []string
	for _, u := range lists {
		if idx, ok := f.closedTo[u]; ok {
			u = idx
		}
		if !slices.Contains(out, u) {
			out = append(out, u)
		}
	}
	if len(lists) > 0 {
		fresh.Docs[resourcesync.CapChangeList] = out
	}
}

// adoptSetURLs compares the Capability Lists a re-read Source Description
// names with the sets followed; a set added or gone means a reload. A new
// one that cannot be read is a set with no documents, noted unread, as
// discovery makes one (retryUnread reads it again).
func (f *Follower) adoptSetURLs(ctx context.Context, doc *resourcesync.Document) bool {
	want, err := f.capabilityListURLs(ctx, doc)
	if err != nil {
		f.s.Logger().Warn("the Source Description Index changed, but a Source Description it names could not be read; the sets followed are kept", "err", err)
		return false
	}
	var have []string
	for _, set := range f.sets() {
		have = append(have, set.URL)
	}
	slices.Sort(want)
	slices.Sort(have)
	if slices.Equal(want, have) || len(want) == 0 {
		return false
	}
	var sets []*source.Set
	for _, u := range want {
		if set := f.setOf(u); set != nil {
			sets = append(sets, set)
			continue
		}
		f.s.AllowDoc(u)
		d, err := f.getIfChanged(ctx, u)
		if err == nil && d != nil && d.Header.Capability() != resourcesync.CapCapabilityList {
			err = fmt.Errorf("capability is %q", d.Header.Capability())
		}
		if err != nil && ctx.Err() == nil { // a set with no documents yet, read again at each poll
			set := &source.Set{URL: u}
			f.s.NoteCapabilityListUnread(set, fmt.Errorf("read capability list %s: %w", u, err))
			sets = append(sets, set)
			continue
		}
		if err != nil || d == nil {
			f.s.Logger().Warn("a new capability list could not be read; not followed yet", "url", u, "err", err)
			continue
		}
		sets = append(sets, f.s.SetFromCapabilityList(u, d))
	}
	f.s.Logger().Warn("the Source Description names other capability lists; reloading", "sets", want)
	f.applyMu.Lock() // not in the middle of a batch, which numbers its changes' set
	f.s.ReplaceSets(sets)
	f.applyMu.Unlock()
	return true
}

// capabilityListURLs returns the Capability Lists a Source Description
// names; of a Source Description Index (DSpace's
// sourcedescriptionindex.xml), those its Source Descriptions name.
func (f *Follower) capabilityListURLs(ctx context.Context, doc *resourcesync.Document) ([]string, error) {
	var want []string
	for _, e := range doc.Entries {
		if doc.Header.Root != resourcesync.SitemapIndex {
			if e.MD.Capability == "" || e.MD.Capability == resourcesync.CapCapabilityList {
				want = append(want, e.Loc)
			}
			continue
		}
		f.s.AllowDoc(e.Loc)
		child, err := f.s.GetDoc(ctx, e.Loc)
		if err != nil {
			return nil, fmt.Errorf("read source description %s: %w", e.Loc, err)
		}
		if child.Header.Root == resourcesync.SitemapIndex {
			return nil, fmt.Errorf("source description %s is an index inside an index", e.Loc)
		}
		more, _ := f.capabilityListURLs(ctx, child)
		want = append(want, more...)
	}
	return want, nil
}

func (f *Follower) setOf(capURL string) *source.Set {
	for _, set := range f.sets() {
		if set.URL == capURL {
			return set
		}
	}
	return nil
}

// changeDocs returns the Change Lists to read for set: those its
// Capability List names, and those it stopped naming, once.
func (f *Follower) changeDocs(set *source.Set) (docs, retired []string) {
	docs = f.s.Docs(set, resourcesync.CapChangeList)
	f.mu.Lock()
	retired = f.retired[set]
	f.mu.Unlock()
	return docs, retired
}

// dropRetired forgets Change Lists read for the last time.
func (f *Follower) dropRetired(set *source.Set, read []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	rest := f.retired[set][:0:0]
	for _, u := range f.retired[set] {
		if !slices.Contains(read, u) {
			rest = append(rest, u)
		}
	}
	if len(rest) == 0 {
		delete(f.retired, set)
		return
	}
	f.retired[set] = rest
}

// changeDumps returns the Change Dumps set's Capability List names.
func (f *Follower) changeDumps(set *source.Set) []string {
	return f.s.Docs(set, resourcesync.CapChangeDump)
}

// followClosed handles a Change List the set polls directly that is now
// closed (it has until): its changes were just read; from the next poll on
// the set polls the index it names (rel="index") instead. Without one, the
// Capability List (rel="up"), re-read at every poll, is what names the next
// Change List.
func (f *Follower) followClosed(set *source.Set, u string, h *resourcesync.Header) {
	var index string
	for _, l := range h.Links {
		if l.Rel == "index" && l.Href != "" && l.Href != u {
			index = l.Href
		}
	}
	if index == "" {
		return
	}
	f.s.AllowDoc(index)
	f.applyMu.Lock()
	defer f.applyMu.Unlock()
	docs := f.s.Docs(set, resourcesync.CapChangeList)
	i := slices.Index(docs, u)
	if i < 0 || slices.Contains(docs, index) {
		return
	}
	f.s.Logger().Info("change list closed; following its index", "set", f.s.SetKey(set), "changelist", u, "index", index)
	f.mu.Lock()
	f.closedTo[u] = index
	f.mu.Unlock()
	f.s.ReplaceDocs(set, resourcesync.CapChangeList, slices.Replace(docs, i, i+1, index))
}
