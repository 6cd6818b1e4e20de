package source

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/fetch"
	"rsfs/resourcesync"
	"rsfs/tests/sourcetest"
)

func testOptions() Options {
	return Options{Client: fetch.New(fetch.Options{Retries: -1, Timeout: 5 * time.Second})}
}

func discover(t *testing.T, url string) (*Source, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return Discover(ctx, url, testOptions())
}

func startTestSource(t *testing.T, cfg sourcetest.Config) *sourcetest.Source {
	t.Helper()
	src, err := sourcetest.Start(cfg)
	require.NoError(t, err)
	t.Cleanup(src.Close)
	return src
}

// site serves fixed pages; anything else is 404. Bodies may use {base}.
type page struct {
	body    string
	ctype   string
	headers map[string]string
	status  int // 200 when 0
}

func site(t *testing.T, pages map[string]page) string {
	t.Helper()
	var base string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := pages[r.URL.RequestURI()]
		if !ok {
			http.NotFound(w, r)
			return
		}
		for k, v := range p.headers {
			w.Header().Set(k, strings.ReplaceAll(v, "{base}", base))
		}
		if p.ctype != "" {
			w.Header().Set("Content-Type", p.ctype)
		}
		if p.status != 0 {
			w.WriteHeader(p.status)
		}
		_, _ = w.Write([]byte(strings.ReplaceAll(p.body, "{base}", base)))
	}))
	t.Cleanup(srv.Close)
	base = srv.URL
	return base + "/"
}

const capList = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="capabilitylist"/>
  <url><loc>{base}/rl.xml</loc><rs:md capability="resourcelist"/></url>
  <url><loc>{base}/cl.xml</loc><rs:md capability="changelist"/>
    <rs:ln rel="hub" href="{base}/hub"/></url>
</urlset>`

const nsXML = `xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"`

const resList = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="resourcelist" at="2024-01-02T03:04:05Z"/>
  <url><loc>{base}/a.txt</loc><rs:md length="3"/></url>
</urlset>`

func TestDiscoverSourceDescription11(t *testing.T) {
	src := startTestSource(t, sourcetest.Config{Resources: 10, ResourceSets: 2})
	s, err := discover(t, src.URL())
	require.NoError(t, err)
	assert.Equal(t, src.WellKnownURL(), s.Entry)
	require.Len(t, s.Sets(), 2)
	for i, set := range s.Sets() {
		assert.Equal(t, src.CapabilityListURL(i), set.URL)
		assert.Equal(t, []string{src.ResourceListURL(i)}, set.Docs[resourcesync.CapResourceList])
		assert.Equal(t, []string{src.ChangeListURL(i)}, set.Docs[resourcesync.CapChangeList])
	}
}

func TestDiscoverCapabilityList10(t *testing.T) {
	src := startTestSource(t, sourcetest.Config{Resources: 10, Layout: sourcetest.Layout10})
	s, err := discover(t, src.URL())
	require.NoError(t, err)
	require.Len(t, s.Sets(), 1)
	assert.Equal(t, []string{src.ResourceListURL(0)}, s.Sets()[0].Docs[resourcesync.CapResourceList])
}

func TestDiscoverCapabilityListIndex10(t *testing.T) {
	src := startTestSource(t, sourcetest.Config{Resources: 10, Layout: sourcetest.Layout10, ResourceSets: 3})
	s, err := discover(t, src.URL())
	require.NoError(t, err)
	assert.Len(t, s.Sets(), 3)
}

func TestDiscoverDocumentURLs(t *testing.T) {
	src := startTestSource(t, sourcetest.Config{Resources: 30, PerList: 10})
	cases := map[string]struct {
		url  string
		cap  resourcesync.Capability
		sets int
	}{
		"capability list": {src.CapabilityListURL(0), resourcesync.CapResourceList, 1},
		"resource list":   {src.ResourceListURL(0), resourcesync.CapResourceList, 1},
		"change list":     {src.ChangeListURL(0), resourcesync.CapChangeList, 1},
		"well-known":      {src.WellKnownURL(), resourcesync.CapResourceList, 1},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			s, err := discover(t, c.url)
			require.NoError(t, err)
			require.Len(t, s.Sets(), c.sets)
			assert.NotEmpty(t, s.Sets()[0].Docs[c.cap])
			assert.Equal(t, c.url, s.Entry)
		})
	}
}

func TestDiscoverThroughLinkHeader(t *testing.T) {
	src := startTestSource(t, sourcetest.Config{Resources: 5})
	s, err := discover(t, src.Resources()[2].URI)
	require.NoError(t, err)
	require.Len(t, s.Sets(), 1)
	assert.Equal(t, src.CapabilityListURL(0), s.Sets()[0].URL)
}

func TestDiscoverThroughHTMLLink(t *testing.T) {
	base := site(t, map[string]page{
		"/":         {body: `<html><head><LINK href="/caps.xml" REL="resourcesync"></head></html>`, ctype: "text/html"},
		"/caps.xml": {body: capList},
	})
	s, err := discover(t, base)
	require.NoError(t, err)
	require.Len(t, s.Sets(), 1)
	assert.Equal(t, base+"caps.xml", s.Sets()[0].URL)
	assert.Equal(t, []string{base + "rl.xml"}, s.Sets()[0].Docs[resourcesync.CapResourceList])
	require.Len(t, s.Sets()[0].Hubs, 1)
	assert.Equal(t, Channel{Capability: resourcesync.CapChangeList, Topic: base + "cl.xml", Hub: base + "hub"}, s.Sets()[0].Hubs[0])
}

func TestDiscoverThroughRobots(t *testing.T) {
	base := site(t, map[string]page{
		"/robots.txt": {body: "User-agent: *\nDisallow:\nSitemap: {base}/rl.xml\nsitemap: /other.xml\n"},
		"/rl.xml":     {body: resList},
	})
	s, err := discover(t, base)
	require.NoError(t, err)
	require.Len(t, s.Sets(), 1)
	assert.Equal(t, []string{base + "rl.xml"}, s.Sets()[0].Docs[resourcesync.CapResourceList])
	require.Len(t, s.Failed, 1, "the line whose document is missing")
	assert.Equal(t, base+"other.xml", s.Failed[0].URL)
	assert.Contains(t, s.Failed[0].Msg, "404")
}

func TestDiscoverNothing(t *testing.T) {
	base := site(t, map[string]page{"/": {body: "<html>hello</html>", ctype: "text/html"}})
	_, err := discover(t, base)
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrNotFound), "%v", err)
}

func TestDiscoverMissingDocumentIsAnError(t *testing.T) {
	base := site(t, map[string]page{"/.well-known/resourcesync": {body: capList}})
	_, err := discover(t, base+"nothing-here.xml")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "404")
	assert.Contains(t, err.Error(), "nothing-here.xml")
}

func TestDiscoverMalformedWellKnown(t *testing.T) {
	base := site(t, map[string]page{"/.well-known/resourcesync": {body: `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"><rs:md capability="description"/><url><loc>x</url>`}})
	_, err := discover(t, base)
	require.Error(t, err)
	assert.Contains(t, err.Error(), ".well-known/resourcesync")
}

func TestDiscoverWrongNamespace(t *testing.T) {
	base := site(t, map[string]page{"/.well-known/resourcesync": {body: `<urlset xmlns="http://example.org/not-sitemaps"><url><loc>x</loc></url></urlset>`}})
	_, err := discover(t, base)
	require.Error(t, err)
	var pe *resourcesync.ParseError
	assert.True(t, errors.As(err, &pe), "%v", err)
}

func TestDiscoverUnreachable(t *testing.T) {
	_, err := discover(t, "http://127.0.0.1:1/")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "127.0.0.1:1")
}

func TestDiscoverRejectsNonHTTP(t *testing.T) {
	_, err := discover(t, "ftp://example.org/")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not an http(s) URL")
}

// A document is a Sitemap by its root element's name, whatever its
// prefix; a page that only mentions one is not.
func TestIsSitemapByRootElement(t *testing.T) {
	for doc, want := range map[string]bool{
		`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"/>`:                       true,
		`<?xml version="1.0"?><sm:urlset xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9"></sm:urlset>`:      true,
		`<!-- a comment --><x:sitemapindex xmlns:x="http://www.sitemaps.org/schemas/sitemap/0.9"/>`:                true,
		`<?xml version="1.0" encoding="ISO-8859-1"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"/>`: true,
		"\ufeff<?xml version=\"1.0\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"/>":           true,
		`<!DOCTYPE html><html><body><pre>&lt;urlset&gt;</pre><!-- <urlset> --></body></html>`:                      false,
		`<html><head><link rel="resourcesync" href="/caps.xml"></head><body><p>See <code>urlset</code></p></html>`: false,
	} {
		assert.Equal(t, want, isSitemap(bufReader(doc)), doc)
	}
}
