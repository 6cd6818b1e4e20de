package source

import (
	"maps"
	"slices"

	"rsfs/resourcesync"
)

// The resource sets are the Source's own: the follower (package changes)
// adopts what a re-read Capability List or Source Description names while
// loads, status and snapshots read them, so they are read and replaced
// only here, under setsMu, never held across I/O.

// Sets returns the resource sets: a snapshot of the list (the sets
// themselves are shared; read their documents through Docs).
func (s *Source) Sets() []*Set {
	s.setsMu.Lock()
	defer s.setsMu.Unlock()
	return slices.Clone(s.sets)
}

// ReplaceSets makes sets the Source's resource sets (a Source Description
// that names other Capability Lists). It renumbers them (SetNumber).
func (s *Source) ReplaceSets(sets []*Set) {
	s.setsMu.Lock()
	s.sets = slices.Clone(sets)
	s.setsMu.Unlock()
}

// SetKey names set among the sets, for the positions a snapshot keeps and
// for the log: its Capability List's URL; for the implicit set (the
// documents no Capability List names), its first Resource List, else the
// first document of the first capability it has one of.
func (s *Source) SetKey(set *Set) string {
	if set.URL != "" {
		return set.URL
	}
	s.setsMu.Lock()
	defer s.setsMu.Unlock()
	if l := set.Docs[resourcesync.CapResourceList]; len(l) > 0 {
		return l[0]
	}
	for _, c := range slices.Sorted(maps.Keys(set.Docs)) {
		if l := set.Docs[c]; len(l) > 0 {
			return l[0]
		}
	}
	return ""
}

// SetNumber is set's number in the catalog (catalog.Resource.Set): its
// place in the sets, from 1; 0 for a set not (or no longer) among them. A
// change of sets reloads every Resource List, which renumbers them.
func (s *Source) SetNumber(set *Set) uint16 {
	s.setsMu.Lock()
	defer s.setsMu.Unlock()
	for i, x := range s.sets {
		if x == set && i < 0xffff {
			return uint16(i + 1)
		}
	}
	return 0
}

// Docs returns the documents of capability c set's Capability List names
// now (a copy).
func (s *Source) Docs(set *Set, c resourcesync.Capability) []string {
	s.setsMu.Lock()
	defer s.setsMu.Unlock()
	return slices.Clone(set.Docs[c])
}

// NoBaseline reports whether set publishes Change Lists (or Change Dumps)
// and no Resource List nor Resource Dump: its resources are only those its
// changes name, and a Destination has nothing to start from but them.
func (s *Source) NoBaseline(set *Set) bool {
	s.setsMu.Lock()
	defer s.setsMu.Unlock()
	d := set.Docs
	return len(d[resourcesync.CapResourceList])+len(d[resourcesync.CapResourceDump]) == 0 &&
		len(d[resourcesync.CapChangeList])+len(d[resourcesync.CapChangeDump]) > 0
}

// AllDocs returns every document set's Capability List names now, by
// capability (a copy).
func (s *Source) AllDocs(set *Set) map[resourcesync.Capability][]string {
	s.setsMu.Lock()
	defer s.setsMu.Unlock()
	return cloneDocs(set.Docs)
}

// cloneDocs is a deep copy of docs (nil stays nil).
func cloneDocs(docs map[resourcesync.Capability][]string) map[resourcesync.Capability][]string {
	if docs == nil {
		return nil
	}
	out := make(map[resourcesync.Capability][]string, len(docs))
	for c, urls := range docs {
		out[c] = slices.Clone(urls)
	}
	return out
}

// Hubs returns the notification channels set's Capability List advertises
// now (a copy).
func (s *Source) Hubs(set *Set) []Channel {
	s.setsMu.Lock()
	defer s.setsMu.Unlock()
	return slices.Clone(set.Hubs)
}

// AdoptDocs takes a re-read Capability List's documents, channels and
// links (fresh) for set. It reports whether the documents changed, and
// returns those it had.
func (s *Source) AdoptDocs(set, fresh *Set) (old map[resourcesync.Capability][]string, changed bool) {
	s.setsMu.Lock()
	defer s.setsMu.Unlock()
	if maps.EqualFunc(set.Docs, fresh.Docs, slices.Equal) {
		return set.Docs, false
	}
	old = set.Docs
	set.Docs, set.Hubs, set.Links = fresh.Docs, fresh.Hubs, fresh.Links
	return old, true
}

// ReplaceDocs replaces set's documents of capability c with urls.
func (s *Source) ReplaceDocs(set *Set, c resourcesync.Capability, urls []string) {
	s.setsMu.Lock()
	defer s.setsMu.Unlock()
	docs := maps.Clone(set.Docs)
	if docs == nil {
		docs = map[resourcesync.Capability][]string{}
	}
	docs[c] = slices.Clone(urls)
	set.Docs = docs
}

// setCopies returns copies of the sets as they are now, for a State.
func (s *Source) setCopies() []*Set {
	s.setsMu.Lock()
	defer s.setsMu.Unlock()
	out := make([]*Set, len(s.sets))
	for i, set := range s.sets {
		c := *set
		c.Docs = cloneDocs(set.Docs)
		c.Hubs, c.Links = slices.Clone(set.Hubs), slices.Clone(set.Links)
		out[i] = &c
	}
	return out
}
