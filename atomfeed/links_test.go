package atomfeed

import (
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
	"rsfs/fetch"
)

// linksFeed is a complete Atom-PMH feed of one record whose entry links,
// beside its one alternate link (its file), to more about it.
const linksFeed = `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:fh="http://purl.org/syndication/history/1.0">
  <link rel="self" href="{base}/feed.xml"/>
  <updated>{updated}</updated>
  <id>urn:uuid:60a76c80-d399-11d9-b93C-0003939e0af6</id>
  <title>links</title>
  <fh:complete/>
  <entry>
    <title>One</title>
    <id>urn:x:one</id>
    <updated>{updated}</updated>
    <link type="text/plain" href="{base}/rec/one.txt"/>
{links}
  </entry>
</feed>
`

// An entry's links other than alternate are the record's files' links
// (user.atompmh.link.<rel>); a new set of them in the feed is a change.
func TestRelatedLinks(t *testing.T) {
	var mu sync.Mutex
	updated := "2024-01-01T00:00:00Z"
	links := `    <link rel="describedby" type="application/xml" href="{base}/meta/one.xml"/>
    <link rel="http://www.iana.org/assignments/relation/via" href="http://original.example/one"/>`
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch r.URL.Path {
		case "/feed.xml":
			doc := strings.NewReplacer("{links}", links, "{updated}", updated).Replace(linksFeed)
			w.Header().Set("Content-Type", "application/atom+xml")
			fmt.Fprint(w, strings.ReplaceAll(doc, "{base}", srv.URL))
		case "/rec/one.txt":
			w.Header().Set("Content-Length", "4")
			fmt.Fprint(w, "one\n")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	client := fetch.New(fetch.Options{Retries: -1, Timeout: 5 * time.Second})
	feed, err := New(srv.URL+"/feed.xml", Options{Client: client, Logger: quiet})
	require.NoError(t, err)
	cat := feed.NewCatalog()
	var effects []catalog.Effect
	fl := feed.NewFollower(cat, FollowOptions{Effects: func(e []catalog.Effect) { effects = append(effects, e...) }})
	require.NoError(t, fl.Load(testCtx(t)))

	linksOf := func() []string {
		id, ok := cat.ByURI(srv.URL + "/rec/one.txt")
		require.True(t, ok)
		r, _ := cat.Resource(id)
		var out []string
		for _, l := range r.Links {
			out = append(out, l.Rel+" "+l.Href+" "+l.Type)
		}
		return out
	}
	assert.Equal(t, []string{"describedby " + srv.URL + "/meta/one.xml application/xml", "via http://original.example/one "}, linksOf())

	rep, err := feed.Inspect(testCtx(t))
	require.NoError(t, err)
	require.Len(t, rep.Links, 2)
	assert.Equal(t, 1, rep.Links["describedby"].Count)
	assert.Equal(t, "user.atompmh.link.describedby", rep.Links["describedby"].Attr)
	assert.Equal(t, "urn:x:one", rep.Links["describedby"].Example.Record)
	assert.Equal(t, "user.atompmh.link.via", rep.Links["via"].Attr)

	mu.Lock()
	links = `    <link rel="related" href="{base}/rec/two.txt"/>`
	updated = "2024-01-02T00:00:00Z"
	mu.Unlock()
	require.NoError(t, fl.Poll(testCtx(t)))
	assert.Equal(t, []string{"related " + srv.URL + "/rec/two.txt "}, linksOf())
	assert.NotEmpty(t, effects)
}
