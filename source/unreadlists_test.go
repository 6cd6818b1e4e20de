package source

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/catalog"
)

// indexOfTwo is a Resource List Index (1.1 §8.2, example 7) of two Resource
// Lists, each of which tests serve their own way.
const indexOfTwo = `<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex ` + nsXML + `>
  <rs:md capability="resourcelist" at="2024-01-02T03:04:05Z"/>
  <sitemap><loc>{base}/rl1.xml</loc></sitemap>
  <sitemap><loc>{base}/rl2.xml</loc></sitemap>
</sitemapindex>`

func childList(name string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>
<urlset ` + nsXML + `>
  <rs:md capability="resourcelist" at="2024-01-02T03:04:05Z"/>
  <url><loc>{base}/` + name + `</loc><rs:md length="3"/></url>
</urlset>`
}

// A Resource List Index one of whose children breaks off after its first
// entry and the other answers 404: the first load keeps what it read (the
// entry before the break), notes both unread with their errors, and
// RetryUnread says when they read; a reload then reads them and
// forgets them. A reload while one fails fails, dropping nothing.
func TestUnreadResourceListLeftOutAndRetried(t *testing.T) {
	pages := map[string]page{
		"/caps.xml": {body: `<?xml version="1.0" encoding="UTF-8"?>
<urlset ` + nsXML + `>
  <rs:md capability="capabilitylist"/>
  <url><loc>{base}/rli.xml</loc><rs:md capability="resourcelist"/></url>
</urlset>`},
		"/rli.xml": {body: indexOfTwo},
		"/rl1.xml": {body: `<?xml version="1.0" encoding="UTF-8"?>
<urlset ` + nsXML + `>
  <rs:md capability="resourcelist" at="2024-01-02T03:04:05Z"/>
  <url><loc>{base}/a</loc><rs:md length="3"/></url>
  <url><loc>{base}/b</loc><rs:md length="many"/></url>
</urlset>`},
	}
	base := site(t, pages)
	s, cat, _, err := load(t, base+"caps.xml")
	require.NoError(t, err)
	assert.Equal(t, []string{base + "a"}, cat.URIs(), "the entry before the break")
	unread := s.UnreadLists(s.Sets()[0])
	require.Len(t, unread, 2)
	assert.ErrorContains(t, unread[base+"rl1.xml"].Err, "rl1.xml:5")
	assert.ErrorContains(t, unread[base+"rl2.xml"].Err, "404")

	st := s.State(json.RawMessage(`{}`))
	require.Len(t, st.Unread, 2)
	assert.Equal(t, SavedUnreadDoc{URL: base + "rl2.xml", Kind: UnreadResourceList, Set: base + "caps.xml",
		Error: unread[base+"rl2.xml"].Err.Error(), Since: unread[base+"rl2.xml"].Since}, st.Unread[1])
	r := Restore(st, testOptions())
	assert.Len(t, r.UnreadLists(r.Sets()[0]), 2, "a Source restored from the state still shows them")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	assert.False(t, retry(ctx, s), "still broken")
	var mu sync.Mutex // the sink is called from the loading workers
	var seen []string
	sink := func(r *catalog.Resource) error { mu.Lock(); seen = append(seen, r.URI); mu.Unlock(); return nil }
	_, err = s.LoadEach(ctx, sink)
	require.Error(t, err, "a reload never goes on without a list")
	assert.Len(t, s.UnreadLists(s.Sets()[0]), 2)

	pages["/rl1.xml"] = page{body: childList("a")}
	pages["/rl2.xml"] = page{body: childList("c")}
	assert.True(t, retry(ctx, s), "they read now")
	seen = nil
	_, err = s.LoadEach(ctx, sink)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{base + "a", base + "c"}, seen)
	assert.Empty(t, s.UnreadLists(s.Sets()[0]), "the reload read them")
}

// A Source none of whose Resource Lists can be read, with no dump, has
// nothing to mount: the first load fails, naming each list and why.
func TestNoReadableResourceListFailsTheLoad(t *testing.T) {
	base := site(t, map[string]page{
		"/rli.xml": {body: indexOfTwo},
		"/rl1.xml": {status: http.StatusGone},
	})
	_, _, _, err := load(t, base+"rli.xml")
	require.Error(t, err)
	for _, want := range []string{"no Resource List", base + "rl1.xml", "410", base + "rl2.xml", "404"} {
		assert.ErrorContains(t, err, want)
	}
}
