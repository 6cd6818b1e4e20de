package sourcetest

import (
	"slices"
	"sync/atomic"
	"time"
)

// Resources returns the live resources, set by set in list order. For
// generated resources whose hashes were never computed this generates their
// bodies.
func (s *Source) Resources() []Resource {
	var out []Resource
	for k := range s.sets {
		s.mu.RLock()
		n := s.sets[k].slots()
		s.mu.RUnlock()
		for from := 0; from < n; from += 1024 {
			s.mu.RLock()
			batch := s.slotsLocked(k, from, min(from+1024, n))
			s.mu.RUnlock()
			for i := range batch {
				if !batch[i].deleted {
					out = append(out, s.withDigests(&batch[i]).public(s.cfg.Hashes))
				}
			}
		}
	}
	return out
}

// Lookup returns the resource at uri as published (a deleted one with
// Deleted set).
func (s *Source) Lookup(uri string) (Resource, bool) {
	key, ok := s.uriToKey(uri)
	if !ok {
		return Resource{}, false
	}
	s.mu.RLock()
	r, ok := s.lookupLocked(key)
	var c resState
	if ok {
		c = *r
	}
	s.mu.RUnlock()
	if !ok {
		return Resource{}, false
	}
	return s.withDigests(&c).public(s.cfg.Hashes), true
}

// Len returns the number of live resources.
func (s *Source) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.live
}

// Body returns the current true bytes of a live resource (not the bytes
// Corrupt makes the primary serve).
func (s *Source) Body(uri string) ([]byte, bool) {
	key, ok := s.uriToKey(uri)
	if !ok {
		return nil, false
	}
	s.mu.RLock()
	r, ok := s.lookupLocked(key)
	var c resState
	if ok {
		c = *r
	}
	s.mu.RUnlock()
	if !ok || c.deleted {
		return nil, false
	}
	return c.bodyBytes(s.cfg.Seed), true
}

// AwkwardURIs returns the URIs of the awkward resources (empty unless
// Config.Awkward).
func (s *Source) AwkwardURIs() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Clone(s.awkward)
}

// SetDelay delays every content response by d (0 for none).
func (s *Source) SetDelay(d time.Duration) { s.delay.Store(int64(d)) }

// Counters counts requests since the start or the last ResetCounters. Each
// request is in exactly one count, so counts add up.
type Counters struct {
	ListDocs    int64 // GETs of Resource Lists, their indexes and pages
	OtherDocs   int64 // GETs of the other ResourceSync documents
	WholeGets   int64 // content GETs at the primary without a Range header
	RangeGets   int64 // content GETs at the primary with a Range header
	Heads       int64 // content HEADs at the primary and the mirror
	NotModified int64 // 304 answers, documents and content
	Mirror      int64 // content GETs at the mirror
	// DumpRanges counts GETs of dump packages with a Range header,
	// DumpWholeGets those without.
	DumpRanges    int64
	DumpWholeGets int64
}

// Docs is the GETs of ResourceSync documents of every kind.
func (c Counters) Docs() int64 { return c.ListDocs + c.OtherDocs }

// ContentGets is the content GETs at the primary, ranged or not.
func (c Counters) ContentGets() int64 { return c.WholeGets + c.RangeGets }

type counters struct {
	listDocs, otherDocs, wholeGets, rangeGets, heads, notModified atomic.Int64
	mirror, dumpRanges, dumpWholeGets                             atomic.Int64
}

// Counters returns the request counts.
func (s *Source) Counters() Counters {
	c := &s.count
	return Counters{ListDocs: c.listDocs.Load(), OtherDocs: c.otherDocs.Load(), WholeGets: c.wholeGets.Load(), RangeGets: c.rangeGets.Load(),
		Heads: c.heads.Load(), NotModified: c.notModified.Load(), Mirror: c.mirror.Load(),
		DumpRanges: c.dumpRanges.Load(), DumpWholeGets: c.dumpWholeGets.Load()}
}

// ResetCounters sets every count to zero.
func (s *Source) ResetCounters() {
	c := &s.count
	for _, a := range []*atomic.Int64{&c.listDocs, &c.otherDocs, &c.wholeGets, &c.rangeGets, &c.heads, &c.notModified, &c.mirror, &c.dumpRanges, &c.dumpWholeGets} {
		a.Store(0)
	}
}
