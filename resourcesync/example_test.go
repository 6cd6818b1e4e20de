package resourcesync_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"rsfs/resourcesync"
)

// A Resource List written by hand after example 14 of ResourceSync 1.1
// (section 10.1). The second resource is changed to show what the reader
// does: a relative <loc>, a lastmod in another zone, no hash, and a mirror.
const resourceList = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="http://example.com/dataset1/capabilitylist.xml"/>
  <rs:md capability="resourcelist" at="2013-01-03T09:00:00Z"
         completed="2013-01-03T09:01:00Z"/>
  <url>
    <loc>http://example.com/res1</loc>
    <lastmod>2013-01-02T13:00:00Z</lastmod>
    <rs:md hash="md5:1584abdf8ebdc9802ac0c6a7402c03b6" length="8876" type="text/html"/>
  </url>
  <url>
    <loc>res2.pdf</loc>
    <lastmod>2013-01-02T14:00:00+01:00</lastmod>
    <rs:md length="14599" type="application/pdf"/>
    <rs:ln rel="duplicate" pri="1" href="http://mirror.example.com/res2.pdf"/>
  </url>
</urlset>`

// Read a Resource List one entry at a time. Memory does not grow with the
// number of entries; relative locations are resolved against the document's
// URL, times are in UTC and an absent length is NoLength.
func ExampleReader() {
	r, err := resourcesync.NewReader(strings.NewReader(resourceList),
		"http://example.com/resourcelist.xml", resourcesync.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	h, err := r.Header()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(h.Root, h.Capability(), h.MD.At.Format(time.RFC3339), h.MD.Completed.Format(time.RFC3339))
	fmt.Println("up:", h.Links[0].Href)
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(e.Loc, e.Lastmod.Format(time.RFC3339), e.MD.Length, e.MD.Type, e.MD.Hashes)
		for _, l := range e.Links {
			fmt.Println("  ", l.Rel, l.Pri, l.Href)
		}
	}
	fmt.Println("warnings:", len(r.Warnings()))
	// Output:
	// urlset resourcelist 2013-01-03T09:00:00Z 2013-01-03T09:01:00Z
	// up: http://example.com/dataset1/capabilitylist.xml
	// http://example.com/res1 2013-01-02T13:00:00Z 8876 text/html [md5:1584abdf8ebdc9802ac0c6a7402c03b6]
	// http://example.com/res2.pdf 2013-01-02T13:00:00Z 14599 application/pdf []
	//    duplicate 1 http://mirror.example.com/res2.pdf
	// warnings: 0
}

// Write a Resource List. The Writer streams: the header first, then one
// entry per Write; Close ends the document. Times are written in UTC and
// absent values (zero times, NoLength, empty strings) are left out.
func ExampleWriter() {
	w := resourcesync.NewWriter(os.Stdout, &resourcesync.Header{
		Root: resourcesync.URLSet,
		MD: resourcesync.MD{
			Capability: resourcesync.CapResourceList,
			At:         time.Date(2013, 1, 3, 9, 0, 0, 0, time.UTC),
			Length:     resourcesync.NoLength,
		},
		Links: []resourcesync.Link{{Rel: "up", Href: "http://example.com/dataset1/capabilitylist.xml", Length: resourcesync.NoLength}},
	})
	err := w.Write(&resourcesync.Entry{
		Loc:     "http://example.com/res1",
		Lastmod: time.Date(2013, 1, 2, 13, 0, 0, 0, time.UTC),
		MD: resourcesync.MD{
			Hashes: []resourcesync.Hash{{Alg: "md5", Value: "1584abdf8ebdc9802ac0c6a7402c03b6"}},
			Length: 8876,
			Type:   "text/html",
		},
	})
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// <?xml version="1.0" encoding="UTF-8"?>
	// <urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
	//   <rs:ln rel="up" href="http://example.com/dataset1/capabilitylist.xml"/>
	//   <rs:md capability="resourcelist" at="2013-01-03T09:00:00Z"/>
	//   <url>
	//     <loc>http://example.com/res1</loc>
	//     <lastmod>2013-01-02T13:00:00Z</lastmod>
	//     <rs:md hash="md5:1584abdf8ebdc9802ac0c6a7402c03b6" length="8876" type="text/html"/>
	//   </url>
	// </urlset>
}

// A Change List Index, example 20 of ResourceSync 1.1 (section 12.2). It is a
// <sitemapindex>: each entry is a Change List, with the span of changes it
// covers in rs:md from and until; the open one has no until.
const changeListIndex = `<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
              xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="http://example.com/dataset1/capabilitylist.xml"/>
  <rs:md capability="changelist" from="2013-01-01T00:00:00Z"/>
  <sitemap>
    <loc>http://example.com/20130101-changelist.xml</loc>
    <rs:md from="2013-01-01T00:00:00Z" until="2013-01-02T00:00:00Z"/>
  </sitemap>
  <sitemap>
    <loc>http://example.com/20130102-changelist.xml</loc>
    <rs:md from="2013-01-02T00:00:00Z"
           until="2013-01-03T00:00:00Z"/>
  </sitemap>
  <sitemap>
    <loc>http://example.com/20130103-changelist.xml</loc>
    <rs:md from="2013-01-03T00:00:00Z"/>
  </sitemap>
</sitemapindex>`

// Read a Change List Index whole with Parse. The header's Root says it is an
// index; its capability is that of the documents it lists.
func ExampleParse_changeListIndex() {
	doc, err := resourcesync.Parse(strings.NewReader(changeListIndex),
		"http://example.com/changelist-index.xml", resourcesync.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(doc.Header.Root, doc.Header.Capability())
	for _, e := range doc.Entries {
		until := "open"
		if !e.MD.Until.IsZero() {
			until = e.MD.Until.Format(time.RFC3339)
		}
		fmt.Println(e.Loc, e.MD.From.Format(time.RFC3339), until)
	}
	// Output:
	// sitemapindex changelist
	// http://example.com/20130101-changelist.xml 2013-01-01T00:00:00Z 2013-01-02T00:00:00Z
	// http://example.com/20130102-changelist.xml 2013-01-02T00:00:00Z 2013-01-03T00:00:00Z
	// http://example.com/20130103-changelist.xml 2013-01-03T00:00:00Z open
}

// A document that cannot be read fails with a *ParseError naming the
// document, line and column; its cause is one of the package's Err values,
// for errors.Is. Deviations the reader tolerates are Warnings instead.
func ExampleParseError() {
	const bad = `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><lastmod>2013-01-02</lastmod></url>
</urlset>`
	_, err := resourcesync.Parse(strings.NewReader(bad), "http://example.com/rl.xml", resourcesync.Options{})
	fmt.Println(err)
	fmt.Println(errors.Is(err, resourcesync.ErrStructure))

	const tolerated = `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>http://example.com/a</loc><lastmod>2013-01-02T13:00:00</lastmod></url>
</urlset>`
	doc, err := resourcesync.Parse(strings.NewReader(tolerated), "http://example.com/rl.xml", resourcesync.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(doc.Entries[0].Lastmod.Format(time.RFC3339))
	for _, w := range doc.Warnings {
		fmt.Println(w)
	}
	// Output:
	// http://example.com/rl.xml:2:3: <url> without <loc>: not a Sitemap document
	// true
	// 2013-01-02T13:00:00Z
	// http://example.com/rl.xml:2: datetime without time zone: 2013-01-02T13:00:00 [ResourceSync 1.1 §7: values are W3C Datetime, whose times carry a zone designator]; UTC assumed
}
