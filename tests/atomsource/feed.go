package atomsource

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"time"
)

// feedTemplate is an Atom Feed Document as the specification's examples
// write them. The subscription document gives absolute hrefs; archive
// documents give hrefs relative to an xml:base on the feed and write their
// times in +10:00, so a consumer is held to resolving and converting both.
var feedTemplate = template.Must(template.New("feed").Parse(`<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"
      xmlns:fh="http://purl.org/syndication/history/1.0"{{if .Base}}
      xml:base="{{.Base}}"{{end}}>
  <link rel="current" href="{{.Current}}"/>
  <link rel="self" href="{{.Self}}"/>{{if .Prev}}
  <link rel="prev-archive" href="{{.Prev}}"/>{{end}}{{if .Next}}
  <link rel="next-archive" href="{{.Next}}"/>{{end}}
  <updated>{{.Updated}}</updated>
  <id>urn:uuid:3ce05531-b9c0-4a7d-8966-4d9a9a3a0695</id>
  <title>atomsource</title>{{if .Archive}}
  <fh:archive/>{{end}}{{if .Complete}}
  <fh:complete/>{{end}}
{{range .Entries}}  <entry>
    <title>{{html .Title}}</title>
{{if .ID}}    <id>{{html .ID}}</id>
{{end}}{{if .Updated}}    <updated>{{.Updated}}</updated>{{end}}{{if .Deletion}}
    <content/>{{else}}{{range $i, $l := .Links}}
    <link{{if $i}} rel="alternate"{{end}} type="{{html $l.Type}}" href="{{html $l.Href}}"/>{{end}}{{end}}
  </entry>
{{end}}</feed>
`))

type feedData struct {
	Base, Current, Self, Prev, Next string
	Updated                         string
	Archive, Complete               bool
	Entries                         []entryData
}

type entryData struct {
	Title, ID, Updated string
	Deletion           bool
	Links              []linkData
}

type linkData struct{ Type, Href string }

var plus10 = time.FixedZone("+10:00", 10*3600)

// render writes a document. The first link of an entry has no rel (it
// means alternate), the others rel="alternate", as in the examples.
func render(d feedData) []byte {
	var b bytes.Buffer
	if err := feedTemplate.Execute(&b, d); err != nil {
		panic(err) // the template and its data are ours
	}
	return b.Bytes()
}

func entriesData(entries []entry, hrefPrefix string, zone *time.Location) []entryData {
	out := make([]entryData, 0, len(entries))
	for _, e := range entries {
		ed := entryData{Title: e.title, ID: e.id, Deletion: e.deletion}
		if !e.noUpdated {
			ed.Updated = e.updated.In(zone).Format(time.RFC3339)
		}
		for _, r := range e.reps {
			ed.Links = append(ed.Links, linkData{Type: r.Type, Href: hrefOf(e.name, r, hrefPrefix)})
		}
		out = append(out, ed)
	}
	return out
}

// hrefOf is the href a representation is published with: its own Href,
// else prefix + NAME.EXT.
func hrefOf(name string, r Rep, prefix string) string {
	if r.Href != "" {
		return r.Href
	}
	return prefix + name + "." + r.Ext
}

// subscriptionLocked renders the subscription document, newest entry
// first.
func (s *Source) subscriptionLocked() []byte {
	d := feedData{Current: s.URL(), Self: s.URL(), Updated: s.clock.Format(time.RFC3339)}
	if s.cfg.Complete {
		d.Complete = true
		d.Entries = s.completeEntriesLocked()
		return render(d)
	}
	entries := slices.Clone(s.sub.entries)
	slices.Reverse(entries)
	d.Entries = entriesData(entries, s.srv.URL+"/rec/", time.UTC)
	if n := len(s.archives); n > 0 {
		d.Prev = s.ArchiveURL(n)
	}
	return render(d)
}

// completeEntriesLocked lists the pool, one active entry per record.
func (s *Source) completeEntriesLocked() []entryData {
	names := make([]string, 0, len(s.records))
	for n := range s.records {
		names = append(names, n)
	}
	slices.Sort(names)
	entries := make([]entry, 0, len(names))
	for _, n := range names {
		r := s.records[n]
		entries = append(entries, entry{id: ID(n), title: r.title, updated: r.updated, reps: r.reps, name: n})
	}
	return entriesData(entries, s.srv.URL+"/rec/", time.UTC)
}

// archiveLocked renders archive n (1-based), oldest entry first.
func (s *Source) archiveLocked(n int) []byte {
	doc := s.archives[n-1]
	if doc.rendered != nil {
		return doc.rendered
	}
	last := doc.entries[len(doc.entries)-1].updated
	d := feedData{
		Base:    "/rec/",
		Current: s.URL(),
		Self:    s.ArchiveURL(n),
		Updated: last.In(plus10).Format(time.RFC3339),
		Archive: true,
		Entries: entriesData(doc.entries, "", plus10),
	}
	if n > 1 {
		d.Prev = fmt.Sprintf("../archive/%d", n-1) // relative to xml:base /rec/
	}
	if p, ok := s.prevOver[n]; ok {
		d.Prev = s.srv.URL + p
	}
	if n < len(s.archives) {
		d.Next = s.ArchiveURL(n + 1)
	}
	doc.rendered = render(d)
	return doc.rendered
}

// response is what serve answers, decided under the lock and written
// after it is released.
type response struct {
	status int
	header map[string]string
	body   []byte
}

func (s *Source) serve(w http.ResponseWriter, req *http.Request) {
	s.mu.Lock()
	resp := s.respondLocked(req)
	s.mu.Unlock()
	for k, v := range resp.header {
		w.Header().Set(k, v)
	}
	w.WriteHeader(resp.status)
	w.Write(resp.body)
}

// gzipLocked compresses a document's body when the feed is served gzipped.
func (s *Source) gzipLocked(body []byte) []byte {
	if !s.cfg.Gzip {
		return body
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(body)
	zw.Close()
	return buf.Bytes()
}

func text(status int) response {
	return response{status: status, header: map[string]string{"Content-Type": "text/plain"},
		body: []byte(http.StatusText(status) + "\n")}
}

func (s *Source) respondLocked(req *http.Request) response {
	path := req.URL.Path
	s.requests[path]++
	if status, ok := s.fail[path]; ok {
		return text(status)
	}
	switch {
	case path == "/feed":
		return s.subscriptionResponseLocked(req)
	case strings.HasPrefix(path, "/archive/"):
		n, err := strconv.Atoi(strings.TrimPrefix(path, "/archive/"))
		if err != nil || n < 1 || n > len(s.archives) {
			return text(http.StatusNotFound)
		}
		return response{status: http.StatusOK, header: map[string]string{"Content-Type": atomType}, body: s.gzipLocked(s.archiveLocked(n))}
	case strings.HasPrefix(path, "/rec/"):
		return s.repResponseLocked(strings.TrimPrefix(path, "/rec/"))
	}
	return text(http.StatusNotFound)
}

const atomType = "application/atom+xml"

// subscriptionResponseLocked answers a conditional GET by its ETag.
func (s *Source) subscriptionResponseLocked(req *http.Request) response {
	etag := fmt.Sprintf(`"v%d"`, s.version)
	if req.Header.Get("If-None-Match") == etag {
		return response{status: http.StatusNotModified, header: map[string]string{"ETag": etag}}
	}
	return response{status: http.StatusOK, header: map[string]string{"ETag": etag, "Content-Type": atomType},
		body: s.gzipLocked(s.subscriptionLocked())}
}

// repResponseLocked serves NAME.EXT: the current bytes, 410 for a deleted
// record, 404 for what never was (or a format the record no longer has).
func (s *Source) repResponseLocked(file string) response {
	dot := strings.LastIndexByte(file, '.')
	if dot < 0 {
		return text(http.StatusNotFound)
	}
	name, ext := file[:dot], file[dot+1:]
	r, ok := s.records[name]
	if !ok {
		if s.gone[name] {
			return text(http.StatusGone)
		}
		return text(http.StatusNotFound)
	}
	for _, rep := range r.reps {
		if rep.Ext == ext {
			return response{status: http.StatusOK, body: rep.Body, header: map[string]string{
				"Content-Type": rep.Type, "Last-Modified": r.updated.Format(http.TimeFormat)}}
		}
	}
	return text(http.StatusNotFound)
}
