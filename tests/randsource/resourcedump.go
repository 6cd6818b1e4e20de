package randsource

import (
	"archive/zip"
	"bytes"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Resource Dumps (1.1 §11): the state the Resource List publishes, at its
// time, as ZIP packages with a manifest.xml at the top (§11.2, Example
// 17), named by a Resource Dump (§11.1, Example 16) whose entries link
// each package's manifest, also served on its own, by rel="contents".
// With Config.PerItemDumps each resource is a package of its own, as
// WEKO3 writes them. A publication's packages live under a directory of
// their own (/resourcedump/gN/), so a package's URL never serves other
// bytes; the packages of older publications answer 404.

const (
	resDump    = "/resourcedump.xml"
	resDumpDir = "/resourcedump/"
)

// dumpGen is one publication of the Resource Dump: its packages and their
// manifests, by path.
type dumpGen struct {
	at       time.Time
	n        int
	packages []string          // in order
	bodies   map[string][]byte // packages and manifests, by path
}

// resourceDump returns the Resource Dump of the state last published,
// building it once per publication. s.mu is held.
func (s *Source) resourceDump() *dumpGen {
	if s.dump != nil && s.dump.at.Equal(s.listAt) {
		return s.dump
	}
	g := &dumpGen{at: s.listAt, n: 1, bodies: map[string][]byte{}}
	if s.dump != nil {
		g.n = s.dump.n + 1
	}
	var paths []string
	for p := range s.listed {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	groups := [][]string{paths}
	if s.cfg.PerItemDumps {
		groups = nil
		for _, p := range paths {
			groups = append(groups, []string{p})
		}
	}
	for k, group := range groups {
		dir := fmt.Sprintf("%sg%d/p%d", resDumpDir, g.n, k+1)
		man, zipped := s.resourceDumpPackage(group)
		g.bodies[dir+".zip"], g.bodies[dir+"-manifest.xml"] = zipped, man
		g.packages = append(g.packages, dir)
	}
	s.dump = g
	return g
}

// resourceDumpPackage builds one package of the listed resources paths:
// its manifest, and the ZIP holding it and their bodies. s.mu is held.
func (s *Source) resourceDumpPackage(paths []string) (manifest, zipped []byte) {
	var man bytes.Buffer
	fmt.Fprintf(&man, `%s<urlset %s>
  <rs:ln rel="up" href="%s%s"/>
  <rs:md capability="resourcedump-manifest" at="%s" completed="%s"/>
`, xmlDecl, nsAttrs, s.base, capList, w3c(s.listAt), w3c(s.listAt))
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	members := map[string][]byte{}
	var names []string
	for _, p := range paths {
		v := s.listed[p]
		fmt.Fprintf(&man, `  <url>
    <loc>%s%s</loc>
    <lastmod>%s</lastmod>
    <rs:md hash="md5:%s" length="%d" type="text/plain" path="/resources%s"/>
  </url>
`, s.base, p, w3c(v.lastmod), v.md5, len(v.body), p)
		name := "resources" + p
		members[name] = v.body
		names = append(names, name)
	}
	man.WriteString("</urlset>\n")
	write := func(name string, body []byte, method uint16) {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: method})
		if err == nil {
			_, err = w.Write(body)
		}
		if err != nil {
			panic(fmt.Sprintf("randsource: writing a package in memory: %v", err))
		}
	}
	write("manifest.xml", man.Bytes(), zip.Deflate)
	for i, name := range names {
		write(name, members[name], []uint16{zip.Store, zip.Deflate}[i%2])
	}
	if err := zw.Close(); err != nil {
		panic(fmt.Sprintf("randsource: writing a package in memory: %v", err))
	}
	return man.Bytes(), zb.Bytes()
}

// resourceDumpDoc is the Resource Dump: one entry per package, with its
// manifest linked by rel="contents". s.mu is held.
func (s *Source) resourceDumpDoc() []byte {
	g := s.resourceDump()
	var b bytes.Buffer
	fmt.Fprintf(&b, `%s<urlset %s>
  <rs:ln rel="up" href="%s%s"/>
  <rs:md capability="resourcedump" at="%s" completed="%s"/>
`, xmlDecl, nsAttrs, s.base, capList, w3c(g.at), w3c(g.at))
	for _, p := range g.packages {
		fmt.Fprintf(&b, `  <url>
    <loc>%s%s.zip</loc>
    <rs:md type="application/zip" length="%d" at="%s" completed="%s"/>
    <rs:ln rel="contents" href="%s%s-manifest.xml" type="application/xml"/>
  </url>
`, s.base, p, len(g.bodies[p+".zip"]), w3c(g.at), w3c(g.at), s.base, p)
	}
	b.WriteString("</urlset>\n")
	return b.Bytes()
}

// namesResourceDump reports whether the Capability List names a Resource
// Dump, and hasResourceList whether it names the Resource List.
func (c *Config) namesResourceDump() bool { return c.DumpOnly || c.PerItemDumps || c.Dumps404 }
func (c *Config) hasResourceList() bool   { return !c.DumpOnly }

// renderDump returns a Resource Dump document or package at path, if the
// Source publishes one there now: the Resource Dump answers 404 with
// Config.Dumps404. s.mu is held.
func (s *Source) renderDump(path string) (body []byte, ctype string, ok bool) {
	switch {
	case path == resDump && s.cfg.namesResourceDump() && !s.cfg.Dumps404:
		return s.resourceDumpDoc(), "application/xml", true
	case strings.HasPrefix(path, resDumpDir) && s.cfg.namesResourceDump() && !s.cfg.Dumps404:
		b, found := s.resourceDump().bodies[path]
		if !found {
			return nil, "", false
		}
		if strings.HasSuffix(path, ".zip") {
			return b, "application/zip", true
		}
		return b, "application/xml", true
	}
	return nil, "", false
}
