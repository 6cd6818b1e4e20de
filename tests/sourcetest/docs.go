package sourcetest

import (
	"fmt"
	"io"
	"time"

	"github.com/klauspost/compress/gzip"

	rs "rsfs/resourcesync"
)

// batchSize is how many list entries are copied out under the lock at a time.
const batchSize = 512

// docMeta is what the HTTP layer needs to know about a document before
// rendering it.
type docMeta struct {
	etag    string
	modTime time.Time
	gzip    bool
	entries int // number of entries, to decide between caching and streaming
}

// metaOf returns a document's ETag, modification time and size class.
func (s *Source) metaOf(d docRef) docMeta {
	s.mu.RLock()
	defer s.mu.RUnlock()
	m := docMeta{modTime: s.startAt, etag: fmt.Sprintf(`"d%s-0"`, s.fingerprint), entries: len(s.sets) + 2}
	if d.kind == docWellKnown || d.kind == docCapabilityList {
		return m
	}
	set := s.sets[d.set]
	m.gzip = s.cfg.Gzip
	m.modTime = set.at
	m.etag = fmt.Sprintf(`"d%s-%d"`, s.fingerprint, set.seq)
	switch d.kind {
	case docResourceList:
		m.entries = set.slots()
	case docIndex:
		m.entries = s.pagesLocked(d.set)
	case docPage:
		m.entries = min(s.cfg.PerList, set.slots()-d.page*s.cfg.PerList)
	case docChangeList:
		m.entries = len(set.changes)
	}
	return m
}

// writeDoc renders document d to w, gzip-compressed when m.gzip.
func (s *Source) writeDoc(w io.Writer, d docRef, m docMeta) error {
	if !m.gzip {
		return s.renderDoc(w, d)
	}
	zw := gzip.NewWriter(w)
	if err := s.renderDoc(zw, d); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("gzip %s: %w", s.docPath(d), err)
	}
	return nil
}

// renderDoc writes the XML of document d.
func (s *Source) renderDoc(w io.Writer, d docRef) error {
	var err error
	switch d.kind {
	case docWellKnown:
		err = s.writeWellKnown(w)
	case docCapabilityList:
		err = s.writeCapabilityList(w, d.set)
	case docResourceList:
		err = s.writeResourceList(w, d, 0, -1)
	case docPage:
		err = s.writeResourceList(w, d, d.page*s.cfg.PerList, (d.page+1)*s.cfg.PerList)
	case docIndex:
		err = s.writeIndex(w, d.set)
	case docChangeList:
		err = s.writeChangeList(w, d.set)
	}
	if err != nil {
		return fmt.Errorf("render %s: %w", s.docPath(d), err)
	}
	return nil
}

func (s *Source) is10() bool { return s.cfg.Layout == Layout10 }

// writeWellKnown writes the Source Description (1.1) or the Capability List
// Index (1.0 with several sets).
func (s *Source) writeWellKnown(w io.Writer) error {
	h := rs.Header{Root: rs.URLSet, MD: rs.MD{Capability: rs.CapDescription, Length: rs.NoLength}}
	if s.is10() {
		h.Root, h.MD = rs.SitemapIndex, rs.MD{Capability: rs.CapCapabilityList, Modified: s.startAt, Length: rs.NoLength}
	}
	wr := rs.NewWriter(w, &h)
	for k := range s.sets {
		e := rs.Entry{Loc: s.CapabilityListURL(k), MD: rs.MD{Capability: rs.CapCapabilityList, Length: rs.NoLength}}
		if s.is10() {
			e.MD = rs.MD{Length: rs.NoLength}
		}
		if err := wr.Write(&e); err != nil {
			return err
		}
	}
	return wr.Close()
}

// writeCapabilityList writes set k's Capability List.
func (s *Source) writeCapabilityList(w io.Writer, k int) error {
	h := rs.Header{Root: rs.URLSet, MD: rs.MD{Capability: rs.CapCapabilityList, Length: rs.NoLength}}
	up := len(s.sets) > 1 || !s.is10()
	if up {
		h.Links = []rs.Link{{Rel: "up", Href: s.WellKnownURL(), Length: rs.NoLength}}
	}
	if s.is10() {
		h.MD.Modified = s.startAt
	}
	wr := rs.NewWriter(w, &h)
	entries := []rs.Entry{
		{Loc: s.ResourceListURL(k), MD: rs.MD{Capability: rs.CapResourceList, Length: rs.NoLength}},
		{Loc: s.ChangeListURL(k), MD: rs.MD{Capability: rs.CapChangeList, Length: rs.NoLength}},
	}
	entries = s.withDumpEntries(entries, k)
	if s.cfg.Hub != "" {
		entries = append(entries, rs.Entry{Loc: s.NotificationTopic(k),
			MD:    rs.MD{Capability: rs.CapChangeNotification, Length: rs.NoLength},
			Links: []rs.Link{{Rel: "hub", Href: s.cfg.Hub, Length: rs.NoLength}}})
	}
	for i := range entries {
		if err := wr.Write(&entries[i]); err != nil {
			return err
		}
	}
	return wr.Close()
}

// listHeader is the header of a Resource List or Index of set k at time at.
func (s *Source) listHeader(root rs.RootKind, k int, at time.Time, parent string) rs.Header {
	h := rs.Header{Root: root, MD: rs.MD{Capability: rs.CapResourceList, Length: rs.NoLength}}
	capURL := s.CapabilityListURL(k)
	if s.is10() {
		h.MD.Modified = at
		h.Links = append(h.Links, rs.Link{Rel: "resourcesync", Href: capURL, Length: rs.NoLength})
		if parent != "" {
			h.Links = append(h.Links, rs.Link{Rel: "up", Href: parent, Length: rs.NoLength})
		}
		return h
	}
	h.MD.At, h.MD.Completed = at, at
	h.Links = append(h.Links, rs.Link{Rel: "up", Href: capURL, Length: rs.NoLength})
	if parent != "" {
		h.Links = append(h.Links, rs.Link{Rel: "index", Href: parent, Length: rs.NoLength})
	}
	return h
}

// writeIndex writes set k's Resource List Index.
func (s *Source) writeIndex(w io.Writer, k int) error {
	s.mu.RLock()
	pages, at := s.pagesLocked(k), s.sets[k].at
	s.mu.RUnlock()
	h := s.listHeader(rs.SitemapIndex, k, at, "")
	wr := rs.NewWriter(w, &h)
	for p := range pages {
		e := rs.Entry{Loc: s.docURL(docRef{kind: docPage, set: k, page: p}), Lastmod: at, MD: rs.MD{Length: rs.NoLength}}
		if err := wr.Write(&e); err != nil {
			return err
		}
	}
	return wr.Close()
}

// writeResourceList writes the resources in slots [from, to) of a set
// (to < 0: all), streaming them in batches.
func (s *Source) writeResourceList(w io.Writer, d docRef, from, to int) error {
	s.mu.RLock()
	n, at := s.sets[d.set].slots(), s.sets[d.set].at
	s.mu.RUnlock()
	if to < 0 || to > n {
		to = n
	}
	parent := ""
	if d.kind == docPage {
		parent = s.docURL(docRef{kind: docIndex, set: d.set})
	}
	h := s.listHeader(rs.URLSet, d.set, at, parent)
	wr := rs.NewWriter(w, &h)
	for b := from; b < to; b += batchSize {
		s.mu.RLock()
		batch := s.slotsLocked(d.set, b, min(b+batchSize, to))
		s.mu.RUnlock()
		for i := range batch {
			if batch[i].deleted {
				continue
			}
			e := s.resourceEntry(s.withDigests(&batch[i]))
			if err := wr.Write(&e); err != nil {
				return err
			}
		}
	}
	return wr.Close()
}

// resourceEntry is a Resource List entry.
func (s *Source) resourceEntry(r *resState) rs.Entry {
	e := rs.Entry{Loc: r.uri, Lastmod: r.lastmod,
		MD: rs.MD{Hashes: toHashes(s.cfg.Hashes, r.digests), Length: s.publishedLength(r.size), Type: r.typ}}
	if s.mirrorBase != "" {
		e.Links = []rs.Link{{Rel: "duplicate", Href: s.mirrorURI(r.key), Pri: 1, Length: rs.NoLength}}
	}
	return e
}

// mirrorURI is the URI of a resource's copy on the mirror.
func (s *Source) mirrorURI(key string) string { return s.mirrorBase + "mirror" + key }

func (s *Source) publishedLength(n int64) int64 {
	if s.cfg.OmitLength {
		return rs.NoLength
	}
	return n
}

// writeChangeList writes set k's Change List, oldest change first.
func (s *Source) writeChangeList(w io.Writer, k int) error {
	s.mu.RLock()
	changes := s.sets[k].changes[:len(s.sets[k].changes):len(s.sets[k].changes)]
	at := s.sets[k].at
	s.mu.RUnlock()
	h := rs.Header{Root: rs.URLSet, MD: rs.MD{Capability: rs.CapChangeList, Length: rs.NoLength}}
	if s.is10() {
		h.MD.Modified = at
		h.Links = []rs.Link{{Rel: "resourcesync", Href: s.CapabilityListURL(k), Length: rs.NoLength}}
	} else {
		h.MD.From = s.startAt
		h.Links = []rs.Link{{Rel: "up", Href: s.CapabilityListURL(k), Length: rs.NoLength}}
	}
	wr := rs.NewWriter(w, &h)
	for i := range changes {
		e := s.changeEntry(&changes[i])
		if err := wr.Write(&e); err != nil {
			return err
		}
	}
	return wr.Close()
}

// changeEntry is a Change List entry.
func (s *Source) changeEntry(c *change) rs.Entry {
	e := rs.Entry{Loc: c.uri, Lastmod: c.at, MD: rs.MD{Change: c.kind, Length: rs.NoLength}}
	if !s.is10() {
		e.MD.Datetime = c.at
		if c.kind == rs.ChangeDeleted {
			e.Lastmod = time.Time{}
		}
	}
	if c.kind != rs.ChangeDeleted {
		e.MD.Hashes, e.MD.Length, e.MD.Type = toHashes(s.cfg.Hashes, c.digests), s.publishedLength(c.size), c.typ
	}
	return e
}
