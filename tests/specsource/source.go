// Package specsource is a second ResourceSync Source for tests, written
// from the text of the standard (ANSI/NISO Z39.99-2017, ResourceSync 1.1)
// and not from rsfs's own writer: every document is literal XML. Each
// Layout publishes one arrangement the standard allows and that real
// Sources use: a Change List Index whose children rotate, a today-only
// Change List beside an older Resource List, a Change List without from,
// undated entries, changes dated in the future, a Capability List that
// names a new Change List on each rotation, Change Dumps with
// deletions, and many changes at one instant. It counts the document requests it
// answers.
package specsource

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Layout is an arrangement of documents.
type Layout int

const (
	// Index: the Capability List names a Change List Index; its children
	// rotate every Config.Rotate changes, closed ones carrying until.
	Index Layout = iota + 1
	// Today: a Resource List a week old beside a Change List whose from is
	// today (the day's changes only).
	Today
	// NoFrom: a Change List without from that keeps only the newest
	// Config.Window changes, beside a Resource List of the current state.
	NoFrom
	// Undated: deletions carry neither datetime nor lastmod, and creations
	// carry only an older lastmod (1.1 orders both by place in the list).
	Undated
	// Future: one change is dated 9999-12-31; later changes must still be
	// followed.
	Future
	// CapRotate: the Capability List names only the current Change List, a
	// new file on each rotation, and a Resource List of the state at the
	// rotation; closed Change Lists carry until and an up link.
	CapRotate
	// ChangeDump: changes are published only as Change Dump packages (one
	// per Config.Rotate changes, and one for the changes since), deletions
	// in their manifests; the Resource List is the state at the start.
	ChangeDump
	// V10: what resync-simulator writes in ResourceSync 1.0 mode (and
	// Z39.99-2014): the Change List's rs:md carries from and until (until is
	// "now" at each request), entries are dated only by <lastmod>, with
	// microseconds; the Resource List is the current state at "now".
	V10
	// Rebase: py-resourcesync's resourcelist run. Rebase publishes a new
	// Resource List under a new name and deletes the Change List (its URL
	// answers 404); the Capability List names the new Change List once it
	// has an entry.
	Rebase
	// TwoLists: the Capability List names two Change Lists, a closed one
	// (no entries) and the one that gets every change; FailDoc makes either
	// answer an error.
	TwoLists
	// IndexSwitch: the Capability List names /changelist.xml until
	// NameIndex, then a Change List Index that names that same list.
	IndexSwitch
	// OldList: the Resource List is dated an hour before the start, the
	// Change List's from is the Resource List's at.
	OldList
	// PyOverflow: py-resourcesync's incremental Change Lists: PyRun
	// publishes the difference since the last run; entries carry no
	// datetime, created and updated ones their resource's lastmod, deleted
	// ones no time at all; every Change List's from is the Resource List's
	// completed, also a new list started when the last is full
	// (Config.Rotate entries), and two or more lists are named by an index.
	PyOverflow
	// RotateIndex: a Change List Index whose open child is closed by the
	// clock every Config.RotateEvery (empty or not); change documents carry
	// ETag and Last-Modified and answer 304 to If-None-Match and
	// If-Modified-Since; Resource Lists carry neither.
	RotateIndex
)

func (l Layout) String() string {
	return map[Layout]string{Index: "index", Today: "today", NoFrom: "nofrom", Undated: "undated",
		Future: "future", CapRotate: "caprotate", ChangeDump: "changedump",
		V10: "v10", Rebase: "rebase", TwoLists: "twolists", IndexSwitch: "indexswitch", OldList: "oldlist",
		PyOverflow: "pyoverflow", RotateIndex: "rotateindex"}[l]
}

// Config says what to publish.
type Config struct {
	Layout Layout
	// Files is how many resources exist at the start: /data/fNNN.txt.
	Files int
	// Rotate closes the open Change List after this many changes (Index,
	// CapRotate); default 3.
	Rotate int
	// Window is how many changes a NoFrom list keeps; default 4.
	Window int
	// NonStandardName names the Change List Index in the Capability List
	// with the capability "changelistindex" (as some Sources do).
	NonStandardName bool
	// RotateEvery is how often a RotateIndex closes its open child;
	// default 2 s.
	RotateEvery time.Duration
}

// File is a resource as the Source publishes it now.
type File struct {
	Body    []byte
	Lastmod time.Time
	md5     string
}

func newFile(body []byte, lastmod time.Time) File {
	b := append([]byte(nil), body...)
	return File{Body: b, Lastmod: lastmod, md5: md5hex(b)}
}

// change is one change as published.
type change struct {
	at      time.Time
	kind    string // created, updated, deleted
	path    string
	file    File // the new version (created, updated)
	undated bool // no datetime (and, if deleted, no lastmod)
}

// Source is a running spec Source on 127.0.0.1.
type Source struct {
	cfg   Config
	srv   *http.Server
	base  string
	start time.Time

	mu      sync.Mutex
	files   map[string]File
	version int                    // bumped by every change: rendered documents are cached by it
	cache   map[string]renderedDoc // by path
	listed  map[string]File        // the Resource List's state (static layouts)
	listAt  time.Time
	changes []change
	closed  []closedList // rotated-out Change Lists
	openAt  time.Time    // from of the open Change List
	nOpen   int          // changes in the open Change List

	docs, docBytes atomic.Int64

	// pub is held while documents are rendered and by Publish, so a
	// publication shows all or none of its changes.
	pub sync.Mutex
	stale
}

// closedList is a Change List that no longer grows.
type renderedDoc struct {
	version int
	body    []byte
}

type closedList struct {
	from, until time.Time
	first, end  int // changes[first:end]
}

// Start serves a Source on 127.0.0.1.
func Start(cfg Config) (*Source, error) {
	if cfg.Rotate <= 0 {
		cfg.Rotate = 3
	}
	if cfg.Window <= 0 {
		cfg.Window = 4
	}
	if cfg.RotateEvery <= 0 {
		cfg.RotateEvery = 2 * time.Second
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("specsource: %w", err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	s := &Source{cfg: cfg, base: "http://" + ln.Addr().String(), start: now, files: map[string]File{}}
	created := now.Add(-7 * 24 * time.Hour)
	for i := 0; i < cfg.Files; i++ {
		s.files[fmt.Sprintf("/data/f%03d.txt", i)] = newFile([]byte(fmt.Sprintf("file %d, first version\n", i)), created)
	}
	s.listed = s.copyFiles()
	s.listAt = now
	if cfg.Layout == Today {
		s.listAt = created // a week-old Resource List
	}
	if cfg.Layout == OldList {
		s.listAt = now.Add(-time.Hour)
	}
	s.openAt = now
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

// Close stops the server.
func (s *Source) Close() { s.srv.Close() }

// URL is the Source's base URL, with a trailing slash.
func (s *Source) URL() string { return s.base + "/" }

// DocRequests returns how many document GETs were answered, and their body
// bytes (a 304 has none).
func (s *Source) DocRequests() (n, bytes int64) { return s.docs.Load(), s.docBytes.Load() }

// State returns every resource as published now, by path.
func (s *Source) State() map[string]File {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.copyFiles()
}

func (s *Source) copyFiles() map[string]File {
	out := make(map[string]File, len(s.files))
	for p, f := range s.files {
		out[p] = f
	}
	return out
}

// Paths returns the published paths, sorted.
func (s *Source) Paths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for p := range s.files {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// now is the time of a new change: never before the last one.
func (s *Source) now() time.Time {
	t := time.Now().UTC().Truncate(time.Second)
	if s.cfg.Layout == V10 {
		t = time.Now().UTC().Truncate(time.Microsecond) // Python's time.time()
	}
	if n := len(s.changes); n > 0 && s.changes[n-1].at.After(t) && s.changes[n-1].at.Year() < 9999 {
		t = s.changes[n-1].at
	}
	return t
}

// Create publishes a new resource at path (e.g. "/data/new.txt").
func (s *Source) Create(path string, body []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.files[path]; ok {
		return fmt.Errorf("specsource: %s exists", path)
	}
	at := s.now()
	f := newFile(body, at)
	c := change{at: at, kind: "created", path: path, file: f}
	if s.cfg.Layout == Undated {
		// Only a lastmod, older than the list's from: the resource's own
		// time, not the change's.
		c.undated, f.Lastmod = true, s.start.Add(-time.Hour)
		c.file = f
	}
	s.files[path] = f
	s.record(c)
	return nil
}

// Update publishes a new version of path.
func (s *Source) Update(path string, body []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.files[path]; !ok {
		return fmt.Errorf("specsource: %s does not exist", path)
	}
	at := s.now()
	f := newFile(body, at)
	s.files[path] = f
	s.record(change{at: at, kind: "updated", path: path, file: f})
	return nil
}

// Delete removes path.
func (s *Source) Delete(path string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.files[path]; !ok {
		return fmt.Errorf("specsource: %s does not exist", path)
	}
	delete(s.files, path)
	s.record(change{at: s.now(), kind: "deleted", path: path, undated: s.cfg.Layout == Undated})
	return nil
}

// CreateFuture publishes a new resource whose change is dated 9999-12-31
// (its lastmod is now).
func (s *Source) CreateFuture(path string, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	at := time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
	f := newFile(body, s.now())
	if s.cfg.Layout == V10 {
		f.Lastmod = at // the change's only date
	}
	s.files[path] = f
	s.record(change{at: at, kind: "created", path: path, file: f})
}

// CreateBurst publishes n new resources, /burst/bNNNNNN.txt, all at one
// instant.
func (s *Source) CreateBurst(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	at := s.now()
	for i := 0; i < n; i++ {
		p := fmt.Sprintf("/burst/b%06d.txt", i)
		f := newFile([]byte(p+"\n"), at)
		s.files[p] = f
		s.changes = append(s.changes, change{at: at, kind: "created", path: p, file: f})
	}
	s.nOpen += n
	s.version++
}

// record appends a change, rotating the open Change List when it is full.
func (s *Source) record(c change) {
	s.version++
	switch s.cfg.Layout {
	case PyOverflow:
		return // PyRun publishes the difference
	case RotateIndex:
		s.rotateByClock()
	}
	s.changes = append(s.changes, c)
	s.nOpen++
	if (s.cfg.Layout == Index || s.cfg.Layout == CapRotate || s.cfg.Layout == ChangeDump) && s.nOpen >= s.cfg.Rotate {
		end := len(s.changes)
		until := time.Now().UTC().Truncate(time.Second)
		if c.at.After(until) {
			until = c.at
		}
		s.closed = append(s.closed, closedList{from: s.openAt, until: until, first: end - s.nOpen, end: end})
		s.openAt, s.nOpen = until, 0
		if s.cfg.Layout == CapRotate {
			// Each run publishes a new Resource List beside its new
			// Change List (as DSpace's module does).
			s.listed, s.listAt = s.copyFiles(), until
		}
	}
}

func md5hex(b []byte) string {
	h := md5.Sum(b)
	return hex.EncodeToString(h[:])
}
