package specsource

import (
	"bytes"
	_ "embed"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Example19 is ResourceSync 1.1 Example 19 verbatim: a Change List whose
// last entry has no datetime (its order is its place in the list).
//
//go:embed testdata/resourcesync_ex_19.xml
var Example19 []byte

const (
	xmlDecl = `<?xml version="1.0" encoding="UTF-8"?>` + "\n"
	nsAttrs = `xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"`
)

func w3c(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// Document paths.
const (
	wellKnown    = "/.well-known/resourcesync"
	capList      = "/capabilitylist.xml"
	resList      = "/resourcelist.xml"
	changeList   = "/changelist.xml"
	changeIndex  = "/changelist-index.xml"
	example19    = "/examples/resourcesync_ex_19.xml"
	rotatedLists = "/cl/"
)

// doc renders the document at path, or reports none.
func (s *Source) doc(path string) ([]byte, bool) {
	s.pub.Lock()
	defer s.pub.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cfg.Layout == RotateIndex {
		s.rotateByClock()
	}
	volatile := path == resList && s.cfg.Layout == NoFrom || s.cfg.Layout == V10 // dated now
	if d, ok := s.cache[path]; ok && d.version == s.version && !volatile {
		return d.body, true
	}
	body, ok := s.render(path)
	if ok {
		if s.cache == nil {
			s.cache = map[string]renderedDoc{}
		}
		s.cache[path] = renderedDoc{s.version, body}
	}
	return body, ok
}

func (s *Source) render(path string) ([]byte, bool) {
	if body, ok, handled := s.renderStale(path); handled {
		return body, ok
	}
	switch {
	case path == wellKnown:
		return s.description(), true
	case path == capList:
		return s.capabilityList(), true
	case path == resList:
		return s.resourceList(), true
	case path == changeDump && s.cfg.Layout == ChangeDump:
		return s.changeDumpDoc(), true
	case path == changeList && s.cfg.Layout != Index && s.cfg.Layout != CapRotate && s.cfg.Layout != ChangeDump &&
		s.cfg.Layout != RotateIndex:
		return s.changeList(), true
	case path == changeIndex && (s.cfg.Layout == Index || s.cfg.Layout == RotateIndex):
		return s.changeListIndex(), true
	case path == example19:
		return Example19, true
	case strings.HasPrefix(path, rotatedLists) && (s.cfg.Layout == Index || s.cfg.Layout == CapRotate || s.cfg.Layout == RotateIndex):
		var n int
		if _, err := fmt.Sscanf(path, rotatedLists+"%d.xml", &n); err != nil || n < 1 || n > len(s.closed)+1 {
			return nil, false
		}
		return s.rotatedList(n), true
	}
	return nil, false
}

func (s *Source) description() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `%s<urlset %s>
  <rs:md capability="description"/>
  <url>
    <loc>%s%s</loc>
    <rs:md capability="capabilitylist"/>
  </url>
</urlset>
`, xmlDecl, nsAttrs, s.base, capList)
	return b.Bytes()
}

func (s *Source) capabilityList() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `%s<urlset %s>
  <rs:ln rel="up" href="%s%s"/>
  <rs:md capability="capabilitylist"/>
  <url>
    <loc>%s%s</loc>
    <rs:md capability="resourcelist"/>
  </url>
`, xmlDecl, nsAttrs, s.base, wellKnown, s.base, resList)
	switch s.cfg.Layout {
	case Index, RotateIndex:
		name := "changelist"
		if s.cfg.NonStandardName {
			name = "changelistindex"
		}
		fmt.Fprintf(&b, "  <url>\n    <loc>%s%s</loc>\n    <rs:md capability=%q/>\n  </url>\n", s.base, changeIndex, name)
	case CapRotate:
		fmt.Fprintf(&b, "  <url>\n    <loc>%s%s%d.xml</loc>\n    <rs:md capability=\"changelist\"/>\n  </url>\n", s.base, rotatedLists, len(s.closed)+1)
	case ChangeDump:
		fmt.Fprintf(&b, "  <url>\n    <loc>%s%s</loc>\n    <rs:md capability=\"changedump\"/>\n  </url>\n", s.base, changeDump)
	case TwoLists:
		fmt.Fprintf(&b, "  <url>\n    <loc>%s%s</loc>\n    <rs:md capability=\"changelist\"/>\n  </url>\n", s.base, closedList1)
		fmt.Fprintf(&b, "  <url>\n    <loc>%s%s</loc>\n    <rs:md capability=\"changelist\"/>\n  </url>\n", s.base, changeList)
	case IndexSwitch:
		named := changeList
		if s.indexed {
			named = changeIndex
		}
		fmt.Fprintf(&b, "  <url>\n    <loc>%s%s</loc>\n    <rs:md capability=\"changelist\"/>\n  </url>\n", s.base, named)
	default:
		fmt.Fprintf(&b, "  <url>\n    <loc>%s%s</loc>\n    <rs:md capability=\"changelist\"/>\n  </url>\n", s.base, changeList)
	}
	b.WriteString("</urlset>\n")
	return b.Bytes()
}

// resourceList lists the state at the list's time: the start for most
// layouts (a list published once), the current state for NoFrom.
func (s *Source) resourceList() []byte {
	files, at := s.listed, s.listAt
	if s.cfg.Layout == NoFrom {
		files, at = s.files, time.Now().UTC().Truncate(time.Second)
	}
	var paths []string
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var b bytes.Buffer
	fmt.Fprintf(&b, `%s<urlset %s>
  <rs:ln rel="up" href="%s%s"/>
  <rs:md capability="resourcelist" at="%s" completed="%s"/>
`, xmlDecl, nsAttrs, s.base, capList, w3c(at), w3c(at))
	for _, p := range paths {
		f := files[p]
		fmt.Fprintf(&b, `  <url>
    <loc>%s%s</loc>
    <lastmod>%s</lastmod>
    <rs:md hash="md5:%s" length="%d" type="text/plain"/>
  </url>
`, s.base, p, w3c(f.Lastmod), f.md5, len(f.Body))
	}
	b.WriteString("</urlset>\n")
	return b.Bytes()
}

// changeList is the single Change List of the Today, NoFrom, Undated and
// Future layouts.
func (s *Source) changeList() []byte {
	var b bytes.Buffer
	cs := s.changes
	md := fmt.Sprintf(`<rs:md capability="changelist" from="%s"/>`, w3c(s.start))
	switch s.cfg.Layout {
	case Today:
		y, m, d := s.start.Date()
		md = fmt.Sprintf(`<rs:md capability="changelist" from="%s"/>`, w3c(time.Date(y, m, d, 0, 0, 0, 0, time.UTC)))
	case OldList:
		md = fmt.Sprintf(`<rs:md capability="changelist" from="%s"/>`, w3c(s.listAt))
	case NoFrom:
		md = `<rs:md capability="changelist"/>`
		if len(cs) > s.cfg.Window {
			cs = cs[len(cs)-s.cfg.Window:]
		}
	}
	fmt.Fprintf(&b, "%s<urlset %s>\n  <rs:ln rel=\"up\" href=\"%s%s\"/>\n", xmlDecl, nsAttrs, s.base, capList)
	if s.cfg.Layout == IndexSwitch && s.indexed {
		fmt.Fprintf(&b, "  <rs:ln rel=\"index\" href=\"%s%s\"/>\n", s.base, changeIndex)
	}
	fmt.Fprintf(&b, "  %s\n", md)
	s.writeChanges(&b, cs)
	b.WriteString("</urlset>\n")
	return b.Bytes()
}

func (s *Source) writeChanges(b *bytes.Buffer, cs []change) {
	for i := range cs {
		c := &cs[i]
		fmt.Fprintf(b, "  <url>\n    <loc>%s%s</loc>\n", s.base, c.path)
		attrs := fmt.Sprintf(`change="%s"`, c.kind)
		if !c.undated {
			attrs += fmt.Sprintf(` datetime="%s"`, w3c(c.at))
		}
		if c.kind != "deleted" {
			fmt.Fprintf(b, "    <lastmod>%s</lastmod>\n", w3c(c.file.Lastmod))
			attrs += fmt.Sprintf(` hash="md5:%s" length="%d" type="text/plain"`, c.file.md5, len(c.file.Body))
		}
		fmt.Fprintf(b, "    <rs:md %s/>\n  </url>\n", attrs)
	}
}

// changeListIndex names every rotated Change List: closed ones with their
// until, the open one last.
func (s *Source) changeListIndex() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `%s<sitemapindex %s>
  <rs:ln rel="up" href="%s%s"/>
  <rs:md capability="changelist" from="%s"/>
`, xmlDecl, nsAttrs, s.base, capList, w3c(s.start))
	for i, c := range s.closed {
		fmt.Fprintf(&b, "  <sitemap>\n    <loc>%s%s%d.xml</loc>\n    <rs:md capability=\"changelist\" from=\"%s\" until=\"%s\"/>\n  </sitemap>\n",
			s.base, rotatedLists, i+1, w3c(c.from), w3c(c.until))
	}
	fmt.Fprintf(&b, "  <sitemap>\n    <loc>%s%s%d.xml</loc>\n    <rs:md capability=\"changelist\" from=\"%s\"/>\n  </sitemap>\n",
		s.base, rotatedLists, len(s.closed)+1, w3c(s.openAt))
	b.WriteString("</sitemapindex>\n")
	return b.Bytes()
}

// rotatedList is the n-th Change List (from 1): closed with until, or the
// open one.
func (s *Source) rotatedList(n int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s<urlset %s>\n  <rs:ln rel=\"up\" href=\"%s%s\"/>\n", xmlDecl, nsAttrs, s.base, capList)
	if s.cfg.Layout == Index || s.cfg.Layout == RotateIndex {
		fmt.Fprintf(&b, "  <rs:ln rel=\"index\" href=\"%s%s\"/>\n", s.base, changeIndex)
	}
	if n <= len(s.closed) {
		c := s.closed[n-1]
		fmt.Fprintf(&b, "  <rs:md capability=\"changelist\" from=\"%s\" until=\"%s\"/>\n", w3c(c.from), w3c(c.until))
		s.writeChanges(&b, s.changes[c.first:c.end])
	} else {
		fmt.Fprintf(&b, "  <rs:md capability=\"changelist\" from=\"%s\"/>\n", w3c(s.openAt))
		s.writeChanges(&b, s.changes[len(s.changes)-s.nOpen:])
	}
	b.WriteString("</urlset>\n")
	return b.Bytes()
}
