// Package randsource is a ResourceSync Source for randomized tests: a
// seeded math/rand picks a sequence of operations (creations, updates and
// deletions of resources, Change List rotations, a Change List Index
// replacing the Change List, lists removed once a Resource List covers
// them, Resource Lists republished, Change Dump packages) and the Source
// keeps the truth, the state its resources are in now, for the test to
// compare a mounted tree against.
//
// Every document is literal XML written from the text of the standard
// (ANSI/NISO Z39.99-2017, ResourceSync 1.1, and the 1.0 draft for entries
// dated only by lastmod); nothing here imports rsfs, so that the Source and
// the client agreeing proves something.
//
// The Source models a sane publisher:
//
//   - every change is listed in a Change List (or Change List Index child)
//     the Capability List names, or in a Change List no longer named that
//     a Resource List republished after it covers;
//   - datetimes have second precision and never go back; several changes
//     may share an instant, but never two changes to one resource (a
//     destination tells changes at one instant apart by URI and change
//     type; 1.0 by loc and lastmod), and nothing is dated at or before an
//     instant a document already closed (a list's until, a Resource List's
//     at, a package's until): "until" and "at" promise every change up to
//     that time. So the Source's clock may run a second or two ahead of the
//     wall clock;
//   - a list is removed (404) only once it is closed and a Resource List
//     published at or after its until covers its changes.
package randsource

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"math/rand"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// Dating is how change entries are dated.
type Dating int

const (
	// Dating11: every entry carries rs:md datetime (1.1); a resource's
	// lastmod may be earlier than its change's datetime.
	Dating11 Dating = iota
	// Dating10: entries carry only lastmod, the time of the change (1.0
	// draft, Example 6.1), under a from/until header.
	Dating10
	// DatingMixed: each Change List is dated one way or the other, chosen
	// when it opens (a Source upgraded while running).
	DatingMixed
)

func (d Dating) String() string {
	return map[Dating]string{Dating11: "1.1", Dating10: "1.0", DatingMixed: "mixed"}[d]
}

// Config says what to publish at the start.
type Config struct {
	// Seed seeds the operations RandomOp picks.
	Seed int64
	// Files is how many resources exist at the start.
	Files int
	// Dating is how change entries are dated.
	Dating Dating
	// Index starts with the Capability List naming a Change List Index
	// (else it names the open Change List itself).
	Index bool
	// SharedBoundary lets changes fall at the instant a Change List (or
	// package) closes: a closed list's until is the time of its last
	// change, and the next list's from is the same instant, as in 1.1
	// Example 20 taken literally. Inclusive from and until then make that
	// instant belong to both lists while only the first holds its changes,
	// so a destination that has seen some of them cannot tell from the
	// next list alone that the others are missing. Off, the Source closes a
	// list a second after its last change if need be, and no change ever
	// falls on a boundary.
	SharedBoundary bool

	// What real publishers write, each off by default (issue 32):
	//
	// UndatedDeletions writes a deletion in a Change List with neither
	// datetime nor lastmod, as py-resourcesync does; the entry is dated by
	// its place in the list (1.1 Example 19). Ignored with NewestFirst,
	// where an entry's place says nothing of its time.
	UndatedDeletions bool
	// NewestFirst writes a Change List's entries newest first, as Hyrax
	// does.
	NewestFirst bool
	// NoChange leaves the change attribute out of about half the Change
	// List entries, as CORE does (1.1 §12.1 requires it).
	NoChange bool
	// OnlyFrom writes a Change List's header with from alone, never
	// until, as Hyrax does: from is its first change's time, or
	// 1970-01-01T00:00:00Z while it holds none.
	OnlyFrom bool
	// Dumps404: the Capability List names a Resource Dump that answers 404
	// (the resync library's archives fixtures).
	Dumps404 bool
	// DumpOnly publishes the Resource List's state as a Resource Dump
	// instead: the Capability List names no Resource List.
	DumpOnly bool
	// PerItemDumps publishes a Resource Dump (beside the Resource List,
	// or, with DumpOnly, instead of it) of a package per resource, each
	// with its own manifest linked by rel="contents", as WEKO3 does.
	PerItemDumps bool
}

// undatedDeletions reports whether deletions are written undated.
func (c *Config) undatedDeletions() bool { return c.UndatedDeletions && !c.NewestFirst }

// File is a resource as the Source publishes it now.
type File struct {
	Body    []byte
	Lastmod time.Time
}

type version struct {
	body    []byte
	lastmod time.Time
	md5     string
}

// change is one change as published.
type change struct {
	at   time.Time
	kind string // created, updated, deleted
	path string
	v    version // created, updated
	// dated: the entry carries datetime (1.1); else it is dated by lastmod
	// (1.0), which is then the change's time (at) for every kind.
	dated bool
	// unsaid: its Change List entry leaves out the change attribute
	// (Config.NoChange).
	unsaid bool
}

// changeList is one Change List file, /changelists/clN.xml.
type changeList struct {
	n           int
	from, until time.Time // until zero while open
	dated       bool      // 1.1 entries
	changes     []int     // indexes into Source.changes
	removed     bool      // no longer named, answers 404
}

// pkg is one Change Dump package, /changedumps/pN.zip.
type pkg struct {
	n           int
	from, until time.Time
	first, end  int // changes[first:end]
	body        []byte
}

type docState struct {
	etag string
	mod  time.Time
}

// Source is a running random Source on 127.0.0.1.
type Source struct {
	cfg   Config
	rng   *rand.Rand
	srv   *http.Server
	base  string
	start time.Time

	mu        sync.Mutex
	files     map[string]version
	lastAt    map[string]time.Time // each path's last change time (deleted ones too)
	lastMod   map[string]time.Time // each path's last lastmod (deleted ones too)
	changes   []change
	lists     []*changeList // the last is open
	indexMode bool          // the Capability List names the Change List Index
	listed    map[string]version
	listAt    time.Time
	pkgs      []*pkg
	minNext   time.Time // the earliest time the next change may carry
	docs      map[string]docState
	dump      *dumpGen // the Resource Dump of listed, built when first asked for
	log       []string
	nBody     int
}

// pathPool is where resources live: a few directories, a few names, so
// that deleted paths are created again and directories empty and fill.
var pathPool = func() []string {
	var out []string
	for _, dir := range []string{"/r/", "/r/a/", "/r/a/b/", "/r/c/"} {
		for i := 0; i < 6; i++ {
			out = append(out, fmt.Sprintf("%sf%d.txt", dir, i))
		}
	}
	return out
}()

// Start serves a Source on 127.0.0.1.
func Start(cfg Config) (*Source, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("randsource: %w", err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	s := &Source{
		cfg: cfg, rng: rand.New(rand.NewSource(cfg.Seed)), base: "http://" + ln.Addr().String(), start: now,
		files: map[string]version{}, lastAt: map[string]time.Time{}, lastMod: map[string]time.Time{},
		docs: map[string]docState{}, indexMode: cfg.Index,
	}
	perm := s.rng.Perm(len(pathPool))
	for i := 0; i < cfg.Files && i < len(pathPool); i++ {
		p := pathPool[perm[i]]
		lm := now.Add(-time.Duration(1+s.rng.Intn(100*3600)) * time.Second)
		s.files[p] = s.newVersion(s.randomBody(-1), lm)
		s.lastMod[p] = lm
	}
	// The first Resource List is the state at the start; the first Change
	// List starts there.
	s.listed, s.listAt = s.copyFiles(), now
	s.lists = []*changeList{{n: 1, from: now, dated: s.newListDated()}}
	s.minNext = now.Add(time.Second)
	s.logf("start: %d files, dating %s, %s, %s; Resource List at %s; Change List 1 (%s) from %s",
		len(s.files), cfg.Dating, cfg.quirks(), map[bool]string{true: "Capability List names the Change List Index", false: "Capability List names the Change List"}[cfg.Index],
		w3c(now), datingName(s.lists[0].dated), w3c(now))
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

// quirks names the publishers' ways the Source writes its Change Lists in.
func (c *Config) quirks() string {
	var q []string
	if c.undatedDeletions() {
		q = append(q, "undated deletions")
	}
	if c.NewestFirst {
		q = append(q, "newest first")
	}
	if c.NoChange {
		q = append(q, "entries without change")
	}
	if c.OnlyFrom {
		q = append(q, "only from")
	}
	if c.Dumps404 {
		q = append(q, "a Resource Dump answering 404")
	}
	if c.DumpOnly {
		q = append(q, "a Resource Dump instead of the Resource List")
	}
	if c.PerItemDumps {
		q = append(q, "a Resource Dump package per resource")
	}
	if len(q) == 0 {
		return "Change Lists as the standard writes them"
	}
	return "Change Lists with " + strings.Join(q, ", ")
}

// Close stops the server.
func (s *Source) Close() { s.srv.Close() }

// URL is the Source's base URL, with a trailing slash.
func (s *Source) URL() string { return s.base + "/" }

// Truth returns every resource as published now, by URL path
// ("/r/a/f1.txt").
func (s *Source) Truth() map[string]File {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]File, len(s.files))
	for p, v := range s.files {
		out[p] = File{Body: append([]byte(nil), v.body...), Lastmod: v.lastmod}
	}
	return out
}

// Log returns the operations done so far, one a line.
func (s *Source) Log() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.log...)
}

func (s *Source) logf(format string, args ...any) string {
	line := fmt.Sprintf(format, args...)
	s.log = append(s.log, fmt.Sprintf("%s %s", time.Now().UTC().Format("15:04:05.000"), line))
	return line
}

func datingName(dated bool) string {
	if dated {
		return "1.1 datetime"
	}
	return "1.0 lastmod"
}

func (s *Source) newListDated() bool {
	switch s.cfg.Dating {
	case Dating10:
		return false
	case DatingMixed:
		return s.rng.Intn(2) == 0
	}
	return true
}

func (s *Source) copyFiles() map[string]version {
	out := make(map[string]version, len(s.files))
	for p, v := range s.files {
		out[p] = v
	}
	return out
}

func (s *Source) newVersion(body []byte, lastmod time.Time) version {
	h := md5.Sum(body)
	return version{body: body, lastmod: lastmod, md5: hex.EncodeToString(h[:])}
}

// randomBody makes a body of random length (or of length n when n >= 0):
// mostly small, sometimes empty, sometimes past 64 KiB.
func (s *Source) randomBody(n int) []byte {
	if n < 0 {
		switch r := s.rng.Intn(100); {
		case r < 3:
			n = 0
		case r < 60:
			n = 1 + s.rng.Intn(200)
		case r < 93:
			n = 200 + s.rng.Intn(5000)
		default:
			n = 60000 + s.rng.Intn(80000)
		}
	}
	s.nBody++
	b := make([]byte, n)
	head := fmt.Sprintf("body %d\n", s.nBody)
	for i := range b {
		if i < len(head) {
			b[i] = head[i]
		} else if s.rng.Intn(60) == 0 {
			b[i] = '\n'
		} else {
			b[i] = byte('a' + s.rng.Intn(26))
		}
	}
	return b
}

func wall() time.Time { return time.Now().UTC().Truncate(time.Second) }

// clock is the time of the next event: now, but never before minNext.
func (s *Source) clock() time.Time {
	t := wall()
	if t.Before(s.minNext) {
		t = s.minNext
	}
	return t
}

// Ahead is how far the Source's clock runs ahead of the wall clock (a
// caller may wait it out to keep datetimes from the future).
func (s *Source) Ahead() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Until(s.minNext)
}

// changeAt is the time of a change to path: never at or before the path's
// last change, and from then on the earliest time of the next change.
func (s *Source) changeAt(path string) time.Time {
	t := s.clock()
	if last, ok := s.lastAt[path]; ok && !t.After(last) {
		t = last.Add(time.Second)
	}
	s.minNext = t
	s.lastAt[path] = t
	return t
}

// closeAt is the time a Change List or package closes (until, and the
// from of the next): after every change so far (unless SharedBoundary),
// before every later one. A change at that very instant would belong to
// both intervals, from and until being inclusive.
func (s *Source) closeAt() time.Time {
	t := s.clock()
	if n := len(s.changes); n > 0 && !s.cfg.SharedBoundary && !t.After(s.changes[n-1].at) {
		t = s.changes[n-1].at.Add(time.Second)
	}
	s.minNext = t.Add(time.Second)
	return t
}

// snapshotAt is the time of a Resource List (at): at or after every change
// so far, before every later one.
func (s *Source) snapshotAt() time.Time {
	t := s.clock()
	s.minNext = t.Add(time.Second)
	return t
}

func (s *Source) open() *changeList { return s.lists[len(s.lists)-1] }

func (s *Source) record(c change) {
	ol := s.open()
	c.dated = ol.dated
	c.unsaid = s.cfg.NoChange && s.rng.Intn(2) == 0
	if !c.dated && c.kind != "deleted" {
		// 1.0: lastmod is the change's time.
		c.v.lastmod = c.at
	}
	s.changes = append(s.changes, c)
	ol.changes = append(ol.changes, len(s.changes)-1)
	if c.kind == "deleted" {
		delete(s.files, c.path)
	} else {
		s.files[c.path] = c.v
		s.lastMod[c.path] = c.v.lastmod
	}
}

// lastmodFor is a new version's lastmod at change time at: in a list dated
// by datetime it may be a few seconds earlier (the resource's own time, as
// in 1.1 Example 19), but always after the path's previous lastmod.
func (s *Source) lastmodFor(path string, at time.Time) time.Time {
	lm := at
	if s.open().dated && s.rng.Intn(3) == 0 {
		lm = at.Add(-time.Duration(1+s.rng.Intn(5)) * time.Second)
	}
	if prev, ok := s.lastMod[path]; ok && !lm.After(prev) {
		lm = prev.Add(time.Second)
	}
	if lm.After(at) {
		lm = at
	}
	return lm
}

// Create publishes a new resource at path.
func (s *Source) Create(path string, body []byte) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.files[path]; ok {
		return "", fmt.Errorf("randsource: %s exists", path)
	}
	at := s.changeAt(path)
	c := change{at: at, kind: "created", path: path, v: s.newVersion(body, s.lastmodFor(path, at))}
	s.record(c)
	return s.logf("create %s: %d bytes, md5 %.8s, lastmod %s, at %s (Change List %d%s)", path, len(body), c.v.md5, w3c(s.files[path].lastmod), w3c(at), s.open().n, s.lastUnsaid()), nil
}

// Update publishes a new version of path.
func (s *Source) Update(path string, body []byte) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.files[path]; !ok {
		return "", fmt.Errorf("randsource: %s does not exist", path)
	}
	at := s.changeAt(path)
	c := change{at: at, kind: "updated", path: path, v: s.newVersion(body, s.lastmodFor(path, at))}
	s.record(c)
	return s.logf("update %s: %d bytes, md5 %.8s, lastmod %s, at %s (Change List %d%s)", path, len(body), c.v.md5, w3c(s.files[path].lastmod), w3c(at), s.open().n, s.lastUnsaid()), nil
}

// Delete removes path.
func (s *Source) Delete(path string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.files[path]; !ok {
		return "", fmt.Errorf("randsource: %s does not exist", path)
	}
	at := s.changeAt(path)
	s.record(change{at: at, kind: "deleted", path: path})
	return s.logf("delete %s at %s (Change List %d%s)", path, w3c(at), s.open().n, s.lastUnsaid()), nil
}

// lastUnsaid says, for a log line, that the last change's entry leaves out
// its change attribute. s.mu is held.
func (s *Source) lastUnsaid() string {
	if s.changes[len(s.changes)-1].unsaid {
		return ", without change"
	}
	return ""
}

// Rotate closes the open Change List (until) and opens a new one from
// that time. While the Capability List names the Change List itself (no
// index), the closed list is no longer named, so a Resource List of the
// state at the rotation is published with it (as DSpace's module does).
func (s *Source) Rotate() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.closeAt()
	ol := s.open()
	ol.until = t
	nl := &changeList{n: ol.n + 1, from: t, dated: s.newListDated()}
	s.lists = append(s.lists, nl)
	line := fmt.Sprintf("rotate: Change List %d closed until %s (%d changes); Change List %d (%s) from %s", ol.n, w3c(t), len(ol.changes), nl.n, datingName(nl.dated), w3c(t))
	if !s.indexMode {
		s.listed, s.listAt = s.copyFiles(), t
		line += fmt.Sprintf("; the Capability List names it; Resource List republished at %s", w3c(t))
	}
	return s.logf("%s", line)
}

// UseIndex makes the Capability List name a Change List Index instead of
// the Change List: its children are every list not removed, the open one
// last.
func (s *Source) UseIndex() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.indexMode = true
	var ns []string
	for _, l := range s.lists {
		if !l.removed {
			ns = append(ns, fmt.Sprint(l.n))
		}
	}
	return s.logf("index: the Capability List names the Change List Index (children %s) instead of Change List %d", strings.Join(ns, ","), s.open().n)
}

// RemoveList removes the oldest closed Change List not yet removed (no
// longer named, 404), republishing the Resource List first if it is older
// than the list's until. It reports false if no closed list is left.
func (s *Source) RemoveList() (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.lists[:len(s.lists)-1] {
		if l.removed {
			continue
		}
		line := ""
		if s.listAt.Before(l.until) {
			t := s.snapshotAt()
			s.listed, s.listAt = s.copyFiles(), t
			line = fmt.Sprintf("Resource List republished at %s; ", w3c(t))
		}
		l.removed = true
		return s.logf("remove: %sChange List %d (until %s, %d changes) no longer named, 404", line, l.n, w3c(l.until), len(l.changes)), true
	}
	return "", false
}

// Republish publishes a Resource List of the current state.
func (s *Source) Republish() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.snapshotAt()
	s.listed, s.listAt = s.copyFiles(), t
	return s.logf("republish: Resource List at %s, %d resources", w3c(t), len(s.listed))
}

// Dump publishes a Change Dump package of the changes since the last
// package (from its until, or from the start), closed now; the Capability
// List names the Change Dump from the first one on. It reports false if
// nothing changed since the last package.
func (s *Source) Dump() (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	first, from := 0, s.start
	if n := len(s.pkgs); n > 0 {
		first, from = s.pkgs[n-1].end, s.pkgs[n-1].until
	}
	if first == len(s.changes) {
		return "", false
	}
	t := s.closeAt()
	p := &pkg{n: len(s.pkgs) + 1, from: from, until: t, first: first, end: len(s.changes)}
	p.body = s.packageBytes(p)
	s.pkgs = append(s.pkgs, p)
	return s.logf("dump: package %d from %s until %s, %d changes, %d bytes", p.n, w3c(from), w3c(t), p.end-p.first, len(p.body)), true
}

// RandomOp does one operation picked by the seeded generator and returns
// its log line.
func (s *Source) RandomOp() string {
	for {
		s.mu.Lock()
		var existing, free []string
		for _, p := range pathPool {
			if _, ok := s.files[p]; ok {
				existing = append(existing, p)
			} else {
				free = append(free, p)
			}
		}
		index := s.indexMode
		s.mu.Unlock()
		sort.Strings(existing)
		r := s.rng.Intn(100)
		switch {
		case r < 22:
			if len(free) == 0 {
				continue
			}
			line, err := s.Create(free[s.rng.Intn(len(free))], s.randomBody(-1))
			if err == nil {
				return line
			}
		case r < 50:
			if len(existing) == 0 {
				continue
			}
			p := existing[s.rng.Intn(len(existing))]
			n := -1
			if s.rng.Intn(4) == 0 { // same length, other bytes
				n = len(s.Truth()[p].Body)
			}
			line, err := s.Update(p, s.randomBody(n))
			if err == nil {
				return line
			}
		case r < 64:
			if len(existing) == 0 {
				continue
			}
			line, err := s.Delete(existing[s.rng.Intn(len(existing))])
			if err == nil {
				return line
			}
		case r < 75:
			return s.Rotate()
		case r < 79:
			if index {
				continue
			}
			return s.UseIndex()
		case r < 86:
			if line, ok := s.RemoveList(); ok {
				return line
			}
		case r < 92:
			return s.Republish()
		default:
			if line, ok := s.Dump(); ok {
				return line
			}
		}
	}
}

func w3c(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// Note adds a line to the log (the test's own events: mounted, stopped).
func (s *Source) Note(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.logf("-- %s", line)
}
