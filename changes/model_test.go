package changes

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/catalog"
	"rsfs/notify"
	"rsfs/resourcesync"
	"rsfs/source"
)

func TestExample19UndatedEntryComesLast(t *testing.T) {
	f, err := os.Open("../resourcesync/testdata/conformance/spec-1.1-examples/resourcesync_ex_19.xml")
	require.NoError(t, err)
	defer f.Close()
	doc, err := resourcesync.Parse(f, "http://example.com/changelist.xml", resourcesync.Options{})
	require.NoError(t, err)
	cs, cov := datedChanges("ex19", &doc.Header, doc.Entries, time.Time{})
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].at.Before(cs[j].at) })
	var got []string
	for _, c := range cs {
		got = append(got, c.at.UTC().Format("15:04")+" "+c.key)
	}
	assert.Equal(t, []string{
		"11:00 created http://example.com/res1.html", // its lastmod (2000) is the resource's time, not the change's
		"13:00 updated http://example.com/res2.pdf",
		"18:00 deleted http://example.com/res3.tiff",
		"18:00 updated http://example.com/res2.pdf", // undated: after what precedes it
	}, got)
	assert.Equal(t, "2013-01-03T00:00:00Z", cov.spans[0].start.Format(time.RFC3339), "from is the coverage start")
}

// scriptedSource serves a Capability List, a Resource List at 2024-01-01
// and a Change List of the entries added, and fails HEADs while told to.
type scriptedSource struct {
	mu       sync.Mutex
	base     string
	entries  []string
	headFail atomic.Int32 // HEADs left to fail
}

const nsXML = `xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"`

func (c *scriptedSource) serve(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch r.URL.Path {
	case "/caps.xml":
		fmt.Fprintf(w, `<urlset %s><rs:md capability="capabilitylist"/>
<url><loc>%s/rl.xml</loc><rs:md capability="resourcelist"/></url>
<url><loc>%s/cl.xml</loc><rs:md capability="changelist"/></url></urlset>`, nsXML, c.base, c.base)
	case "/rl.xml":
		fmt.Fprintf(w, `<urlset %s><rs:md capability="resourcelist" at="2024-01-01T00:00:00Z"/>
<url><loc>%s/a.txt</loc><lastmod>2024-01-01T00:00:00Z</lastmod><rs:md length="1"/></url></urlset>`, nsXML, c.base)
	case "/cl.xml":
		fmt.Fprintf(w, `<urlset %s><rs:md capability="changelist" from="2024-01-01T00:00:00Z"/>%s</urlset>`, nsXML, strings.Join(c.entries, ""))
	default:
		if r.Method == http.MethodHead && c.headFail.Add(-1) >= 0 {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Length", "5")
		if r.Method == http.MethodGet {
			w.Write([]byte("hello"))
		}
	}
}

// add appends a Change List entry; length < 0 leaves it out.
func (c *scriptedSource) add(kind, name, datetime string, length int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ln := ""
	if length >= 0 {
		ln = fmt.Sprintf(` length="%d"`, length)
	}
	c.entries = append(c.entries, fmt.Sprintf(`<url><loc>%s/%s</loc><rs:md change="%s" datetime="%s"%s/></url>`, c.base, name, kind, datetime, ln))
}

func startScripted(t *testing.T) (*scriptedSource, *Follower, *catalog.Catalog) {
	t.Helper()
	cs := &scriptedSource{}
	srv := httptest.NewServer(http.HandlerFunc(cs.serve))
	t.Cleanup(srv.Close)
	cs.base = srv.URL
	s, cat, _, err := load(t, srv.URL+"/caps.xml")
	require.NoError(t, err)
	return cs, New(s, cat, FollowOptions{}, nil), cat
}

func pollOnce(t *testing.T, f *Follower) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, f.Poll(ctx))
}

func onlyPosition(f *Follower) Position {
	for _, p := range f.Positions() {
		return p
	}
	return Position{}
}

func TestFailedChangeIsRetriedAndHoldsThePosition(t *testing.T) {
	cs, f, cat := startScripted(t)
	cs.add("created", "b.txt", "2024-01-02T00:00:00Z", -1) // its length needs a HEAD
	cs.add("created", "c.txt", "2024-01-03T00:00:00Z", 2)
	cs.headFail.Store(100) // fetch retries included: the first poll's HEAD fails
	pollOnce(t, f)
	_, ok := cat.ByURI(cs.base + "/b.txt")
	assert.False(t, ok, "a change whose length could not be learned is not applied")
	_, ok = cat.ByURI(cs.base + "/c.txt")
	assert.True(t, ok, "a later change is applied meanwhile")
	assert.Equal(t, "2024-01-01T00:00:00Z", onlyPosition(f).Time.UTC().Format(time.RFC3339), "the position stays before the failed change")

	cs.headFail.Store(0)
	pollOnce(t, f)
	id, ok := cat.ByURI(cs.base + "/b.txt")
	require.True(t, ok, "retried at the next poll")
	a, _ := cat.Attr(id)
	assert.Equal(t, int64(5), a.Size)
	assert.Equal(t, "2024-01-03T00:00:00Z", onlyPosition(f).Time.UTC().Format(time.RFC3339))
}

func TestFutureChangeNeverMovesThePosition(t *testing.T) {
	cs, f, cat := startScripted(t)
	cs.add("created", "future.txt", "9999-12-31T00:00:00Z", 2)
	pollOnce(t, f)
	_, ok := cat.ByURI(cs.base + "/future.txt")
	assert.True(t, ok, "applied")
	assert.Equal(t, "2024-01-01T00:00:00Z", onlyPosition(f).Time.UTC().Format(time.RFC3339), "the position does not jump to 9999")

	cs.add("created", "later.txt", "2024-01-05T00:00:00Z", 2) // listed after it, dated before
	pollOnce(t, f)
	_, ok = cat.ByURI(cs.base + "/later.txt")
	assert.True(t, ok, "a change after a future-dated one is still followed")
	assert.Equal(t, int64(2), f.Stats().Applied, "the future-dated change is applied once")
}

func TestPushedChangeDoesNotSkipUnseenChanges(t *testing.T) {
	cs, f, cat := startScripted(t)
	set := f.s.Sets()[0]
	set.Hubs = []source.Channel{{Capability: resourcesync.CapChangeNotification, Topic: "topic", Hub: "hub"}}
	note := fmt.Sprintf(`<urlset %s><rs:md capability="change-notification"/>
<url><loc>%s/pushed.txt</loc><rs:md change="created" datetime="2024-01-03T00:00:00Z" length="2"/></url></urlset>`, nsXML, cs.base)
	doc, err := resourcesync.Parse(strings.NewReader(note), "topic", resourcesync.Options{})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, f.applyNotification(ctx, notify.Notification{Topic: "topic", Doc: doc}))
	_, ok := cat.ByURI(cs.base + "/pushed.txt")
	require.True(t, ok, "a pushed change shows at once")

	// The Change List then carries an earlier change the push did not.
	cs.add("created", "earlier.txt", "2024-01-02T00:00:00Z", 2)
	cs.add("created", "pushed.txt", "2024-01-03T00:00:00Z", 2)
	pollOnce(t, f)
	_, ok = cat.ByURI(cs.base + "/earlier.txt")
	assert.True(t, ok, "an earlier change only the Change List carries is not skipped")
	assert.Equal(t, int64(2), f.Stats().Applied, "the pushed change, then the earlier one: the pushed one is not applied twice")
	assert.Equal(t, "2024-01-03T00:00:00Z", onlyPosition(f).Time.UTC().Format(time.RFC3339))
}

// A 1.0 Change Notification (resourcesync_push's 1.0 output: from and
// until in the header, entries dated by lastmod) is applied as the poll
// would apply it, not dropped as an undated change before the position.
func TestPushed10NotificationIsDatedByLastmod(t *testing.T) {
	cs, f, cat := startScripted(t)
	set := f.s.Sets()[0]
	set.Hubs = []source.Channel{{Capability: resourcesync.CapChangeNotification, Topic: "topic", Hub: "hub"}}
	note := fmt.Sprintf(`<urlset %s><rs:md capability="change-notification" from="2023-12-01T00:00:00Z" until="2024-01-04T00:00:00Z"/>
<url><loc>%s/pushed10.txt</loc><lastmod>2024-01-03T00:00:00Z</lastmod><rs:md change="created" length="2"/></url></urlset>`, nsXML, cs.base)
	doc, err := resourcesync.Parse(strings.NewReader(note), "topic", resourcesync.Options{})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, f.applyNotification(ctx, notify.Notification{Topic: "topic", Doc: doc}))
	_, ok := cat.ByURI(cs.base + "/pushed10.txt")
	assert.True(t, ok, "a pushed 1.0 change shows at once")
}

func TestSnapshotPositionRoundTrips(t *testing.T) {
	p := Position{Time: time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)}
	p.seen("created http://x/a")
	p.seen("created http://x/b")
	p.Ahead = map[string]Mark{"http://x/c": {At: time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC), Key: "created http://x/c"}}
	data, err := p.MarshalJSON()
	require.NoError(t, err)
	assert.JSONEq(t, `{"time":"2024-01-02T00:00:00Z","seen":["created http://x/a","created http://x/b"],
		"ahead":{"http://x/c":{"at":"9999-12-31T00:00:00Z","key":"created http://x/c"}}}`, string(data))
	var q Position
	require.NoError(t, q.UnmarshalJSON(data))
	assert.Equal(t, p, q)
}

func TestClosedChangeListLeadsToItsIndex(t *testing.T) {
	var base string
	var later atomic.Value
	later.Store("")
	srv := httptest.NewServer(withETags(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/caps.xml":
			fmt.Fprintf(w, `<urlset %s><rs:md capability="capabilitylist"/>
<url><loc>%s/rl.xml</loc><rs:md capability="resourcelist"/></url>
<url><loc>%s/cl-1.xml</loc><rs:md capability="changelist"/></url></urlset>`, nsXML, base, base)
		case "/rl.xml":
			fmt.Fprintf(w, `<urlset %s><rs:md capability="resourcelist" at="2024-01-01T00:00:00Z"/>
<url><loc>%s/a.txt</loc><lastmod>2024-01-01T00:00:00Z</lastmod><rs:md length="1"/></url></urlset>`, nsXML, base)
		case "/cl-1.xml":
			fmt.Fprintf(w, `<urlset %s><rs:ln rel="index" href="%s/index.xml"/>
<rs:md capability="changelist" from="2024-01-01T00:00:00Z" until="2024-01-02T00:00:00Z"/>
<url><loc>%s/b.txt</loc><rs:md change="created" datetime="2024-01-01T12:00:00Z" length="1"/></url></urlset>`, nsXML, base, base)
		case "/index.xml":
			fmt.Fprintf(w, `<sitemapindex %s><rs:md capability="changelist" from="2024-01-01T00:00:00Z"/>
<sitemap><loc>%s/cl-1.xml</loc><rs:md capability="changelist" from="2024-01-01T00:00:00Z" until="2024-01-02T00:00:00Z"/></sitemap>
<sitemap><loc>%s/cl-2.xml</loc><rs:md capability="changelist" from="2024-01-02T00:00:00Z"/></sitemap></sitemapindex>`, nsXML, base, base)
		case "/cl-2.xml":
			fmt.Fprintf(w, `<urlset %s><rs:md capability="changelist" from="2024-01-02T00:00:00Z"/>
<url><loc>%s/c.txt</loc><rs:md change="created" datetime="2024-01-02T12:00:00Z" length="1"/></url>%s</urlset>`, nsXML, base, later.Load())
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	base = srv.URL
	s, cat, _, err := load(t, srv.URL+"/caps.xml")
	require.NoError(t, err)
	f := New(s, cat, FollowOptions{}, nil)
	pollOnce(t, f)
	_, ok := cat.ByURI(base + "/b.txt")
	assert.True(t, ok, "the closed list's changes are applied")
	pollOnce(t, f)
	_, ok = cat.ByURI(base + "/c.txt")
	assert.True(t, ok, "the next list is found through the closed list's index")
	assert.Equal(t, "2024-01-02T12:00:00Z", onlyPosition(f).Time.UTC().Format(time.RFC3339))

	// The Capability List still names the closed list: re-read at every
	// poll, it must not lead the set back to it, away from the index.
	later.Store(fmt.Sprintf(`<url><loc>%s/d.txt</loc><rs:md change="created" datetime="2024-01-03T00:00:00Z" length="1"/></url>`, base))
	pollOnce(t, f)
	pollOnce(t, f)
	_, ok = cat.ByURI(base + "/d.txt")
	assert.True(t, ok, "changes after the closed list are still followed through its index")
}

func TestFrameworkNotificationReadsTheChangeListItNames(t *testing.T) {
	cs, f, cat := startScripted(t)
	set := f.s.Sets()[0]
	set.Hubs = []source.Channel{{Capability: resourcesync.CapFrameworkNotification, Topic: "fw", Hub: "hub"}}
	cs.add("created", "b.txt", "2024-01-02T00:00:00Z", 2)
	note := fmt.Sprintf(`<urlset %s><rs:md capability="framework-notification"/>
<url><loc>%s/cl.xml</loc><rs:md change="updated" capability="changelist"/></url></urlset>`, nsXML, cs.base)
	doc, err := resourcesync.Parse(strings.NewReader(note), "fw", resourcesync.Options{})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, f.applyNotification(ctx, notify.Notification{Topic: "fw", Doc: doc}))
	_, ok := cat.ByURI(cs.base + "/b.txt")
	assert.True(t, ok, "the Change List it names is read and applied")
	assert.Equal(t, 2, cat.Len(), "nothing reloaded, nothing lost")
	assert.Equal(t, "2024-01-01T00:00:00Z", onlyPosition(f).Time.UTC().Format(time.RFC3339), "a push never moves the position")
	polls := f.Polling().Polls
	require.NoError(t, f.PollEarly(ctx))
	assert.Equal(t, polls, f.Polling().Polls, "a Change List named: no early poll asked for")

	pollOnce(t, f)
	assert.Equal(t, int64(1), f.Stats().Applied, "the poll confirms it without applying it again")
	assert.Equal(t, "2024-01-02T00:00:00Z", onlyPosition(f).Time.UTC().Format(time.RFC3339))
}

func TestSourceDescriptionAddingASetReloads(t *testing.T) {
	var base string
	var two atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/resourcesync":
			w.Header().Set("ETag", fmt.Sprintf(`"%v"`, two.Load()))
			if r.Header.Get("If-None-Match") == w.Header().Get("ETag") {
				w.WriteHeader(http.StatusNotModified)
				return
			}
			extra := ""
			if two.Load() {
				extra = fmt.Sprintf(`<url><loc>%s/caps2.xml</loc><rs:md capability="capabilitylist"/></url>`, base)
			}
			fmt.Fprintf(w, `<urlset %s><rs:md capability="description"/>
<url><loc>%s/caps1.xml</loc><rs:md capability="capabilitylist"/></url>%s</urlset>`, nsXML, base, extra)
		case "/caps1.xml", "/caps2.xml":
			n := r.URL.Path[5:6]
			fmt.Fprintf(w, `<urlset %s><rs:ln rel="up" href="%s/.well-known/resourcesync"/><rs:md capability="capabilitylist"/>
<url><loc>%s/rl%s.xml</loc><rs:md capability="resourcelist"/></url></urlset>`, nsXML, base, base, n)
		case "/rl1.xml", "/rl2.xml":
			n := r.URL.Path[3:4]
			fmt.Fprintf(w, `<urlset %s><rs:md capability="resourcelist" at="2024-01-01T00:00:00Z"/>
<url><loc>%s/set%s/a.txt</loc><lastmod>2024-01-01T00:00:00Z</lastmod><rs:md length="1"/></url></urlset>`, nsXML, base, n)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	base = srv.URL
	s, cat, _, err := load(t, srv.URL+"/")
	require.NoError(t, err)
	require.Len(t, s.Sets(), 1)
	f := New(s, cat, FollowOptions{}, nil)
	pollOnce(t, f) // the structure discovery just read is not read again
	pollOnce(t, f) // reads it: unchanged
	two.Store(true)
	pollOnce(t, f)
	_, ok := cat.ByURI(base + "/set2/a.txt")
	assert.True(t, ok, "the new set's resources are loaded")
	assert.Len(t, f.Positions(), 2, "both sets are followed")
	assert.Equal(t, int64(1), f.Stats().Reloads)
	pollOnce(t, f)
	assert.Equal(t, int64(1), f.Stats().Reloads, "once")
}

func TestSnapshotDuringReloadDoesNotRace(t *testing.T) {
	_, f, _ := startScripted(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		var err error
		for range 5 {
			if err = f.Reload(ctx); err != nil {
				break
			}
		}
		done <- err
	}()
	var st *source.State
	for range 50 { // run with -race: a list time written without applyMu is flagged
		require.NoError(t, f.Snapshot(func(data []byte) error {
			var err error
			st, err = source.DecodeState(data)
			return err
		}))
	}
	require.NoError(t, <-done)
	assert.Equal(t, "2024-01-01T00:00:00Z", st.Sets[0].ListedAt.UTC().Format(time.RFC3339), "the list time survives a reload")
}

func TestChangeRefusedByAFullCatalogIsRetriedThenGivenUp(t *testing.T) {
	cs := &scriptedSource{}
	srv := httptest.NewServer(http.HandlerFunc(cs.serve))
	t.Cleanup(srv.Close)
	cs.base = srv.URL
	s, err := discover(t, srv.URL+"/caps.xml")
	require.NoError(t, err)
	cat := catalog.New(catalog.Options{Origin: s.Origin, Limits: catalog.Limits{Records: 2}})
	_, err = s.Load(context.Background(), cat, nil)
	require.NoError(t, err)
	f := New(s, cat, FollowOptions{}, nil)
	cs.add("created", "b.txt", "2024-01-02T00:00:00Z", 2)
	for i := 1; i < maxAttempts; i++ {
		pollOnce(t, f)
		_, ok := cat.ByURI(cs.base + "/b.txt")
		require.False(t, ok, "no room: not applied")
		assert.Equal(t, "2024-01-01T00:00:00Z", onlyPosition(f).Time.UTC().Format(time.RFC3339), "poll %d: the position stays before the refused change", i)
	}
	pollOnce(t, f)
	assert.Equal(t, "2024-01-02T00:00:00Z", onlyPosition(f).Time.UTC().Format(time.RFC3339), "given up after %d polls: following goes on", maxAttempts)
	assert.Equal(t, 1, cat.Len())
}

// withETags serves h's responses with an ETag of their bytes, and 304 to
// a request that already has them.
func withETags(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h(rec, r)
		if rec.Code != http.StatusOK {
			w.WriteHeader(rec.Code)
			w.Write(rec.Body.Bytes())
			return
		}
		etag := fmt.Sprintf(`"%x"`, sha256.Sum256(rec.Body.Bytes()))
		w.Header().Set("ETag", etag)
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Write(rec.Body.Bytes())
	})
}
