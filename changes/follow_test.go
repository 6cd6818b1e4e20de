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
)

// changeSource serves a Capability List whose Change List is an index
// (with an ETag, so polls get 304 while it is unchanged) of one open child
// Change List that grows.
type changeSource struct {
	mu      sync.Mutex
	base    string
	entries []string
}

func (c *changeSource) serve(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	head := `<?xml version="1.0" encoding="UTF-8"?>` + "\n"
	ns := `xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"`
	switch r.URL.Path {
	case "/caps.xml":
		fmt.Fprintf(w, `%s<urlset %s><rs:md capability="capabilitylist"/>
<url><loc>%s/rl.xml</loc><rs:md capability="resourcelist"/></url>
<url><loc>%s/cl-index.xml</loc><rs:md capability="changelist"/></url></urlset>`, head, ns, c.base, c.base)
	case "/rl.xml":
		fmt.Fprintf(w, `%s<urlset %s><rs:md capability="resourcelist" at="2024-01-01T00:00:00Z"/>
<url><loc>%s/a.txt</loc><lastmod>2024-01-01T00:00:00Z</lastmod><rs:md length="1"/></url></urlset>`, head, ns, c.base)
	case "/cl-index.xml":
		w.Header().Set("ETag", `"index-1"`)
		if r.Header.Get("If-None-Match") == `"index-1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		fmt.Fprintf(w, `%s<sitemapindex %s><rs:md capability="changelist" from="2024-01-01T00:00:00Z"/>
<sitemap><loc>%s/cl-1.xml</loc><rs:md capability="changelist" from="2024-01-01T00:00:00Z"/></sitemap></sitemapindex>`, head, ns, c.base)
	case "/cl-1.xml":
		fmt.Fprintf(w, `%s<urlset %s><rs:md capability="changelist" from="2024-01-01T00:00:00Z"/>%s</urlset>`, head, ns, strings.Join(c.entries, ""))
	default:
		http.NotFound(w, r)
	}
}

func (c *changeSource) create(name, at string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries = append(c.entries, fmt.Sprintf(`<url><loc>%s/%s</loc><lastmod>%s</lastmod><rs:md change="created" datetime="%s" length="2"/></url>`, c.base, name, at, at))
}

func TestPollFollowsTheChildrenOfAnUnchangedIndex(t *testing.T) {
	cs := &changeSource{}
	srv := httptest.NewServer(http.HandlerFunc(cs.serve))
	t.Cleanup(srv.Close)
	cs.base = srv.URL
	s, cat, _, err := load(t, srv.URL+"/caps.xml")
	require.NoError(t, err)
	var effects []catalog.Effect
	f := New(s, cat, FollowOptions{Effects: func(e []catalog.Effect) { effects = append(effects, e...) }}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	cs.create("b.txt", "2024-01-02T00:00:00Z")
	require.NoError(t, f.Poll(ctx))
	_, ok := cat.ByURI(srv.URL + "/b.txt")
	require.True(t, ok, "created through the index")

	cs.create("c.txt", "2024-01-03T00:00:00Z") // the index itself is unchanged: 304
	require.NoError(t, f.Poll(ctx))
	_, ok = cat.ByURI(srv.URL + "/c.txt")
	assert.True(t, ok, "a change in the open child list of an unchanged index")
	assert.Equal(t, 3, cat.Len())
	assert.Equal(t, int64(2), f.Stats().Applied, "each change applied once")
	pos := f.Positions()[srv.URL+"/caps.xml"]
	assert.Equal(t, time.Date(2024, 1, 3, 0, 0, 0, 0, time.UTC), pos.Time.UTC())
}
