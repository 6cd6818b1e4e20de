package randsource

import (
	"archive/zip"
	"bytes"
	"fmt"
	"sort"
	"strings"
	"time"
)

// The documents, as literal XML after the standard's examples: the Source
// Description (1.1 Example 2 and §11), the Capability List (§9), the
// Resource List (§10.1, Example 1), Change Lists and the Change List Index
// (§12.1, 12.2, Examples 19–21; the 1.0 draft's Example 6.1 for entries
// dated by lastmod), the Change Dump and its packages' manifests (§13,
// Examples 22–23).

const (
	xmlDecl = `<?xml version="1.0" encoding="UTF-8"?>` + "\n"
	nsAttrs = `xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"`
)

// Document paths.
const (
	wellKnown   = "/.well-known/resourcesync"
	capList     = "/capabilitylist.xml"
	resList     = "/resourcelist.xml"
	changeIndex = "/changelist-index.xml"
	listDir     = "/changelists/"
	changeDump  = "/changedump.xml"
	pkgDir      = "/changedumps/"
)

func listPath(n int) string { return fmt.Sprintf("%scl%d.xml", listDir, n) }
func pkgPath(n int) string  { return fmt.Sprintf("%sp%d.zip", pkgDir, n) }

// render returns the document at path as published now, or reports none.
// s.mu is held.
func (s *Source) render(path string) ([]byte, bool) {
	switch {
	case path == wellKnown:
		return s.description(), true
	case path == capList:
		return s.capabilityList(), true
	case path == resList && s.cfg.hasResourceList():
		return s.resourceList(), true
	case path == changeIndex && s.indexMode:
		return s.changeListIndex(), true
	case path == changeDump && len(s.pkgs) > 0:
		return s.changeDumpDoc(), true
	case strings.HasPrefix(path, listDir):
		var n int
		if _, err := fmt.Sscanf(path, listDir+"cl%d.xml", &n); err != nil || listPath(n) != path || n < 1 || n > len(s.lists) || s.lists[n-1].removed {
			return nil, false
		}
		return s.changeList(s.lists[n-1]), true
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
`, xmlDecl, nsAttrs, s.base, wellKnown)
	if s.cfg.hasResourceList() {
		fmt.Fprintf(&b, "  <url>\n    <loc>%s%s</loc>\n    <rs:md capability=\"resourcelist\"/>\n  </url>\n", s.base, resList)
	}
	if s.cfg.namesResourceDump() {
		fmt.Fprintf(&b, "  <url>\n    <loc>%s%s</loc>\n    <rs:md capability=\"resourcedump\"/>\n  </url>\n", s.base, resDump)
	}
	cl := listPath(s.open().n)
	if s.indexMode {
		cl = changeIndex
	}
	fmt.Fprintf(&b, "  <url>\n    <loc>%s%s</loc>\n    <rs:md capability=\"changelist\"/>\n  </url>\n", s.base, cl)
	if len(s.pkgs) > 0 {
		fmt.Fprintf(&b, "  <url>\n    <loc>%s%s</loc>\n    <rs:md capability=\"changedump\"/>\n  </url>\n", s.base, changeDump)
	}
	b.WriteString("</urlset>\n")
	return b.Bytes()
}

// resourceList lists the state last published, at its time.
func (s *Source) resourceList() []byte {
	var paths []string
	for p := range s.listed {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var b bytes.Buffer
	fmt.Fprintf(&b, `%s<urlset %s>
  <rs:ln rel="up" href="%s%s"/>
  <rs:md capability="resourcelist" at="%s" completed="%s"/>
`, xmlDecl, nsAttrs, s.base, capList, w3c(s.listAt), w3c(s.listAt))
	for _, p := range paths {
		v := s.listed[p]
		fmt.Fprintf(&b, `  <url>
    <loc>%s%s</loc>
    <lastmod>%s</lastmod>
    <rs:md hash="md5:%s" length="%d" type="text/plain"/>
  </url>
`, s.base, p, w3c(v.lastmod), v.md5, len(v.body))
	}
	b.WriteString("</urlset>\n")
	return b.Bytes()
}

// changeList renders one Change List: from, until once closed, an index
// link while the index is named, its changes in order.
func (s *Source) changeList(l *changeList) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s<urlset %s>\n  <rs:ln rel=\"up\" href=\"%s%s\"/>\n", xmlDecl, nsAttrs, s.base, capList)
	if s.indexMode {
		fmt.Fprintf(&b, "  <rs:ln rel=\"index\" href=\"%s%s\"/>\n", s.base, changeIndex)
	}
	switch {
	case s.cfg.OnlyFrom:
		fmt.Fprintf(&b, "  <rs:md capability=\"changelist\" from=\"%s\"/>\n", w3c(s.onlyFrom(l)))
	case l.until.IsZero():
		fmt.Fprintf(&b, "  <rs:md capability=\"changelist\" from=\"%s\"/>\n", w3c(l.from))
	default:
		fmt.Fprintf(&b, "  <rs:md capability=\"changelist\" from=\"%s\" until=\"%s\"/>\n", w3c(l.from), w3c(l.until))
	}
	for k := range l.changes {
		i := l.changes[k]
		if s.cfg.NewestFirst {
			i = l.changes[len(l.changes)-1-k]
		}
		s.writeEntry(&b, &s.changes[i], "", l.dated, true)
	}
	b.WriteString("</urlset>\n")
	return b.Bytes()
}

// onlyFrom is a Change List's from as Hyrax writes it: the time of its
// first change, or the epoch while it holds none.
func (s *Source) onlyFrom(l *changeList) time.Time {
	if len(l.changes) == 0 {
		return time.Unix(0, 0)
	}
	return s.changes[l.changes[0]].at
}

// writeEntry writes one change: loc, lastmod (a deletion's only in a list
// dated by lastmod, where it is the time of the deletion, as in the 1.0
// draft's Example 6.1), and rs:md with change, datetime when dated, and
// hash, length, type (and path, in a manifest) of a new version. In a
// Change List (list), a publisher's ways apply: the change attribute left
// out (Config.NoChange), a deletion undated (Config.UndatedDeletions).
func (s *Source) writeEntry(b *bytes.Buffer, c *change, memberPath string, dated, list bool) {
	fmt.Fprintf(b, "  <url>\n    <loc>%s%s</loc>\n", s.base, c.path)
	var attrs []string
	if !list || !c.unsaid {
		attrs = append(attrs, fmt.Sprintf(`change="%s"`, c.kind))
	}
	undated := list && c.kind == "deleted" && s.cfg.undatedDeletions()
	if dated && !undated {
		attrs = append(attrs, fmt.Sprintf(`datetime="%s"`, w3c(c.at)))
	}
	switch {
	case c.kind != "deleted":
		fmt.Fprintf(b, "    <lastmod>%s</lastmod>\n", w3c(c.v.lastmod))
		attrs = append(attrs, fmt.Sprintf(`hash="md5:%s" length="%d" type="text/plain"`, c.v.md5, len(c.v.body)))
		if memberPath != "" {
			attrs = append(attrs, fmt.Sprintf(`path="%s"`, memberPath))
		}
	case !dated && !undated:
		fmt.Fprintf(b, "    <lastmod>%s</lastmod>\n", w3c(c.at))
	}
	if len(attrs) > 0 {
		fmt.Fprintf(b, "    <rs:md %s/>\n", strings.Join(attrs, " "))
	}
	b.WriteString("  </url>\n")
}

// changeListIndex names every Change List not removed: closed ones with
// from and until, the open one with from only (Example 20).
func (s *Source) changeListIndex() []byte {
	var live []*changeList
	for _, l := range s.lists {
		if !l.removed {
			live = append(live, l)
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `%s<sitemapindex %s>
  <rs:ln rel="up" href="%s%s"/>
  <rs:md capability="changelist" from="%s"/>
`, xmlDecl, nsAttrs, s.base, capList, w3c(live[0].from))
	for _, l := range live {
		if l.until.IsZero() || s.cfg.OnlyFrom {
			fmt.Fprintf(&b, "  <sitemap>\n    <loc>%s%s</loc>\n    <rs:md from=\"%s\"/>\n  </sitemap>\n", s.base, listPath(l.n), w3c(l.from))
		} else {
			fmt.Fprintf(&b, "  <sitemap>\n    <loc>%s%s</loc>\n    <rs:md from=\"%s\" until=\"%s\"/>\n  </sitemap>\n", s.base, listPath(l.n), w3c(l.from), w3c(l.until))
		}
	}
	b.WriteString("</sitemapindex>\n")
	return b.Bytes()
}

// changeDumpDoc names every package with its length and interval
// (Example 22); the Change Dump itself stays open (no until).
func (s *Source) changeDumpDoc() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `%s<urlset %s>
  <rs:ln rel="up" href="%s%s"/>
  <rs:md capability="changedump" from="%s"/>
`, xmlDecl, nsAttrs, s.base, capList, w3c(s.pkgs[0].from))
	for _, p := range s.pkgs {
		fmt.Fprintf(&b, `  <url>
    <loc>%s%s</loc>
    <lastmod>%s</lastmod>
    <rs:md type="application/zip" length="%d" from="%s" until="%s"/>
  </url>
`, s.base, pkgPath(p.n), w3c(p.until), len(p.body), w3c(p.from), w3c(p.until))
	}
	b.WriteString("</urlset>\n")
	return b.Bytes()
}

// packageBytes builds a Change Dump package (§13.2): manifest.xml at the
// top, a Change Dump Manifest with the package's interval, and one member
// per created or updated version, at the path its entry names (a leading
// slash, relative to the package root); deletions are in the manifest
// only. Entries carry datetime unless the Source dates by lastmod only.
// s.mu is held.
func (s *Source) packageBytes(p *pkg) []byte {
	dated := s.cfg.Dating != Dating10
	var man bytes.Buffer
	fmt.Fprintf(&man, `%s<urlset %s>
  <rs:ln rel="up" href="%s%s"/>
  <rs:md capability="changedump-manifest" from="%s" until="%s"/>
`, xmlDecl, nsAttrs, s.base, capList, w3c(p.from), w3c(p.until))
	type member struct {
		name string
		body []byte
	}
	var members []member
	for i := p.first; i < p.end; i++ {
		c := &s.changes[i]
		name := ""
		if c.kind != "deleted" {
			name = fmt.Sprintf("/resources/%d%s", i, c.path)
			members = append(members, member{name[1:], c.v.body})
		}
		s.writeEntry(&man, c, name, dated, false)
	}
	man.WriteString("</urlset>\n")
	members = append([]member{{"manifest.xml", man.Bytes()}}, members...)
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	for i, m := range members {
		method := zip.Store
		if i%2 == 1 {
			method = zip.Deflate
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: m.name, Method: method})
		if err == nil {
			_, err = w.Write(m.body)
		}
		if err != nil {
			panic(fmt.Sprintf("randsource: writing a package in memory: %v", err))
		}
	}
	if err := zw.Close(); err != nil {
		panic(fmt.Sprintf("randsource: writing a package in memory: %v", err))
	}
	return zb.Bytes()
}

// Documents returns every document published now (not the packages), for
// a failure report.
func (s *Source) Documents() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	paths := []string{wellKnown, capList, resList, resDump, changeIndex, changeDump}
	for _, l := range s.lists {
		paths = append(paths, listPath(l.n))
	}
	var b strings.Builder
	for _, p := range paths {
		if body, ok := s.render(p); ok {
			fmt.Fprintf(&b, "--- %s\n%s", p, body)
		} else if strings.HasPrefix(p, listDir) {
			fmt.Fprintf(&b, "--- %s: 404 (removed)\n", p)
		}
	}
	for _, p := range s.pkgs {
		zr, err := zip.NewReader(bytes.NewReader(p.body), int64(len(p.body)))
		if err != nil {
			continue
		}
		for _, f := range zr.File {
			if f.Name != "manifest.xml" {
				continue
			}
			rc, err := f.Open()
			if err != nil {
				continue
			}
			var m bytes.Buffer
			m.ReadFrom(rc)
			rc.Close()
			fmt.Fprintf(&b, "--- %s manifest.xml\n%s", pkgPath(p.n), m.Bytes())
		}
	}
	return b.String()
}
