package publishers

import (
	"bytes"
	"fmt"
	"sort"
	"sync"
	"time"
)

// Hyrax publishes as Hyrax's ResourceSync writers do (samvera/hyrax,
// app/services/hyrax/resource_sync/: SourceDescriptionWriter,
// CapabilityListWriter, ResourceListWriter, ChangeListWriter; routes
// /.well-known/resourcesync, /capabilitylist, /resourcelist and
// /changelist, without .xml). Nokogiri's to_xml writes <rs:ln> before
// <rs:md>. The Change List lists every public object once, newest first,
// created when system_modified equals system_create and updated otherwise,
// never a deletion, no hashes, no index whatever its length; its only
// header attribute is from, the oldest modification, or
// 1970-01-01T00:00:00Z when there is none. The Resource List carries at,
// now. Dates are Solr's: milliseconds when they are not zero.
type Hyrax struct {
	*server
	clock clock

	mu    sync.Mutex
	items map[string]*hyraxItem
	next  int
}

type hyraxItem struct {
	route    string // "concern/generic_works", "concern/file_sets", "collections"
	id       string
	created  time.Time
	modified time.Time
	version  int
}

// NewHyrax starts a Hyrax Source holding works generic works, each with a
// file set, and two collections when works > 0: 2×works+2 objects. Their times lie in the hour
// before now, a few milliseconds apart, and every third work was updated
// after its creation.
func NewHyrax(works int) (*Hyrax, error) {
	s, err := newServer()
	if err != nil {
		return nil, err
	}
	h := &Hyrax{server: s, items: map[string]*hyraxItem{}}
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	step := time.Hour / time.Duration(2*works+2)
	for i := 0; i < works; i++ {
		t := base.Add(time.Duration(2*i) * step).Truncate(time.Millisecond)
		w := h.add("concern/generic_works", t)
		if i%3 == 0 {
			w.modified = t.Add(step).Truncate(time.Millisecond)
			w.version++
		}
		h.add("concern/file_sets", t.Add(step/2).Truncate(time.Millisecond))
	}
	if works > 0 {
		h.add("collections", base)
		h.add("collections", base.Add(time.Millisecond))
	}
	h.publish()
	return h, nil
}

func (h *Hyrax) add(route string, t time.Time) *hyraxItem {
	h.next++
	it := &hyraxItem{route: route, id: fmt.Sprintf("%09x", 0x4b29b5000+h.next), created: t, modified: t}
	h.items[it.id] = it
	return it
}

// CreateWork deposits a new public work, as of now, and republishes.
func (h *Hyrax) CreateWork() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	it := h.add("concern/generic_works", h.clock.now().Add(137*time.Millisecond))
	h.publish()
	return it.route + "/" + it.id
}

// UpdateAll edits every work whose place among the works, in id order,
// is a multiple of every, as of now, and republishes. It returns how many it edited.
func (h *Hyrax) UpdateAll(every int) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	t := h.clock.now()
	n, works := 0, 0
	for _, it := range h.sorted() {
		if it.route != "concern/generic_works" {
			continue
		}
		if works%every == 0 {
			it.modified, it.version = t, it.version+1
			n++
		}
		works++
	}
	h.publish()
	return n
}

func (h *Hyrax) sorted() []*hyraxItem {
	out := make([]*hyraxItem, 0, len(h.items))
	for _, it := range h.items {
		out = append(out, it)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

func (h *Hyrax) body(it *hyraxItem) []byte {
	return []byte(fmt.Sprintf("<html><body>%s %s, version %d</body></html>\n", it.route, it.id, it.version))
}

// publish renders the documents and resources from h.items.
func (h *Hyrax) publish() {
	root := h.URL()
	items := h.sorted()
	for _, it := range items {
		h.setFile("/"+it.route+"/"+it.id, &File{Body: h.body(it), Lastmod: it.modified.Truncate(time.Second)})
	}
	h.setDoc("/.well-known/resourcesync", []byte(`<?xml version="1.0"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="`+root+`/capabilitylist"/>
  <rs:md capability="description"/>
  <url>
    <loc>`+root+`/capabilitylist</loc>
    <rs:md capability="capabilitylist"/>
  </url>
</urlset>
`))
	h.setDoc("/capabilitylist", []byte(`<?xml version="1.0"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="`+root+`/.well-known/resourcesync"/>
  <rs:md capability="capabilitylist"/>
  <url>
    <loc>`+root+`/resourcelist</loc>
    <rs:md capability="resourcelist"/>
  </url>
  <url>
    <loc>`+root+`/changelist</loc>
    <rs:md capability="changelist"/>
  </url>
</urlset>
`))
	h.setDoc("/resourcelist", h.resourceList(root, items))
	h.setDoc("/changelist", h.changeList(root, items))
}

// resourceList writes collections, then works, then file sets, as
// ResourceListWriter's build_collections, build_works and build_files.
func (h *Hyrax) resourceList(root string, items []*hyraxItem) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="` + root + `/capabilitylist"/>
  <rs:md capability="resourcelist" at="` + time.Now().UTC().Format(time.RFC3339) + `"/>
`)
	for _, route := range []string{"collections", "concern/generic_works", "concern/file_sets"} {
		for _, it := range items {
			if it.route == route {
				fmt.Fprintf(&b, "  <url>\n    <loc>%s/%s/%s</loc>\n    <lastmod>%s</lastmod>\n  </url>\n", root, it.route, it.id, solrDate(it.modified))
			}
		}
	}
	b.WriteString("</urlset>\n")
	return b.Bytes()
}

// changeList writes every object newest first (sort system_modified_dtsi
// desc), as ChangeListWriter#build_changes.
func (h *Hyrax) changeList(root string, items []*hyraxItem) []byte {
	byModified := append([]*hyraxItem(nil), items...)
	sort.SliceStable(byModified, func(i, j int) bool { return byModified[i].modified.After(byModified[j].modified) })
	from := "1970-01-01T00:00:00Z"
	if n := len(byModified); n > 0 {
		from = solrDate(byModified[n-1].modified)
	}
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="` + root + `/capabilitylist"/>
  <rs:md capability="changelist" from="` + from + `"/>
`)
	for _, it := range byModified {
		change := "updated"
		if it.modified.Equal(it.created) {
			change = "created"
		}
		fmt.Fprintf(&b, "  <url>\n    <loc>%s/%s/%s</loc>\n    <lastmod>%s</lastmod>\n    <rs:md change=\"%s\"/>\n  </url>\n", root, it.route, it.id, solrDate(it.modified), change)
	}
	b.WriteString("</urlset>\n")
	return b.Bytes()
}

// solrDate is how Solr returns a date field: UTC, milliseconds only when
// they are not zero.
func solrDate(t time.Time) string {
	t = t.UTC()
	if t.Nanosecond()/1e6 == 0 {
		return t.Format("2006-01-02T15:04:05Z")
	}
	return t.Format("2006-01-02T15:04:05.000Z")
}

// State is what a mount must show.
func (h *Hyrax) State() map[string]File { return h.state() }
