package sourcetest

import (
	"fmt"
	"strconv"
	"strings"
)

// docKind is the kind of a served ResourceSync document.
type docKind int

const (
	docWellKnown docKind = iota + 1
	docCapabilityList
	docResourceList // the single Resource List of a set
	docIndex        // the Resource List Index of a set
	docPage         // one Resource List under an Index
	docChangeList
)

// docRef names one document.
type docRef struct {
	kind docKind
	set  int
	page int
}

const wellKnownPath = "/.well-known/resourcesync"

// setPrefix is the path prefix of set k's documents.
func (s *Source) setPrefix(k int) string {
	if len(s.sets) == 1 {
		return "/"
	}
	return fmt.Sprintf("/set%d/", k+1)
}

// listExt is the extension of lists: .xml, or .xml.gz with Gzip.
func (s *Source) listExt() string {
	if s.cfg.Gzip {
		return ".xml.gz"
	}
	return ".xml"
}

// docPath returns the URL path of a document.
func (s *Source) docPath(d docRef) string {
	p := s.setPrefix(d.set)
	switch d.kind {
	case docWellKnown:
		return wellKnownPath
	case docCapabilityList:
		if s.cfg.Layout == Layout10 && len(s.sets) == 1 {
			return wellKnownPath
		}
		return p + "capabilitylist.xml"
	case docResourceList:
		return p + "resourcelist" + s.listExt()
	case docIndex:
		return p + "resourcelist-index" + s.listExt()
	case docPage:
		return fmt.Sprintf("%sresourcelist-%04d%s", p, d.page, s.listExt())
	case docChangeList:
		return p + "changelist" + s.listExt()
	}
	panic(fmt.Sprintf("sourcetest: unknown document kind %d", d.kind))
}

func (s *Source) docURL(d docRef) string { return s.base + s.docPath(d)[1:] }

// WellKnownURL returns the URL of /.well-known/resourcesync.
func (s *Source) WellKnownURL() string { return s.docURL(docRef{kind: docWellKnown}) }

// CapabilityListURL returns the URL of set k's Capability List (in the 1.0
// layout with one set, the well-known URL).
func (s *Source) CapabilityListURL(k int) string {
	return s.docURL(docRef{kind: docCapabilityList, set: k})
}

// ResourceListURL returns the URL of set k's Resource List, or of its
// Resource List Index when it has one.
func (s *Source) ResourceListURL(k int) string {
	return s.docURL(s.resourceListRef(k))
}

// ChangeListURL returns the URL of set k's Change List.
func (s *Source) ChangeListURL(k int) string {
	return s.docURL(docRef{kind: docChangeList, set: k})
}

// Sets returns the number of resource sets (Capability Lists).
func (s *Source) Sets() int { return len(s.sets) }

func (s *Source) resourceListRef(k int) docRef {
	if s.sets[k].index {
		return docRef{kind: docIndex, set: k}
	}
	return docRef{kind: docResourceList, set: k}
}

// pagesLocked is the number of Resource Lists under set k's Index.
func (s *Source) pagesLocked(k int) int {
	return max(1, (s.sets[k].slots()+s.cfg.PerList-1)/s.cfg.PerList)
}

// routeDoc returns the document a request path names, if any.
func (s *Source) routeDoc(path string) (docRef, bool) {
	if path == wellKnownPath {
		if s.cfg.Layout == Layout10 && len(s.sets) == 1 {
			return docRef{kind: docCapabilityList}, true
		}
		return docRef{kind: docWellKnown}, true
	}
	k, rest, ok := s.splitSet(path)
	if !ok {
		return docRef{}, false
	}
	d := docRef{set: k}
	ext := s.listExt()
	switch {
	case rest == "capabilitylist.xml" && s.docPath(docRef{kind: docCapabilityList, set: k}) == path:
		d.kind = docCapabilityList
	case rest == "resourcelist"+ext && !s.sets[k].index:
		d.kind = docResourceList
	case rest == "resourcelist-index"+ext && s.sets[k].index:
		d.kind = docIndex
	case rest == "changelist"+ext:
		d.kind = docChangeList
	case s.sets[k].index && strings.HasPrefix(rest, "resourcelist-") && strings.HasSuffix(rest, ext):
		n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(rest, "resourcelist-"), ext))
		s.mu.RLock()
		pages := s.pagesLocked(k)
		s.mu.RUnlock()
		if err != nil || n < 0 || n >= pages || s.docPath(docRef{kind: docPage, set: k, page: n}) != path {
			return docRef{}, false
		}
		d.kind, d.page = docPage, n
	default:
		return docRef{}, false
	}
	return d, true
}

// splitSet splits a document path into its set and the name within it.
func (s *Source) splitSet(path string) (int, string, bool) {
	if len(s.sets) == 1 {
		rest, ok := strings.CutPrefix(path, "/")
		return 0, rest, ok && !strings.Contains(rest, "/")
	}
	rest, ok := strings.CutPrefix(path, "/set")
	if !ok {
		return 0, "", false
	}
	num, name, ok := strings.Cut(rest, "/")
	n, err := strconv.Atoi(num)
	if !ok || err != nil || n < 1 || n > len(s.sets) || strconv.Itoa(n) != num {
		return 0, "", false
	}
	return n - 1, name, true
}
