package publishers

import (
	"bytes"
	"fmt"
	"sort"
	"sync"
	"time"
)

// POD publishes as the POD aggregator does (pod4lib/aggregator:
// app/views/resourcesync/source_description.xml.builder,
// capabilitylist.xml.builder and normalized_capabilitylist.xml.builder,
// app/views/organizations/index.xml.builder, app/views/streams/
// show.xml.builder and normalized_dump.xml.builder; routes in
// config/routes.rb). Rails' Builder writes every root with
// xsi:schemaLocation first, <rs:md> before <loc> in each entry, hashes
// as md5 hex, and times by iso8601 in UTC. The Source Description names
// three Capability Lists (the uploads, and the normalized dumps in
// MARCXML and in MARC21); each names a Resource List Index (children
// dated by at) of one Resource List per organization's default stream.
// There is no Change List: an upload, or a new delta dump, changes the
// stream's Resource List and its at, and the index's entry for it.
type POD struct {
	*server
	clock clock

	mu    sync.Mutex
	orgs  []*podOrg
	next  int
	start time.Time
}

type podOrg struct {
	slug    string
	stream  int
	updated time.Time
	uploads []podFile
	// full and deltas are the normalized dumps; each has a file per flavor
	// and a delta's deletes file is shared by both flavors.
	full    map[string]podFile
	deltas  []map[string]podFile
	dumpsAt time.Time
}

type podFile struct {
	id      int
	name    string
	body    []byte
	created time.Time
	ctype   string
}

// NewPOD starts a POD aggregator with three organizations, each with a few
// uploads, a full normalized dump and one delta.
func NewPOD() (*POD, error) {
	s, err := newServer()
	if err != nil {
		return nil, err
	}
	p := &POD{server: s, start: time.Now().Add(-3 * time.Hour).Truncate(time.Second)}
	for i, slug := range []string{"stanford", "cornell", "penn"} {
		o := &podOrg{slug: slug, stream: 10 + i, full: map[string]podFile{}}
		t := p.start.Add(time.Duration(i) * time.Minute)
		for k := 0; k < 4+i; k++ {
			o.uploads = append(o.uploads, p.newFile(fmt.Sprintf("%s-%d.mrc", slug, k), "application/marc", t.Add(time.Duration(k)*time.Second)))
		}
		o.updated = t.Add(time.Minute)
		for _, flavor := range []string{"marcxml", "marc21"} {
			o.full[flavor] = p.newFile(fmt.Sprintf("%s-full.%s", slug, ext(flavor)), ctypeOf(flavor), t.Add(2*time.Minute))
		}
		o.deltas = append(o.deltas, p.newDelta(o, t.Add(3*time.Minute)))
		o.dumpsAt = t.Add(3 * time.Minute)
		p.orgs = append(p.orgs, o)
	}
	p.publish()
	return p, nil
}

func ext(flavor string) string {
	if flavor == "marc21" {
		return "mrc.gz"
	}
	return "xml.gz"
}

func ctypeOf(flavor string) string {
	if flavor == "marc21" {
		return "application/gzip"
	}
	return "application/gzip"
}

func (p *POD) newFile(name, ctype string, created time.Time) podFile {
	p.next++
	body := bytes.Repeat([]byte(fmt.Sprintf("%s (blob %d)\n", name, p.next)), 3+p.next%5)
	return podFile{id: p.next, name: name, body: body, created: created, ctype: ctype}
}

func (p *POD) newDelta(o *podOrg, t time.Time) map[string]podFile {
	n := len(o.deltas)
	d := map[string]podFile{"deletes": p.newFile(fmt.Sprintf("%s-delta-%d-deletes.del.txt", o.slug, n), "text/plain", t)}
	for _, flavor := range []string{"marcxml", "marc21"} {
		d[flavor] = p.newFile(fmt.Sprintf("%s-delta-%d.%s", o.slug, n, ext(flavor)), ctypeOf(flavor), t)
	}
	return d
}

// Upload adds a file to the k-th organization's stream.
func (p *POD) Upload(k int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	o := p.orgs[k]
	now := p.clock.now()
	o.uploads = append(o.uploads, p.newFile(fmt.Sprintf("%s-%d.mrc", o.slug, len(o.uploads)), "application/marc", now))
	o.updated = now
	p.publish()
}

// Delta adds a delta dump to the k-th organization's normalized dumps.
func (p *POD) Delta(k int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	o := p.orgs[k]
	now := p.clock.now()
	o.deltas = append(o.deltas, p.newDelta(o, now))
	o.dumpsAt = now
	p.publish()
}

const podRoot = `<?xml version="1.0" encoding="UTF-8"?>
<%s xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://www.sitemaps.org/schemas/sitemap/0.9 http://www.sitemaps.org/schemas/sitemap/0.9/sitemap.xsd" xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
`

func iso(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func (p *POD) publish() {
	root := p.URL()
	var b bytes.Buffer
	fmt.Fprintf(&b, podRoot, "urlset")
	b.WriteString("  <rs:md capability=\"description\"/>\n")
	for _, u := range []string{"/.well-known/resourcesync/capabilitylist", "/.well-known/resourcesync/normalized-capabilitylist/marcxml", "/.well-known/resourcesync/normalized-capabilitylist/marc21"} {
		fmt.Fprintf(&b, "  <url>\n    <loc>%s%s</loc>\n    <rs:md capability=\"capabilitylist\"/>\n  </url>\n", root, u)
	}
	b.WriteString("</urlset>\n")
	p.setDoc("/.well-known/resourcesync", b.Bytes())
	p.setDoc("/.well-known/resourcesync/capabilitylist", p.capabilityList(root, "/organizations/resourcelist"))
	p.setDoc("/organizations/resourcelist", p.index(root, "", root+"/.well-known/resourcesync/capabilitylist"))
	for _, flavor := range []string{"marcxml", "marc21"} {
		p.setDoc("/.well-known/resourcesync/normalized-capabilitylist/"+flavor, p.capabilityList(root, "/organizations/normalized_resourcelist/"+flavor))
		p.setDoc("/organizations/normalized_resourcelist/"+flavor, p.index(root, flavor, root+"/.well-known/resourcesync/normalized-capabilitylist/"+flavor))
	}
	for _, o := range p.orgs {
		p.setDoc(fmt.Sprintf("/organizations/%s/streams/%d/resourcelist", o.slug, o.stream), p.streamList(root, o))
		for _, flavor := range []string{"marcxml", "marc21"} {
			p.setDoc(fmt.Sprintf("/organizations/%s/streams/%d/normalized_resourcelist/%s", o.slug, o.stream, flavor), p.normalizedList(root, o, flavor))
		}
		for _, f := range p.filesOf(o) {
			p.setFile(fmt.Sprintf("/file/%d/%s", f.id, f.name), &File{Body: f.body, Lastmod: f.created})
		}
	}
}

func (p *POD) filesOf(o *podOrg) []podFile {
	out := append([]podFile(nil), o.uploads...)
	for _, f := range o.full {
		out = append(out, f)
	}
	for _, d := range o.deltas {
		for _, f := range d {
			out = append(out, f)
		}
	}
	return out
}

func (p *POD) capabilityList(root, list string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, podRoot, "urlset")
	fmt.Fprintf(&b, "  <rs:ln rel=\"up\" href=\"%s/.well-known/resourcesync\"/>\n  <rs:md capability=\"capabilitylist\"/>\n", root)
	fmt.Fprintf(&b, "  <url>\n    <loc>%s%s</loc>\n    <rs:md capability=\"resourcelist\"/>\n  </url>\n</urlset>\n", root, list)
	return b.Bytes()
}

// index is organizations/index.xml.builder: a sitemapindex whose entries
// carry <rs:md at> before <loc>.
func (p *POD) index(root, flavor, up string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, podRoot, "sitemapindex")
	fmt.Fprintf(&b, "  <rs:ln rel=\"up\" href=\"%s\"/>\n  <rs:md capability=\"resourcelist\" at=\"%s\"/>\n", up, iso(time.Now()))
	for _, o := range p.orgs {
		at, loc := o.updated, fmt.Sprintf("%s/organizations/%s/streams/%d/resourcelist", root, o.slug, o.stream)
		if flavor != "" {
			at, loc = o.dumpsAt, fmt.Sprintf("%s/organizations/%s/streams/%d/normalized_resourcelist/%s", root, o.slug, o.stream, flavor)
		}
		fmt.Fprintf(&b, "  <sitemap>\n    <rs:md at=\"%s\"/>\n    <loc>%s</loc>\n  </sitemap>\n", iso(at), loc)
	}
	b.WriteString("</sitemapindex>\n")
	return b.Bytes()
}

func (p *POD) entry(b *bytes.Buffer, root string, f podFile) {
	fmt.Fprintf(b, "  <url>\n    <rs:md hash=\"md5:%s\" type=\"%s\" length=\"%d\"/>\n    <loc>%s/file/%d/%s</loc>\n    <lastmod>%s</lastmod>\n  </url>\n",
		md5hex(f.body), f.ctype, len(f.body), root, f.id, f.name, iso(f.created))
}

// streamList is streams/show.xml.builder: the uploads by created_at.
func (p *POD) streamList(root string, o *podOrg) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, podRoot, "urlset")
	fmt.Fprintf(&b, "  <rs:ln rel=\"up\" href=\"%s/organizations/resourcelist\"/>\n  <rs:md capability=\"resourcelist\" at=\"%s\"/>\n", root, iso(o.updated))
	files := append([]podFile(nil), o.uploads...)
	sort.SliceStable(files, func(i, j int) bool { return files[i].created.Before(files[j].created) })
	for _, f := range files {
		p.entry(&b, root, f)
	}
	b.WriteString("</urlset>\n")
	return b.Bytes()
}

// normalizedList is streams/normalized_dump.xml.builder: the full dump,
// then each delta and its deletes.
func (p *POD) normalizedList(root string, o *podOrg, flavor string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, podRoot, "urlset")
	fmt.Fprintf(&b, "  <rs:ln rel=\"up\" href=\"%s/organizations/normalized_resourcelist\"/>\n  <rs:md capability=\"resourcelist\" at=\"%s\"/>\n", root, iso(o.dumpsAt))
	p.entry(&b, root, o.full[flavor])
	for _, d := range o.deltas {
		p.entry(&b, root, d[flavor])
		p.entry(&b, root, d["deletes"])
	}
	b.WriteString("</urlset>\n")
	return b.Bytes()
}

// State is what a mount must show.
func (p *POD) State() map[string]File { return p.state() }
