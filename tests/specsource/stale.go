package specsource

// The layouts of issue 22 ("silent staleness"): arrangements ordinary
// Sources publish that once left a mount stale. V10 is what resync and
// resync-simulator write in ResourceSync 1.0 mode, Rebase and PyOverflow
// what py-resourcesync writes (github.com/resourcesync/py-resourcesync,
// resourcesync/executor/*.py), the others arrangements the 1.1 text
// allows. Their documents are literal XML, like the rest of the package.

import (
	"bytes"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"
)

// Paths of the issue 22 layouts.
const (
	closedList1 = "/changelist-1.xml" // TwoLists: the closed list
	pyDir       = "/metadata/"        // Rebase, PyOverflow: py-resourcesync's metadata directory
	pyIndex     = pyDir + "changelist-index.xml"
)

// stale is the state of the issue 22 layouts.
type stale struct {
	failing map[string]int // path → status it answers (FailDoc)
	reqs    map[string]int64
	stamps  map[string]docStamp // RotateIndex: Last-Modified of change documents

	indexed bool // IndexSwitch: the Capability List names the index

	gen      int // Rebase: the Resource List's ordinal; its Change List's too
	genFirst int // Rebase: changes[genFirst:] are in the current Change List

	pyPrev  map[string]File // PyOverflow: the state at the last run
	pyLists [][]pyEntry     // PyOverflow: changelist_0000.xml, _0001.xml, ...
}

type docStamp struct {
	etag  string
	since time.Time
}

// pyEntry is one entry py-resourcesync wrote: a resource's metadata with
// the change; a deletion keeps the last metadata but no lastmod.
type pyEntry struct {
	kind string
	path string
	file File
}

// FailDoc makes the document at path answer code (0: answer again).
func (s *Source) FailDoc(path string, code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failing == nil {
		s.failing = map[string]int{}
	}
	if code == 0 {
		delete(s.failing, path)
		return
	}
	s.failing[path] = code
}

// Requests returns how many GETs of path were answered (any status).
func (s *Source) Requests(path string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reqs[path]
}

// Publish runs fn, whose changes the documents show all at once: none is
// rendered while fn runs. (The resources themselves change at once.)
func (s *Source) Publish(fn func()) {
	s.pub.Lock()
	defer s.pub.Unlock()
	fn()
}

// NameIndex makes an IndexSwitch Capability List name the Change List
// Index, which names the Change List it named until now.
func (s *Source) NameIndex() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.indexed = true
	s.version++
}

// Rebase publishes a new Resource List of the current state, as
// py-resourcesync's resourcelist run does: the metadata directory is
// cleared, so the Change List and the old Resource List answer 404, and the
// Capability List names only the new Resource List until a change is
// published (in a new Change List whose from is the list's time).
func (s *Source) Rebase() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gen++
	s.listed, s.listAt = s.copyFiles(), s.now()
	s.genFirst = len(s.changes)
	s.version++
}

// PathOf returns the path of a Rebase Source's current Change List (the
// one the next changes go to), or a PyOverflow Source's n-th Change List.
func (s *Source) PathOf(n int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cfg.Layout == Rebase {
		return fmt.Sprintf("%schangelist_%04d.xml", pyDir, s.gen)
	}
	return fmt.Sprintf("%schangelist_%04d.xml", pyDir, n)
}

// ResourceListPath is the path of the Resource List the Capability List
// names now.
func (s *Source) ResourceListPath() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch s.cfg.Layout {
	case Rebase:
		return fmt.Sprintf("%sresourcelist_%04d.xml", pyDir, s.gen)
	case PyOverflow:
		return pyDir + "resourcelist_0000.xml"
	}
	return resList
}

// PyRun is one run of py-resourcesync's incremental changelist executor:
// the difference between the state at the last run and now, created first,
// then updated (another md5), then deleted, appended to the last Change
// List, a new one begun when it holds Config.Rotate entries. It returns
// how many entries it wrote.
func (s *Source) PyRun() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pyPrev == nil {
		s.pyPrev = s.listed
	}
	var created, updated, deleted []pyEntry
	for _, p := range sortedPaths(s.files) {
		f := s.files[p]
		switch old, ok := s.pyPrev[p]; {
		case !ok:
			created = append(created, pyEntry{"created", p, f})
		case old.md5 != f.md5:
			updated = append(updated, pyEntry{"updated", p, f})
		}
	}
	for _, p := range sortedPaths(s.pyPrev) {
		if _, ok := s.files[p]; !ok {
			deleted = append(deleted, pyEntry{"deleted", p, s.pyPrev[p]})
		}
	}
	all := append(append(created, updated...), deleted...)
	for _, e := range all {
		if n := len(s.pyLists); n == 0 || len(s.pyLists[n-1]) >= s.cfg.Rotate {
			s.pyLists = append(s.pyLists, nil)
		}
		s.pyLists[len(s.pyLists)-1] = append(s.pyLists[len(s.pyLists)-1], e)
	}
	s.pyPrev = s.copyFiles()
	s.version++
	return len(all)
}

func sortedPaths(m map[string]File) []string {
	var out []string
	for p := range m {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// rotateByClock closes a RotateIndex's open child at each RotateEvery
// boundary passed, empty or not, as a Source that rotates daily does.
func (s *Source) rotateByClock() {
	now := time.Now().UTC()
	for until := s.openAt.Add(s.cfg.RotateEvery); !now.Before(until); until = s.openAt.Add(s.cfg.RotateEvery) {
		end := len(s.changes)
		s.closed = append(s.closed, closedList{from: s.openAt, until: until, first: end - s.nOpen, end: end})
		s.openAt, s.nOpen = until, 0
		s.version++
	}
}

// renderStale renders the documents of the issue 22 layouts that the
// others do not have; handled is false for a path it leaves to render.
func (s *Source) renderStale(path string) (body []byte, ok, handled bool) {
	switch s.cfg.Layout {
	case TwoLists:
		if path == closedList1 {
			return s.closedEmptyList(), true, true
		}
	case V10:
		switch path {
		case capList, wellKnown:
			return nil, false, false
		case resList:
			return s.resourceList10(), true, true
		case changeList:
			return s.changeList10(), true, true
		}
		return nil, false, true
	case Rebase:
		switch path {
		case wellKnown:
			return nil, false, false
		case capList:
			return s.capabilityListPy(), true, true
		case fmt.Sprintf("%sresourcelist_%04d.xml", pyDir, s.gen):
			return s.resourceListPy(), true, true
		case fmt.Sprintf("%schangelist_%04d.xml", pyDir, s.gen):
			if len(s.changes) > s.genFirst {
				return s.changeListRebase(), true, true
			}
		}
		return nil, false, true
	case PyOverflow:
		switch path {
		case wellKnown:
			return nil, false, false
		case capList:
			return s.capabilityListPy(), true, true
		case pyDir + "resourcelist_0000.xml":
			return s.resourceListPy(), true, true
		case pyIndex:
			if len(s.pyLists) > 1 {
				return s.changeListIndexPy(), true, true
			}
		}
		var n int
		if _, err := fmt.Sscanf(path, pyDir+"changelist_%04d.xml", &n); err == nil && n >= 0 && n < len(s.pyLists) &&
			path == fmt.Sprintf("%schangelist_%04d.xml", pyDir, n) {
			return s.changeListPy(n), true, true
		}
		return nil, false, true
	case IndexSwitch:
		if path == changeIndex && s.indexed {
			return s.switchedIndex(), true, true
		}
	}
	return nil, false, false
}

// closedEmptyList is TwoLists' first Change List: closed at the start,
// no changes.
func (s *Source) closedEmptyList() []byte {
	return []byte(fmt.Sprintf(`%s<urlset %s>
  <rs:ln rel="up" href="%s%s"/>
  <rs:md capability="changelist" from="%s" until="%s"/>
</urlset>
`, xmlDecl, nsAttrs, s.base, capList, w3c(s.start.Add(-24*time.Hour)), w3c(s.start)))
}

// switchedIndex is IndexSwitch's index: it names the one Change List.
func (s *Source) switchedIndex() []byte {
	return []byte(fmt.Sprintf(`%s<sitemapindex %s>
  <rs:ln rel="up" href="%s%s"/>
  <rs:md capability="changelist" from="%s"/>
  <sitemap>
    <loc>%s%s</loc>
    <rs:md capability="changelist" from="%s"/>
  </sitemap>
</sitemapindex>
`, xmlDecl, nsAttrs, s.base, capList, w3c(s.start), s.base, changeList, w3c(s.start)))
}

// ResourceSync 1.0 as resync (sitemap.py, spec_version='1.0') writes it:
// one line, Python's isoformat with microseconds (none when zero).
const xmlDecl10 = `<?xml version='1.0' encoding='UTF-8'?>` + "\n"

func py10(t time.Time) string {
	t = t.UTC()
	if t.Nanosecond() == 0 {
		return t.Format("2006-01-02T15:04:05Z")
	}
	return t.Format("2006-01-02T15:04:05.000000Z")
}

// resourceList10 is resync-simulator's dynamic Resource List: the current
// state, at "now".
func (s *Source) resourceList10() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `%s<urlset %s><rs:ln href="%s%s" rel="up" /><rs:md at="%s" capability="resourcelist" />`,
		xmlDecl10, nsAttrs, s.base, capList, py10(time.Now()))
	for _, p := range sortedPaths(s.files) {
		f := s.files[p]
		fmt.Fprintf(&b, `<url><loc>%s%s</loc><lastmod>%s</lastmod><rs:md hash="md5:%s" length="%d" /></url>`,
			s.base, p, py10(f.Lastmod), f.md5, len(f.Body))
	}
	b.WriteString("</urlset>")
	return b.Bytes()
}

// changeList10 is resync-simulator's 1.0 Change List: from is its first
// change's lastmod, until is "now"; every entry, deletions too, is dated
// by lastmod only (the simulator before its 1.1 update).
func (s *Source) changeList10() []byte {
	from := s.start
	if len(s.changes) > 0 {
		from = s.changes[0].at
		if c := s.changes[0]; c.kind != "deleted" {
			from = c.file.Lastmod
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `%s<urlset %s><rs:ln href="%s%s" rel="up" /><rs:md capability="changelist" from="%s" until="%s" />`,
		xmlDecl10, nsAttrs, s.base, capList, py10(from), py10(time.Now()))
	for _, c := range s.changes {
		if c.kind == "deleted" {
			fmt.Fprintf(&b, `<url><loc>%s%s</loc><lastmod>%s</lastmod><rs:md change="deleted" /></url>`, s.base, c.path, py10(c.at))
			continue
		}
		fmt.Fprintf(&b, `<url><loc>%s%s</loc><lastmod>%s</lastmod><rs:md change="%s" hash="md5:%s" length="%d" /></url>`,
			s.base, c.path, py10(c.file.Lastmod), c.kind, c.file.md5, len(c.file.Body))
	}
	b.WriteString("</urlset>")
	return b.Bytes()
}

// pyW3C is py-resourcesync's w3c_datetime (utils/defaults.py): seconds
// left out when zero.
func pyW3C(t time.Time) string {
	t = t.UTC()
	if t.Second() == 0 {
		return t.Format("2006-01-02T15:04Z")
	}
	return t.Format("2006-01-02T15:04:05Z")
}

// capabilityListPy is py-resourcesync's create_capabilitylist: the
// Resource List, then a Change List Index if there is one, else every
// Change List.
func (s *Source) capabilityListPy() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `%s<urlset %s>
  <rs:ln href="%s%s" rel="up"/>
  <rs:md capability="capabilitylist"/>
  <url>
    <loc>%s%sresourcelist_%04d.xml</loc>
    <rs:md capability="resourcelist"/>
  </url>
`, xmlDecl, nsAttrs, s.base, wellKnown, s.base, pyDir, s.gen)
	var lists []string
	switch {
	case s.cfg.Layout == Rebase && len(s.changes) > s.genFirst:
		lists = []string{fmt.Sprintf("%schangelist_%04d.xml", pyDir, s.gen)}
	case s.cfg.Layout == PyOverflow && len(s.pyLists) == 1:
		lists = []string{pyDir + "changelist_0000.xml"}
	case s.cfg.Layout == PyOverflow && len(s.pyLists) > 1:
		lists = []string{pyIndex}
	}
	for _, l := range lists {
		fmt.Fprintf(&b, "  <url>\n    <loc>%s%s</loc>\n    <rs:md capability=\"changelist\"/>\n  </url>\n", s.base, l)
	}
	b.WriteString("</urlset>\n")
	return b.Bytes()
}

// resourceListPy is py-resourcesync's Resource List: at and completed its
// run's start and end.
func (s *Source) resourceListPy() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `%s<urlset %s>
  <rs:ln href="%s%s" rel="up"/>
  <rs:md at="%s" capability="resourcelist" completed="%s"/>
`, xmlDecl, nsAttrs, s.base, capList, pyW3C(s.listAt), pyW3C(s.listAt))
	for _, p := range sortedPaths(s.listed) {
		f := s.listed[p]
		fmt.Fprintf(&b, "  <url>\n    <loc>%s%s</loc>\n    <lastmod>%s</lastmod>\n    <rs:md hash=\"md5:%s\" length=\"%d\" type=\"text/plain\"/>\n  </url>\n",
			s.base, p, w3c(f.Lastmod), f.md5, len(f.Body))
	}
	b.WriteString("</urlset>\n")
	return b.Bytes()
}

// changeListRebase is the Change List begun after a Rebase: from is the
// Resource List's time; its entries carry datetime (the layout is about
// the deleted list, not the dating).
func (s *Source) changeListRebase() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s<urlset %s>\n  <rs:ln href=\"%s%s\" rel=\"up\"/>\n  <rs:md capability=\"changelist\" from=\"%s\"/>\n",
		xmlDecl, nsAttrs, s.base, capList, pyW3C(s.listAt))
	s.writeChanges(&b, s.changes[s.genFirst:])
	b.WriteString("</urlset>\n")
	return b.Bytes()
}

// changeListPy is py-resourcesync's n-th incremental Change List. Its
// entries have no datetime: the executor sets resource.md_datetime, which
// resync's Resource keeps as an unknown extra and never writes. Created
// and updated entries keep the resource's lastmod; deleted ones keep
// hash, length and type but lose lastmod. from is the Resource List's
// completed, for every list (date_changelist_from); none has until.
func (s *Source) changeListPy(n int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s<urlset %s>\n  <rs:ln href=\"%s%s\" rel=\"up\"/>\n", xmlDecl, nsAttrs, s.base, capList)
	if len(s.pyLists) > 1 {
		fmt.Fprintf(&b, "  <rs:ln href=\"%s%s\" rel=\"index\"/>\n", s.base, pyIndex)
	}
	fmt.Fprintf(&b, "  <rs:md capability=\"changelist\" from=\"%s\"/>\n", pyW3C(s.listAt))
	for _, e := range s.pyLists[n] {
		fmt.Fprintf(&b, "  <url>\n    <loc>%s%s</loc>\n", s.base, e.path)
		if e.kind != "deleted" {
			fmt.Fprintf(&b, "    <lastmod>%s</lastmod>\n", w3c(e.file.Lastmod))
		}
		fmt.Fprintf(&b, "    <rs:md change=\"%s\" hash=\"md5:%s\" length=\"%d\" type=\"text/plain\"/>\n  </url>\n",
			e.kind, e.file.md5, len(e.file.Body))
	}
	b.WriteString("</urlset>\n")
	return b.Bytes()
}

// changeListIndexPy is py-resourcesync's create_index: from is the
// Resource List's completed, each child with its from (and no until).
func (s *Source) changeListIndexPy() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s<sitemapindex %s>\n  <rs:ln href=\"%s%s\" rel=\"up\"/>\n  <rs:md capability=\"changelist\" from=\"%s\"/>\n",
		xmlDecl, nsAttrs, s.base, capList, pyW3C(s.listAt))
	for n := range s.pyLists {
		fmt.Fprintf(&b, "  <sitemap>\n    <loc>%s%schangelist_%04d.xml</loc>\n    <rs:md from=\"%s\"/>\n  </sitemap>\n",
			s.base, pyDir, n, pyW3C(s.listAt))
	}
	b.WriteString("</sitemapindex>\n")
	return b.Bytes()
}

// countAndFail counts a GET of path and answers it with an error if
// FailDoc asked for one.
func (s *Source) countAndFail(w http.ResponseWriter, r *http.Request) bool {
	s.mu.Lock()
	if r.Method == http.MethodGet {
		if s.reqs == nil {
			s.reqs = map[string]int64{}
		}
		s.reqs[r.URL.Path]++
	}
	code := s.failing[r.URL.Path]
	s.mu.Unlock()
	if code != 0 {
		http.Error(w, http.StatusText(code), code)
		return true
	}
	return false
}

// validators says how a document is served: RotateIndex serves its
// Resource List with neither ETag nor Last-Modified, and its change
// documents with both.
func (s *Source) validators(path string) (etag, lastMod bool) {
	if s.cfg.Layout != RotateIndex {
		return true, false
	}
	if path == changeIndex || strings.HasPrefix(path, rotatedLists) {
		return true, true
	}
	if path == resList {
		return false, false
	}
	return true, false
}

// lastModified is when the body at path was first served as it is now:
// each new body a second later than the last at least, so that
// If-Modified-Since never hides a change.
func (s *Source) lastModified(path, etag string) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stamps == nil {
		s.stamps = map[string]docStamp{}
	}
	st, ok := s.stamps[path]
	if ok && st.etag == etag {
		return st.since
	}
	since := time.Now().UTC().Truncate(time.Second)
	if ok && !since.After(st.since) {
		since = st.since.Add(time.Second)
	}
	s.stamps[path] = docStamp{etag, since}
	return since
}
