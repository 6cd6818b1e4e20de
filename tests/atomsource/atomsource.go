// Package atomsource is a test producer of the Atom Feed Protocol for
// Metadata Harvesting 1.0 (Atom-PMH): an HTTP server on 127.0.0.1 that
// publishes a pool of metadata records as an archived feed (a subscription
// document chained by prev-archive to archive documents, RFC 5005) or as
// one complete document (fh:complete), and serves each record's
// representations.
//
// Its documents are written by hand from the specification's examples
// (templates in feed.go), never by rsfs code, so that the consumer is tested
// against the protocol and not against itself.
//
// Mutations (Create, Update, Delete) behave as a producer that tracks
// deletions: each adds an entry to the subscription document (an update
// leaves the older entry where it is, as a historical entry; a deletion
// adds a deletion entry with an empty atom:content), and when the
// subscription document holds PerDocument entries it becomes an archive
// document and a new, empty subscription document links to it. In a
// complete feed the one document always lists the current pool, and a
// deleted record simply disappears.
//
// Times come from a clock of the source's own that moves one minute per
// mutation, so entries and documents are strictly ordered and tests never
// depend on the wall clock.
package atomsource

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"time"
)

// Rep is one representation of a record: its media type, the extension
// of its URL (/rec/NAME.EXT) and its bytes.
type Rep struct {
	Type string
	Ext  string
	Body []byte
	// Href, if set, is published as the link's href instead of the URL
	// of /rec/NAME.EXT (e.g. a URL on another origin); the source does
	// not serve it.
	Href string
}

// Config shapes a Source.
type Config struct {
	// Complete publishes one complete document instead of an archived feed.
	Complete bool
	// PerDocument is the number of entries after which the subscription
	// document becomes an archive; 0 means 10.
	PerDocument int
	// Gzip serves the feed's documents gzip-compressed (as their bytes,
	// not as a Content-Encoding), as a Sitemap may be.
	Gzip bool
}

// Source is a running producer.
type Source struct {
	srv *httptest.Server
	cfg Config

	mu       sync.Mutex
	clock    time.Time
	records  map[string]*record // the current pool, by name
	gone     map[string]bool    // names of deleted records: their URLs answer 410
	sub      *document
	archives []*document // archives[0] is the oldest, /archive/1
	version  int         // of the subscription document, for its ETag
	requests map[string]int
	fail     map[string]int // path → status to answer with
	prevOver map[int]string // archive number → prev-archive path published instead
}

type record struct {
	name    string
	title   string
	updated time.Time
	reps    []Rep
}

// document is one Atom Feed Document's entries, in the order written.
type document struct {
	entries  []entry
	rendered []byte // the cached archive document; nil to render
}

type entry struct {
	id, title string
	updated   time.Time
	deletion  bool
	noUpdated bool  // published without atom:updated (Malformed)
	reps      []Rep // types and extensions only matter
	name      string
}

// Start starts a Source with an empty pool. Close it when done.
func Start(cfg Config) *Source {
	if cfg.PerDocument <= 0 {
		cfg.PerDocument = 10
	}
	s := &Source{
		cfg:      cfg,
		clock:    time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC),
		records:  make(map[string]*record),
		gone:     make(map[string]bool),
		sub:      &document{},
		requests: make(map[string]int),
		fail:     make(map[string]int),
		prevOver: make(map[int]string),
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Close stops the server.
func (s *Source) Close() { s.srv.Close() }

// URL is the subscription document's URL.
func (s *Source) URL() string { return s.srv.URL + "/feed" }

// ArchiveURL is the URL of archive document n (1 is the oldest).
func (s *Source) ArchiveURL(n int) string { return fmt.Sprintf("%s/archive/%d", s.srv.URL, n) }

// RepURL is the URL of a record's representation.
func (s *Source) RepURL(name, ext string) string { return s.srv.URL + "/rec/" + name + "." + ext }

// ID is the atom:id of the record name.
func ID(name string) string { return "urn:x-atomsource:" + name }

// Create adds a record to the pool.
func (s *Source) Create(name, title string, reps ...Rep) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.records[name]; ok {
		return fmt.Errorf("atomsource: record %s exists", name)
	}
	return s.publishLocked(name, title, reps)
}

// Update replaces a record's title and representations (a format may be
// added or removed).
func (s *Source) Update(name, title string, reps ...Rep) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.records[name]; !ok {
		return fmt.Errorf("atomsource: no record %s", name)
	}
	return s.publishLocked(name, title, reps)
}

func (s *Source) publishLocked(name, title string, reps []Rep) error {
	if len(reps) == 0 {
		return fmt.Errorf("atomsource: record %s without representations", name)
	}
	s.clock = s.clock.Add(time.Minute)
	r := &record{name: name, title: title, updated: s.clock, reps: slices.Clone(reps)}
	s.records[name] = r
	delete(s.gone, name)
	s.addEntryLocked(entry{id: ID(name), title: title, updated: s.clock, reps: r.reps, name: name})
	return nil
}

// Malformed publishes, in the subscription document, an entry of an active
// record named name that lacks missing ("id" or "updated"): the
// specification requires both, so the entry is not in the pool.
func (s *Source) Malformed(name, missing string, reps ...Rep) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock = s.clock.Add(time.Minute)
	e := entry{id: ID(name), title: "malformed " + name, updated: s.clock, reps: slices.Clone(reps), name: name}
	switch missing {
	case "id":
		e.id = ""
	case "updated":
		e.noUpdated = true
	default:
		panic("atomsource: Malformed: missing must be id or updated")
	}
	s.addEntryLocked(e)
}

// Delete removes a record from the pool: a deletion entry in an archived
// feed, its absence in a complete one. Its URLs answer 410 Gone.
func (s *Source) Delete(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.records[name]
	if !ok {
		return fmt.Errorf("atomsource: no record %s", name)
	}
	s.clock = s.clock.Add(time.Minute)
	delete(s.records, name)
	s.gone[name] = true
	s.addEntryLocked(entry{id: ID(name), title: r.title + " (deleted)", updated: s.clock, deletion: true, name: name})
	return nil
}

// addEntryLocked writes e to the subscription document, first rotating it
// into the archives if it is full.
func (s *Source) addEntryLocked(e entry) {
	s.version++
	if s.cfg.Complete {
		return // the complete document is rendered from the pool
	}
	if len(s.sub.entries) >= s.cfg.PerDocument {
		s.archives = append(s.archives, s.sub)
		s.sub = &document{}
	}
	s.sub.entries = append(s.sub.entries, e)
}

// Documents is the number of documents in the chain, the subscription
// document included.
func (s *Source) Documents() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.archives) + 1
}

// Pool returns the current pool: for each atom:id, the URLs of its
// representations with their media types ("TYPE URL"), sorted.
func (s *Source) Pool() map[string][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	pool := make(map[string][]string, len(s.records))
	for name, r := range s.records {
		var reps []string
		for _, rep := range r.reps {
			reps = append(reps, rep.Type+" "+hrefOf(name, rep, s.srv.URL+"/rec/"))
		}
		slices.Sort(reps)
		pool[ID(name)] = reps
	}
	return pool
}

// Requests returns the number of requests for path ("/feed",
// "/archive/3") since the last ResetRequests.
func (s *Source) Requests(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[path]
}

// DocumentRequests returns the number of requests for documents (the
// subscription and archives) since the last ResetRequests.
func (s *Source) DocumentRequests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for p, c := range s.requests {
		if p == "/feed" || strings.HasPrefix(p, "/archive/") {
			n += c
		}
	}
	return n
}

// ResetRequests sets the request counts to zero.
func (s *Source) ResetRequests() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.requests)
}

// Fail makes path answer status (0 to heal it).
func (s *Source) Fail(path string, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if status == 0 {
		delete(s.fail, path)
	} else {
		s.fail[path] = status
	}
}

// SetPrevArchive makes archive n publish prev-archive to path (an archive
// path, or "/feed") instead of archive n-1: a broken producer's cycle.
func (s *Source) SetPrevArchive(n int, path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prevOver[n] = path
	if n >= 1 && n <= len(s.archives) {
		s.archives[n-1].rendered = nil
	}
}

// Backdate adds a record as a producer that rewrites its archives would:
// its entry goes into archive n (1 is the oldest), dated one second before
// that archive's first entry, where a consumer that stops at its harvest
// mark does not look unless it notices that the archive changed.
func (s *Source) Backdate(n int, name, title string, reps ...Rep) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n < 1 || n > len(s.archives) {
		return fmt.Errorf("atomsource: no archive %d", n)
	}
	if _, ok := s.records[name]; ok {
		return fmt.Errorf("atomsource: record %s exists", name)
	}
	doc := s.archives[n-1]
	at := doc.entries[0].updated.Add(-time.Second)
	r := &record{name: name, title: title, updated: at, reps: slices.Clone(reps)}
	s.records[name] = r
	doc.entries = append(doc.entries, entry{id: ID(name), title: title, updated: at, reps: r.reps, name: name})
	doc.rendered = nil
	return nil
}
