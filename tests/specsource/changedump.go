package specsource

import (
	"archive/zip"
	"bytes"
	"fmt"
	"strings"
	"time"
)

// Change Dump paths.
const (
	changeDump = "/changedump.xml"
	dumpDir    = "/dumps/"
)

// batch is a run of changes published as one Change Dump package.
type batch struct {
	from, until time.Time
	first, end  int
}

// batches are the closed packages and, while it has changes, the open one.
func (s *Source) batches() []batch {
	var out []batch
	for _, c := range s.closed {
		out = append(out, batch(c))
	}
	if s.nOpen > 0 {
		end := len(s.changes)
		out = append(out, batch{s.openAt, s.changes[end-1].at, end - s.nOpen, end})
	}
	return out
}

func packagePath(b batch) string { return fmt.Sprintf("%sp%d-%d.zip", dumpDir, b.first, b.end) }

// changeDumpDoc names every package, each with its interval and length.
func (s *Source) changeDumpDoc() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `%s<urlset %s>
  <rs:ln rel="up" href="%s%s"/>
  <rs:md capability="changedump" from="%s"/>
`, xmlDecl, nsAttrs, s.base, capList, w3c(s.start))
	for _, bt := range s.batches() {
		pkg := s.packageBytes(bt)
		fmt.Fprintf(&b, `  <url>
    <loc>%s%s</loc>
    <lastmod>%s</lastmod>
    <rs:md type="application/zip" length="%d" from="%s" until="%s"/>
  </url>
`, s.base, packagePath(bt), w3c(bt.until), len(pkg), w3c(bt.from), w3c(bt.until))
	}
	b.WriteString("</urlset>\n")
	return b.Bytes()
}

// packageAt returns the package at path, if it is one published now.
func (s *Source) packageAt(path string) ([]byte, bool) {
	if !strings.HasPrefix(path, dumpDir) {
		return nil, false
	}
	for _, bt := range s.batches() {
		if packagePath(bt) == path {
			return s.packageBytes(bt), true
		}
	}
	return nil, false
}

// packageBytes builds a Change Dump package: manifest.xml (a Change Dump
// Manifest) and one member per created or updated resource; deletions are
// in the manifest only.
func (s *Source) packageBytes(bt batch) []byte {
	key := packagePath(bt)
	if d, ok := s.cache[key]; ok {
		return d.body // a package's changes never change
	}
	var man bytes.Buffer
	fmt.Fprintf(&man, `%s<urlset %s>
  <rs:ln rel="up" href="%s%s"/>
  <rs:md capability="changedump-manifest" from="%s" until="%s"/>
`, xmlDecl, nsAttrs, s.base, capList, w3c(bt.from), w3c(bt.until))
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	type member struct {
		name string
		body []byte
	}
	var members []member
	for i := bt.first; i < bt.end; i++ {
		c := &s.changes[i]
		fmt.Fprintf(&man, "  <url>\n    <loc>%s%s</loc>\n", s.base, c.path)
		if c.kind == "deleted" {
			fmt.Fprintf(&man, "    <rs:md change=\"deleted\" datetime=\"%s\"/>\n  </url>\n", w3c(c.at))
			continue
		}
		name := fmt.Sprintf("/resources/%d%s", i, c.path)
		fmt.Fprintf(&man, "    <lastmod>%s</lastmod>\n    <rs:md change=%q datetime=\"%s\" hash=\"md5:%s\" length=\"%d\" type=\"text/plain\" path=%q/>\n  </url>\n",
			w3c(c.file.Lastmod), c.kind, w3c(c.at), c.file.md5, len(c.file.Body), name)
		members = append(members, member{name[1:], c.file.Body})
	}
	man.WriteString("</urlset>\n")
	members = append([]member{{"manifest.xml", man.Bytes()}}, members...)
	for _, m := range members {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: m.name, Method: zip.Store})
		if err == nil {
			_, err = w.Write(m.body)
		}
		if err != nil {
			panic(fmt.Sprintf("specsource: writing a package in memory: %v", err))
		}
	}
	if err := zw.Close(); err != nil {
		panic(fmt.Sprintf("specsource: writing a package in memory: %v", err))
	}
	if s.cache == nil {
		s.cache = map[string]renderedDoc{}
	}
	s.cache[key] = renderedDoc{body: zb.Bytes()}
	return zb.Bytes()
}
