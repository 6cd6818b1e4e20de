package changes

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/catalog"
	"rsfs/notify"
	"rsfs/resourcesync"
	"rsfs/source"
)

// twoSetSource serves a Source Description naming two Capability Lists,
// each with a Resource List (at 2024-01-01) and a Change List, with
// ETags, and counts the requests per path.
type twoSetSource struct {
	mu       sync.Mutex
	base     string
	changes  [3]string // per set (1, 2): Change List entries
	listed   [3]string // per set: extra Resource List entries
	capExtra [3]string // per set: extra Capability List entries
	hits     map[string]int
}

func (s *twoSetSource) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hits[r.URL.Path]++
	var body string
	n := 0
	if len(r.URL.Path) > 2 {
		fmt.Sscanf(r.URL.Path[len(r.URL.Path)-5:], "%d.xml", &n)
	}
	switch {
	case r.URL.Path == "/.well-known/resourcesync":
		body = fmt.Sprintf(`<urlset %s><rs:md capability="description"/>
<url><loc>%s/caps1.xml</loc><rs:md capability="capabilitylist"/></url>
<url><loc>%s/caps2.xml</loc><rs:md capability="capabilitylist"/></url></urlset>`, nsXML, s.base, s.base)
	case strings.HasPrefix(r.URL.Path, "/caps"):
		body = fmt.Sprintf(`<urlset %s><rs:ln rel="up" href="%s/.well-known/resourcesync"/><rs:md capability="capabilitylist"/>
<url><loc>%s/rl%d.xml</loc><rs:md capability="resourcelist"/></url>
<url><loc>%s/cl%d.xml</loc><rs:md capability="changelist"/></url>%s</urlset>`, nsXML, s.base, s.base, n, s.base, n, s.capExtra[n])
	case strings.HasPrefix(r.URL.Path, "/rl"):
		body = fmt.Sprintf(`<urlset %s><rs:md capability="resourcelist" at="2024-01-01T00:00:00Z"/>
<url><loc>%s/set%d/a.txt</loc><lastmod>2024-01-01T00:00:00Z</lastmod><rs:md length="1"/></url>%s</urlset>`, nsXML, s.base, n, s.listed[n])
	case strings.HasPrefix(r.URL.Path, "/cl"):
		body = fmt.Sprintf(`<urlset %s><rs:md capability="changelist" from="2024-01-01T00:00:00Z"/>%s</urlset>`, nsXML, s.changes[n])
	default:
		w.Header().Set("Content-Length", "1")
		w.Write([]byte("x"))
		return
	}
	etag := fmt.Sprintf(`"%d"`, len(body))
	w.Header().Set("ETag", etag)
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Write([]byte(body))
}

func (s *twoSetSource) create(set int, name, datetime string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.changes[set] += fmt.Sprintf(`<url><loc>%s/set%d/%s</loc><rs:md change="created" datetime="%s" length="1"/></url>`, s.base, set, name, datetime)
}

// requests returns the requests per path since the last call.
func (s *twoSetSource) requests() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.hits
	s.hits = map[string]int{}
	return h
}

func startTwoSets(t *testing.T) (*twoSetSource, *Follower, *catalog.Catalog) {
	t.Helper()
	src := &twoSetSource{hits: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(src.serve))
	t.Cleanup(srv.Close)
	src.base = srv.URL
	s, cat, _, err := load(t, srv.URL+"/")
	require.NoError(t, err)
	require.Len(t, s.Sets(), 2)
	f := New(s, cat, FollowOptions{}, nil)
	pollOnce(t, f) // the structure discovery read is not read again
	pollOnce(t, f) // validators for everything
	src.requests()
	return src, f, cat
}

func TestEarlyPollIsOfTheChangedFilesSetOnly(t *testing.T) {
	src, f, cat := startTwoSets(t)
	src.create(1, "one.txt", "2024-01-02T00:00:00Z")
	src.create(2, "two.txt", "2024-01-02T00:00:00Z")

	id, ok := cat.ByURI(src.base + "/set2/a.txt")
	require.True(t, ok)
	r, _ := cat.Resource(id)
	require.Equal(t, uint16(2), r.Set, "the catalog knows the set that lists the file")
	f.PollSoon(r.Set) // a read of set2/a.txt found it changed
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, f.PollEarly(ctx))

	assert.Equal(t, map[string]int{"/cl2.xml": 1}, src.requests(), "only the file's set's Change List is read")
	_, ok = cat.ByURI(src.base + "/set2/two.txt")
	assert.True(t, ok, "its set's change is applied")
	_, ok = cat.ByURI(src.base + "/set1/one.txt")
	assert.False(t, ok, "the other set waits for the next poll")

	f.PollSoon(0) // a file of unknown set (a snapshot written before sets were kept)
	require.NoError(t, f.PollEarly(ctx))
	assert.Equal(t, map[string]int{"/cl1.xml": 1, "/cl2.xml": 1}, src.requests(), "an unknown set polls every set's Change List (and not the structure)")
	_, ok = cat.ByURI(src.base + "/set1/one.txt")
	assert.True(t, ok)
}

func framework(t *testing.T, f *Follower, set *source.Set, entries string) {
	t.Helper()
	set.Hubs = []source.Channel{{Capability: resourcesync.CapFrameworkNotification, Topic: "fw", Hub: "hub"}}
	note := fmt.Sprintf(`<urlset %s><rs:md capability="framework-notification"/>%s</urlset>`, nsXML, entries)
	doc, err := resourcesync.Parse(strings.NewReader(note), "fw", resourcesync.Options{})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, f.applyNotification(ctx, notify.Notification{Topic: "fw", Doc: doc}))
}

func TestFrameworkNotificationRereadsTheResourceListItNames(t *testing.T) {
	src, f, cat := startTwoSets(t)
	src.mu.Lock()
	src.listed[2] = fmt.Sprintf(`<url><loc>%s/set2/new.txt</loc><lastmod>2024-01-03T00:00:00Z</lastmod><rs:md length="1"/></url>`, src.base)
	src.mu.Unlock()
	before := cat.Len()
	framework(t, f, f.s.Sets()[1], fmt.Sprintf(`<url><loc>%s/rl2.xml</loc><rs:md change="updated" capability="resourcelist"/></url>`, src.base))
	assert.Equal(t, map[string]int{"/rl2.xml": 1}, src.requests(), "exactly the document named")
	_, ok := cat.ByURI(src.base + "/set2/new.txt")
	assert.True(t, ok, "the resource it lists now is created")
	assert.Equal(t, before+1, cat.Len(), "nothing else changed")
	assert.Equal(t, "2024-01-01T00:00:00Z", f.Positions()[f.s.Sets()[1].URL].Time.UTC().Format(time.RFC3339), "the position does not move")

	// Unchanged since: a 304, nothing applied.
	framework(t, f, f.s.Sets()[1], fmt.Sprintf(`<url><loc>%s/rl2.xml</loc><rs:md change="updated" capability="resourcelist"/></url>`, src.base))
	assert.Equal(t, map[string]int{"/rl2.xml": 1}, src.requests())

	// The list no longer names set2/a.txt: it is the set's only list, so
	// the resource is gone; set1's resource is not touched.
	src.mu.Lock()
	src.listed[2] = ""
	src.mu.Unlock()
	framework(t, f, f.s.Sets()[1], fmt.Sprintf(`<url><loc>%s/rl2.xml</loc><rs:md change="updated" capability="resourcelist"/></url>`, src.base))
	_, ok = cat.ByURI(src.base + "/set2/new.txt")
	assert.False(t, ok, "a resource the set's only list no longer names is deleted")
	_, ok = cat.ByURI(src.base + "/set1/a.txt")
	assert.True(t, ok, "another set's resource stays")
	polls := f.Polling().Polls
	require.NoError(t, f.PollEarly(context.Background()))
	assert.Equal(t, polls, f.Polling().Polls, "a Resource List named: read, no poll asked for")
}

func TestFrameworkNotificationRereadsTheCapabilityListItNames(t *testing.T) {
	src, f, _ := startTwoSets(t)
	src.mu.Lock()
	src.capExtra[2] = fmt.Sprintf(`<url><loc>%s/cl2b.xml</loc><rs:md capability="changelist"/></url>`, src.base)
	src.mu.Unlock()
	framework(t, f, f.s.Sets()[1], fmt.Sprintf(`<url><loc>%s/caps2.xml</loc><rs:md change="updated" capability="capabilitylist"/></url>`, src.base))
	assert.Equal(t, map[string]int{"/caps2.xml": 1}, src.requests(), "exactly the document named: no poll, no reload")
	assert.Equal(t, []string{src.base + "/cl2.xml", src.base + "/cl2b.xml"}, f.s.Sets()[1].Docs[resourcesync.CapChangeList], "what it names now is followed")
	assert.Equal(t, int64(0), f.Stats().Reloads)
}
