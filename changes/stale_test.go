package changes

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/catalog"
	"rsfs/status"
	"rsfs/tests/logbuf"
)

// docSource serves hand-written documents by path, with an ETag (honouring
// If-None-Match) unless noETag names the path, and counts the requests per
// path. A path with no document answers its status, else 404. "BASE" in a
// body is the server's URL.
type docSource struct {
	mu     sync.Mutex
	base   string
	docs   map[string]string
	status map[string]int
	noETag map[string]bool
	hits   map[string]int
}

func startDocSource(t *testing.T, docs map[string]string) *docSource {
	s := &docSource{docs: docs, status: map[string]int{}, noETag: map[string]bool{}, hits: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.base = srv.URL
	return s
}

func (s *docSource) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hits[r.URL.Path]++
	body, ok := s.docs[r.URL.Path]
	if !ok {
		code := s.status[r.URL.Path]
		if code == 0 {
			code = http.StatusNotFound
		}
		http.Error(w, http.StatusText(code), code)
		return
	}
	body = strings.ReplaceAll(body, "BASE", s.base)
	if !strings.HasPrefix(body, "<") { // a resource
		w.Write([]byte(body))
		return
	}
	if !s.noETag[r.URL.Path] {
		sum := sha256.Sum256([]byte(body))
		etag := `"` + hex.EncodeToString(sum[:8]) + `"`
		w.Header().Set("ETag", etag)
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	w.Header().Set("Content-Type", "application/xml")
	w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + body))
}

func (s *docSource) set(path, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if body == "" {
		delete(s.docs, path)
		return
	}
	s.docs[path] = body
}

func (s *docSource) fail(path string, code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.docs, path)
	s.status[path] = code
}

func (s *docSource) hitsOf(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

const ns = `xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"`

// capList names the Resource List /rl.xml and the Change Lists given.
func capList(changeLists ...string) string {
	b := `<urlset ` + ns + `><rs:md capability="capabilitylist"/>
<url><loc>BASE/rl.xml</loc><rs:md capability="resourcelist"/></url>`
	for _, u := range changeLists {
		b += "\n<url><loc>BASE" + u + `</loc><rs:md capability="changelist"/></url>`
	}
	return b + "</urlset>"
}

// resList lists a.txt (1 byte) at 2024-01-01.
const resList = `<urlset ` + ns + `><rs:md capability="resourcelist" at="2024-01-01T00:00:00Z"/>
<url><loc>BASE/a.txt</loc><lastmod>2024-01-01T00:00:00Z</lastmod><rs:md length="1"/></url></urlset>`

// entry is a Change List entry: datetime "" leaves it out.
func entry(file, change, lastmod, datetime string, length int) string {
	dt := ""
	if datetime != "" {
		dt = ` datetime="` + datetime + `"`
	}
	lm := ""
	if lastmod != "" {
		lm = "<lastmod>" + lastmod + "</lastmod>"
	}
	return "\n<url><loc>BASE/" + file + "</loc>" + lm + `<rs:md change="` + change + `"` + dt +
		` length="` + itoa(length) + `"/></url>`
}

// withHash gives an entry (from entry) an md5 hash.
func withHash(e, md5 string) string {
	return strings.Replace(e, "<rs:md ", `<rs:md hash="md5:`+md5+`" `, 1)
}

func itoa(n int) string { return strconv.Itoa(n) }

func changeList(from, until string, entries ...string) string {
	md := `capability="changelist" from="` + from + `"`
	if until != "" {
		md += ` until="` + until + `"`
	}
	return `<urlset ` + ns + `><rs:md ` + md + `/>` + strings.Join(entries, "") + `</urlset>`
}

// followDocs loads the Source at s (its Capability List is /caps.xml) and
// returns a Follower of it, with its log.
func followDocs(t *testing.T, s *docSource) (*Follower, *catalog.Catalog, *logbuf.Buffer) {
	t.Helper()
	log := &logbuf.Buffer{}
	opts := testOptions()
	opts.Logger = log.Logger()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	src, err := discoverSource(ctx, s.base+"/caps.xml", opts)
	require.NoError(t, err)
	cat := catalog.New(catalog.Options{Origin: src.Origin})
	_, err = src.Load(ctx, cat, nil)
	require.NoError(t, err)
	return New(src, cat, FollowOptions{}, nil), cat, log
}

func poll(t *testing.T, f *Follower) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return f.Poll(ctx)
}

func lengthOf(t *testing.T, cat *catalog.Catalog, uri string) int64 {
	t.Helper()
	id, ok := cat.ByURI(uri)
	if !ok {
		return -1
	}
	r, ok := cat.Resource(id)
	require.True(t, ok)
	return r.Length
}

// A 1.0 Change List (Z39.99-2014): from and until in its header, every
// entry dated by lastmod alone. Each change after the Resource List's time
// is applied.
func TestA10ChangeListIsDatedByLastmod(t *testing.T) {
	s := startDocSource(t, map[string]string{
		"/caps.xml": capList("/cl.xml"), "/rl.xml": resList,
		"/cl.xml": changeList("2024-01-01T00:00:00Z", "2024-01-03T00:00:00Z",
			entry("a.txt", "updated", "2024-01-02T00:00:00Z", "", 5),
			entry("b.txt", "created", "2024-01-02T01:00:00Z", "", 7)),
	})
	f, cat, _ := followDocs(t, s)
	require.NoError(t, poll(t, f))
	assert.EqualValues(t, 5, lengthOf(t, cat, s.base+"/a.txt"))
	assert.EqualValues(t, 7, lengthOf(t, cat, s.base+"/b.txt"))
	assert.Equal(t, "2024-01-02T01:00:00Z", f.Positions()[s.base+"/caps.xml"].Time.UTC().Format(time.RFC3339))
}

// A Source switches from a Change List to an index that names it, in the
// publication that adds entries to it: the list is read twice in one poll,
// and its last state wins.
func TestAListReadTwiceInOnePollKeepsItsLastChange(t *testing.T) {
	s := startDocSource(t, map[string]string{
		"/caps.xml": capList("/cl.xml"), "/rl.xml": resList,
		"/cl.xml": changeList("2024-01-01T00:00:00Z", "",
			entry("a.txt", "updated", "", "2024-01-02T00:00:00Z", 2)),
	})
	f, cat, _ := followDocs(t, s)
	require.NoError(t, poll(t, f))
	require.EqualValues(t, 2, lengthOf(t, cat, s.base+"/a.txt"))

	s.set("/cl.xml", changeList("2024-01-01T00:00:00Z", "",
		entry("a.txt", "updated", "", "2024-01-02T00:00:00Z", 2),
		entry("a.txt", "updated", "", "2024-01-03T00:00:00Z", 3),
		entry("a.txt", "updated", "", "2024-01-04T00:00:00Z", 4)))
	s.set("/ci.xml", `<sitemapindex `+ns+`><rs:md capability="changelist" from="2024-01-01T00:00:00Z"/>
<sitemap><loc>BASE/cl.xml</loc><rs:md capability="changelist" from="2024-01-01T00:00:00Z"/></sitemap></sitemapindex>`)
	s.set("/caps.xml", capList("/ci.xml"))
	require.NoError(t, poll(t, f))
	assert.EqualValues(t, 4, lengthOf(t, cat, s.base+"/a.txt"), "the last change of the list read twice")
}

// py-resourcesync deletes its old Change List when it writes a new one: the
// Capability List names the new one and the old answers 404. The old is
// dropped at once; the new one's changes are applied, and the set is not
// degraded.
func TestARemovedChangeListIsDroppedAndTheNewOneFollowed(t *testing.T) {
	s := startDocSource(t, map[string]string{
		"/caps.xml": capList("/cl1.xml"), "/rl.xml": resList,
		"/cl1.xml": changeList("2024-01-01T00:00:00Z", "", entry("a.txt", "updated", "", "2024-01-02T00:00:00Z", 2)),
	})
	f, cat, _ := followDocs(t, s)
	require.NoError(t, poll(t, f))
	s.set("/cl1.xml", "")
	s.set("/cl2.xml", changeList("2024-01-02T00:00:00Z", "", entry("a.txt", "updated", "", "2024-01-05T00:00:00Z", 5)))
	s.set("/caps.xml", capList("/cl2.xml"))
	require.NoError(t, poll(t, f))
	assert.EqualValues(t, 5, lengthOf(t, cat, s.base+"/a.txt"))
	s.set("/cl2.xml", changeList("2024-01-02T00:00:00Z", "",
		entry("a.txt", "updated", "", "2024-01-05T00:00:00Z", 5), entry("a.txt", "updated", "", "2024-01-06T00:00:00Z", 6)))
	hits := s.hitsOf("/cl1.xml")
	require.NoError(t, poll(t, f))
	assert.EqualValues(t, 6, lengthOf(t, cat, s.base+"/a.txt"))
	assert.Equal(t, hits, s.hitsOf("/cl1.xml"), "the removed list is not asked for again")
	assert.Empty(t, f.Status().Sets[0].Degraded)
}

// One named Change List fails: the other's changes are applied, ahead of
// the position, the set shows degraded naming it; once it is back, its
// changes (older than the other's) are applied too and the position moves.
func TestAFailingChangeListDegradesItsSetButBlocksNoOther(t *testing.T) {
	s := startDocSource(t, map[string]string{
		"/caps.xml": capList("/cl1.xml", "/cl2.xml"), "/rl.xml": resList,
		"/cl1.xml": changeList("2024-01-01T00:00:00Z", ""),
		"/cl2.xml": changeList("2024-01-01T00:00:00Z", ""),
	})
	f, cat, _ := followDocs(t, s)
	require.NoError(t, poll(t, f))
	s.fail("/cl1.xml", http.StatusInternalServerError)
	s.set("/cl2.xml", changeList("2024-01-01T00:00:00Z", "", entry("b.txt", "created", "", "2024-01-03T00:00:00Z", 3)))
	require.Error(t, poll(t, f))
	assert.EqualValues(t, 3, lengthOf(t, cat, s.base+"/b.txt"), "the other list's change is applied")
	st := f.Status().Sets[0]
	require.Len(t, st.Degraded, 1)
	assert.Equal(t, s.base+"/cl1.xml", st.Degraded[0].Doc)
	assert.Contains(t, st.Degraded[0].Err, "500")
	assert.Equal(t, "2024-01-01T00:00:00Z", st.Position.UTC().Format(time.RFC3339), "the position holds")
	assert.Greater(t, st.Behind(time.Now(), time.Time{}), time.Duration(0))

	s.set("/cl1.xml", changeList("2024-01-01T00:00:00Z", "", entry("c.txt", "created", "", "2024-01-02T00:00:00Z", 2)))
	require.NoError(t, poll(t, f))
	assert.EqualValues(t, 2, lengthOf(t, cat, s.base+"/c.txt"), "the older change of the list that came back")
	assert.EqualValues(t, 3, lengthOf(t, cat, s.base+"/b.txt"))
	st = f.Status().Sets[0]
	assert.Empty(t, st.Degraded)
	assert.Equal(t, "2024-01-03T00:00:00Z", st.Position.UTC().Format(time.RFC3339))
	assert.Equal(t, time.Duration(0), st.Behind(time.Now(), time.Time{}))
}

// A Change List whose from lies before the position, with entries that
// carry no date (an overflowing py-resourcesync list): they cannot be told
// new by time, so they are compared with the catalog, applied where it
// differs, and said in a warning naming the document.
func TestUndatedEntriesBeforeThePositionAreComparedWithTheCatalog(t *testing.T) {
	const md5a = "5d41402abc4b2a76b9719d911017c592"
	s := startDocSource(t, map[string]string{
		"/caps.xml": capList("/cl1.xml"), "/rl.xml": resList,
		"/cl1.xml": changeList("2024-01-01T00:00:00Z", "", withHash(entry("a.txt", "updated", "", "2024-01-05T00:00:00Z", 5), md5a)),
	})
	f, cat, log := followDocs(t, s)
	require.NoError(t, poll(t, f))
	s.set("/cl2.xml", changeList("2024-01-02T00:00:00Z", "",
		withHash(entry("a.txt", "updated", "", "", 5), md5a), // what the catalog holds: a no-op
		entry("d.txt", "created", "", "", 9)))
	s.set("/caps.xml", capList("/cl1.xml", "/cl2.xml"))
	require.NoError(t, poll(t, f))
	assert.EqualValues(t, 9, lengthOf(t, cat, s.base+"/d.txt"))
	assert.Contains(t, log.String(), "entries without a date fall at or before the last change applied")
	assert.Contains(t, log.String(), "cl2.xml")
	assert.Contains(t, log.String(), "entries=1")
	assert.Equal(t, "2024-01-05T00:00:00Z", f.Positions()[s.base+"/caps.xml"].Time.UTC().Format(time.RFC3339))
}

// The closed child that holds the position answers 304 when the index
// rotates: it still covers what it covered, so the new child is no gap, and
// no Resource List (served without validators) is read.
func TestARotationIsNoGap(t *testing.T) {
	index := func(children ...string) string {
		b := `<sitemapindex ` + ns + `><rs:md capability="changelist" from="2024-01-01T00:00:00Z"/>`
		return b + strings.Join(children, "") + `</sitemapindex>`
	}
	child := func(n, from, until string) string {
		u := ""
		if until != "" {
			u = ` until="` + until + `"`
		}
		return "\n<sitemap><loc>BASE/cl" + n + `.xml</loc><rs:md capability="changelist" from="` + from + `"` + u + `/></sitemap>`
	}
	s := startDocSource(t, map[string]string{
		"/caps.xml": capList("/ci.xml"), "/rl.xml": resList,
		"/ci.xml":  index(child("1", "2024-01-01T00:00:00Z", "")),
		"/cl1.xml": changeList("2024-01-01T00:00:00Z", "", entry("a.txt", "updated", "", "2024-01-02T00:00:00Z", 2)),
	})
	s.noETag["/rl.xml"] = true
	f, cat, log := followDocs(t, s)
	require.NoError(t, poll(t, f))
	// The position is 01-02; cl1 closes at 01-03 (unchanged entries: the
	// test server's ETag stays, so it answers 304) and cl2 starts there.
	s.set("/cl1.xml", changeList("2024-01-01T00:00:00Z", "", entry("a.txt", "updated", "", "2024-01-02T00:00:00Z", 2)))
	require.NoError(t, poll(t, f)) // cl1 answers 304 from here on
	s.set("/ci.xml", index(child("1", "2024-01-01T00:00:00Z", "2024-01-03T00:00:00Z"), child("2", "2024-01-03T00:00:00Z", "")))
	s.set("/cl2.xml", changeList("2024-01-03T00:00:00Z", "", entry("a.txt", "updated", "", "2024-01-04T00:00:00Z", 4)))
	rl := s.hitsOf("/rl.xml")
	require.NoError(t, poll(t, f))
	assert.EqualValues(t, 4, lengthOf(t, cat, s.base+"/a.txt"))
	assert.Equal(t, rl, s.hitsOf("/rl.xml"), "no Resource List read at a rotation")
	assert.NotContains(t, log.String(), "reloading")
	assert.Zero(t, f.Stats().Reloads)
}

// Changes dated 9999-12-31 are applied; the warning is said once per
// document, not at every poll, and the set is not "behind" by a negative
// time.
func TestAFarFutureDateWarnsOnceAndNeverMakesStatusNegative(t *testing.T) {
	s := startDocSource(t, map[string]string{
		"/caps.xml": capList("/cl.xml"), "/rl.xml": resList,
		"/cl.xml": changeList("2024-01-01T00:00:00Z", "",
			entry("f.txt", "created", "9999-12-31T00:00:00Z", "9999-12-31T00:00:00Z", 3)),
	})
	s.noETag["/cl.xml"] = true // read whole at every poll
	f, cat, log := followDocs(t, s)
	for range 3 {
		require.NoError(t, poll(t, f))
	}
	assert.EqualValues(t, 3, lengthOf(t, cat, s.base+"/f.txt"))
	assert.Equal(t, 1, strings.Count(log.String(), "changes dated more than a day ahead of now"))
	var set status.Set = f.Status().Sets[0]
	assert.GreaterOrEqual(t, set.Behind(time.Now(), time.Now()), time.Duration(0))
	assert.Less(t, set.Behind(time.Now(), time.Now()), time.Hour)
}

// A publisher changed a.txt, created b.txt and deleted x.txt without
// listing any of it in a Change List, then wrote a new Resource List and a
// Capability List naming a new Change List. The follower sees the
// Capability List name other documents, checks the Resource Lists, and
// repairs the drift: said once with counts and examples, and counted.
func TestDriftIsRepairedWhenTheCapabilityListNamesNewDocuments(t *testing.T) {
	s := startDocSource(t, map[string]string{
		"/caps.xml": capList("/cl1.xml"),
		"/rl.xml": `<urlset ` + ns + `><rs:md capability="resourcelist" at="2024-01-01T00:00:00Z"/>
<url><loc>BASE/a.txt</loc><lastmod>2024-01-01T00:00:00Z</lastmod><rs:md length="1"/></url>
<url><loc>BASE/x.txt</loc><lastmod>2024-01-01T00:00:00Z</lastmod><rs:md length="1"/></url></urlset>`,
		"/cl1.xml": changeList("2024-01-01T00:00:00Z", ""),
	})
	f, cat, log := followDocs(t, s)
	require.NoError(t, poll(t, f))
	require.NoError(t, poll(t, f))
	rl := s.hitsOf("/rl.xml")
	require.NoError(t, poll(t, f))
	assert.Equal(t, rl, s.hitsOf("/rl.xml"), "an unchanged Capability List asks nothing of the Resource Lists")

	s.set("/rl.xml", `<urlset `+ns+`><rs:md capability="resourcelist" at="2024-02-01T00:00:00Z"/>
<url><loc>BASE/a.txt</loc><lastmod>2024-01-20T00:00:00Z</lastmod><rs:md length="3"/></url>
<url><loc>BASE/b.txt</loc><lastmod>2024-01-20T00:00:00Z</lastmod><rs:md length="4"/></url></urlset>`)
	s.set("/cl2.xml", changeList("2024-02-01T00:00:00Z", ""))
	s.set("/caps.xml", capList("/cl1.xml", "/cl2.xml"))
	require.NoError(t, poll(t, f))
	assert.EqualValues(t, 3, lengthOf(t, cat, s.base+"/a.txt"))
	assert.EqualValues(t, 4, lengthOf(t, cat, s.base+"/b.txt"))
	assert.EqualValues(t, -1, lengthOf(t, cat, s.base+"/x.txt"))
	assert.Contains(t, log.String(), "drift repaired: 1 created, 1 deleted, 1 updated (examples: "+s.base+"/b.txt")
	assert.EqualValues(t, 3, f.Status().Drift)

	require.NoError(t, poll(t, f))
	assert.EqualValues(t, 3, f.Status().Drift, "repaired once")
}

// py-resourcesync's resourcelist run (tests/e2e
// TestSilentStaleDeletedChangeList): a change listed in no Change List,
// then the metadata directory cleared and a new Resource List written
// under a new name, the Capability List naming it alone. The first poll
// that reads that Capability List repairs the drift from the new list,
// with no error: it does not ask the old list, which answers 404.
func TestDriftIsRepairedFromAResourceListOfANewName(t *testing.T) {
	capsOf := func(rl string, changeLists ...string) string {
		return strings.Replace(capList(changeLists...), "BASE/rl.xml", "BASE"+rl, 1)
	}
	s := startDocSource(t, map[string]string{
		"/caps.xml": capsOf("/rl0.xml", "/cl0.xml"),
		"/rl0.xml":  resList,
		"/cl0.xml":  changeList("2024-01-01T00:00:00Z", ""),
	})
	f, cat, log := followDocs(t, s)
	require.NoError(t, poll(t, f))
	require.NoError(t, poll(t, f))

	s.set("/rl1.xml", `<urlset `+ns+`><rs:md capability="resourcelist" at="2024-02-01T00:00:00Z"/>
<url><loc>BASE/a.txt</loc><lastmod>2024-01-20T00:00:00Z</lastmod><rs:md length="5"/></url></urlset>`)
	s.set("/rl0.xml", "")
	s.set("/cl0.xml", "")
	s.set("/caps.xml", capsOf("/rl1.xml"))
	require.NoError(t, poll(t, f), "the poll that meets the new Capability List")
	assert.EqualValues(t, 5, lengthOf(t, cat, s.base+"/a.txt"), "the change only the new Resource List has")
	assert.Contains(t, log.String(), "drift repaired: 0 created, 0 deleted, 1 updated")
	assert.Zero(t, s.hitsOf("/rl0.xml")-1, "the old Resource List is not asked again")
}

// Resource Lists served without validators are checked every DriftEvery
// by their header's time: a republished list with a new at is compared; an
// unchanged one is only asked for its header.
func TestDriftIsCheckedEveryDriftEveryByTheListTime(t *testing.T) {
	s := startDocSource(t, map[string]string{
		"/caps.xml": capList("/cl1.xml"), "/rl.xml": resList,
		"/cl1.xml": changeList("2024-01-01T00:00:00Z", ""),
	})
	s.noETag["/rl.xml"] = true
	f, cat, log := followDocs(t, s)
	clock := time.Now()
	f.now = func() time.Time { return clock }
	require.NoError(t, poll(t, f))
	rl := s.hitsOf("/rl.xml")
	clock = clock.Add(DriftEvery / 2)
	require.NoError(t, poll(t, f))
	assert.Equal(t, rl, s.hitsOf("/rl.xml"), "not due yet")

	clock = clock.Add(DriftEvery)
	require.NoError(t, poll(t, f))
	assert.Equal(t, rl+1, s.hitsOf("/rl.xml"), "one header read: the same at")
	assert.NotContains(t, log.String(), "drift")

	s.set("/rl.xml", `<urlset `+ns+`><rs:md capability="resourcelist" at="2024-03-01T00:00:00Z"/>
<url><loc>BASE/a.txt</loc><lastmod>2024-02-01T00:00:00Z</lastmod><rs:md length="8"/></url></urlset>`)
	clock = clock.Add(DriftEvery)
	require.NoError(t, poll(t, f))
	assert.EqualValues(t, 8, lengthOf(t, cat, s.base+"/a.txt"))
	assert.Contains(t, log.String(), "drift repaired: 0 created, 0 deleted, 1 updated")
}

// resync-simulator stamps a Resource List's at once the list is built, so
// changes made while it was built are dated before at yet missing from it.
// The first poll after the load applies each resource's latest change
// before at where the list's record is older; a list record that is newer
// than the change, or the same version, is kept.
func TestChangesBeforeALateListTimeThatTheListLacksAreApplied(t *testing.T) {
	s := startDocSource(t, map[string]string{
		"/caps.xml": capList("/cl.xml"),
		"/rl.xml": `<urlset ` + ns + `><rs:md capability="resourcelist" at="2024-01-10T00:00:00Z"/>
<url><loc>BASE/a.txt</loc><lastmod>2024-01-01T00:00:00Z</lastmod><rs:md length="1"/></url>
<url><loc>BASE/c.txt</loc><lastmod>2024-01-09T23:59:58Z</lastmod><rs:md length="3"/></url>
<url><loc>BASE/d.txt</loc><lastmod>2024-01-09T23:59:57Z</lastmod><rs:md length="4"/></url>
<url><loc>BASE/x.txt</loc><lastmod>2024-01-01T00:00:00Z</lastmod><rs:md length="1"/></url></urlset>`,
		"/cl.xml": changeList("2024-01-09T00:00:00Z", "",
			entry("d.txt", "updated", "2024-01-09T23:59:55Z", "", 9), // older than the list's record: kept
			entry("c.txt", "updated", "2024-01-09T23:59:58Z", "", 3), // the list has it
			entry("a.txt", "updated", "2024-01-09T23:59:59Z", "", 5),
			entry("b.txt", "created", "2024-01-09T23:59:59Z", "", 7),
			entry("x.txt", "deleted", "2024-01-09T23:59:59Z", "", 0)),
	})
	f, cat, log := followDocs(t, s)
	require.NoError(t, poll(t, f))
	assert.EqualValues(t, 5, lengthOf(t, cat, s.base+"/a.txt"))
	assert.EqualValues(t, 7, lengthOf(t, cat, s.base+"/b.txt"))
	assert.EqualValues(t, -1, lengthOf(t, cat, s.base+"/x.txt"), "deleted")
	assert.EqualValues(t, 3, lengthOf(t, cat, s.base+"/c.txt"))
	assert.EqualValues(t, 4, lengthOf(t, cat, s.base+"/d.txt"), "the list's newer record stays")
	assert.Contains(t, log.String(), "changes dated before the Resource Lists' time are missing from them")
	assert.Contains(t, log.String(), "changes=3")
	assert.Equal(t, "2024-01-10T00:00:00Z", f.Positions()[s.base+"/caps.xml"].Time.UTC().Format(time.RFC3339))

	// Only the first poll after a load asks: the tree is then the Source's.
	s.set("/cl.xml", changeList("2024-01-09T00:00:00Z", "",
		entry("d.txt", "updated", "2024-01-09T23:59:59Z", "", 11)))
	require.NoError(t, poll(t, f))
	assert.EqualValues(t, 4, lengthOf(t, cat, s.base+"/d.txt"))
}

func TestCoverageFindsHolesBetweenDocuments(t *testing.T) {
	at := func(h int) time.Time { return time.Date(2024, 1, 1, h, 0, 0, 0, time.UTC) }
	pos := func(h int) *Position { return &Position{Time: at(h)} }
	closed := func(from, until int) span { return span{start: at(from), end: at(until)} }
	open := func(from int) span { return span{start: at(from)} }
	for _, tc := range []struct {
		name   string
		spans  []span
		pos    *Position
		gap    bool
		resume time.Time
	}{
		{"one open list from before", []span{open(1)}, pos(2), false, time.Time{}},
		{"a list that starts after the position", []span{open(3)}, pos(2), true, at(3)},
		{"a rotation: until meets from", []span{closed(1, 5), open(5)}, pos(4), false, time.Time{}},
		{"a second between until and from is no hole", []span{closed(1, 5), {start: at(5).Add(time.Second)}}, pos(4), false, time.Time{}},
		{"a list missed between two polls", []span{closed(1, 5), open(8)}, pos(4), true, at(8)},
		{"the hole lies behind the position", []span{closed(1, 5), open(8)}, pos(9), false, time.Time{}},
		{"overlapping lists", []span{closed(1, 6), closed(4, 9), open(9)}, pos(2), false, time.Time{}},
		{"every list closed: nothing after is known missing", []span{closed(1, 5)}, pos(3), false, time.Time{}},
		{"in any order", []span{open(8), closed(1, 5)}, pos(4), true, at(8)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gap, resume := coverage{spans: tc.spans}.gapAt(tc.pos)
			assert.Equal(t, tc.gap, gap)
			assert.Equal(t, tc.resume, resume)
		})
	}
}

// Between two polls the Source rotated its index twice and dropped the
// middle child (it held a deletion) from the index: the child read again
// (1) and the new one (3) leave a hole, so the Resource Lists are checked
// and, changed, reloaded: the deletion shows. (The Capability List does
// not change, so drift repair is not what finds it.)
func TestAListMissedBetweenPollsIsAGap(t *testing.T) {
	index := func(children ...string) string {
		return `<sitemapindex ` + ns + `><rs:md capability="changelist" from="2024-01-01T00:00:00Z"/>` + strings.Join(children, "") + `</sitemapindex>`
	}
	child := func(n, from, until string) string {
		u := ""
		if until != "" {
			u = ` until="` + until + `"`
		}
		return "\n<sitemap><loc>BASE/cl" + n + `.xml</loc><rs:md capability="changelist" from="` + from + `"` + u + `/></sitemap>`
	}
	s := startDocSource(t, map[string]string{
		"/caps.xml": capList("/ci.xml"),
		"/rl.xml": `<urlset ` + ns + `><rs:md capability="resourcelist" at="2024-01-01T00:00:00Z"/>
<url><loc>BASE/a.txt</loc><lastmod>2024-01-01T00:00:00Z</lastmod><rs:md length="1"/></url>
<url><loc>BASE/x.txt</loc><lastmod>2024-01-01T00:00:00Z</lastmod><rs:md length="1"/></url></urlset>`,
		"/ci.xml":  index(child("1", "2024-01-01T00:00:00Z", "")),
		"/cl1.xml": changeList("2024-01-01T00:00:00Z", "", entry("a.txt", "updated", "", "2024-01-02T00:00:00Z", 2)),
	})
	f, cat, log := followDocs(t, s)
	require.NoError(t, poll(t, f))
	require.EqualValues(t, 2, lengthOf(t, cat, s.base+"/a.txt"))

	s.set("/cl1.xml", changeList("2024-01-01T00:00:00Z", "2024-01-03T00:00:00Z", entry("a.txt", "updated", "", "2024-01-02T00:00:00Z", 2)))
	// cl2 (2024-01-03 to 01-05) deleted x.txt, and is gone from the index.
	s.set("/cl3.xml", changeList("2024-01-05T00:00:00Z", "", entry("a.txt", "updated", "", "2024-01-06T00:00:00Z", 6)))
	s.set("/ci.xml", index(child("1", "2024-01-01T00:00:00Z", "2024-01-03T00:00:00Z"), child("3", "2024-01-05T00:00:00Z", "")))
	s.set("/rl.xml", `<urlset `+ns+`><rs:md capability="resourcelist" at="2024-01-05T00:00:00Z"/>
<url><loc>BASE/a.txt</loc><lastmod>2024-01-02T00:00:00Z</lastmod><rs:md length="2"/></url></urlset>`)
	require.NoError(t, poll(t, f))
	assert.EqualValues(t, -1, lengthOf(t, cat, s.base+"/x.txt"), "the deletion only the missed list held")
	assert.EqualValues(t, 6, lengthOf(t, cat, s.base+"/a.txt"))
	assert.Contains(t, log.String(), "reloading the Resource Lists")
	assert.Zero(t, f.Status().Drift, "found by the gap, not by drift repair")
}
