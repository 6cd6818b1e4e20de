package discover

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/fetch"
	"rsfs/protocol"
	"rsfs/source"
	"rsfs/tests/sourcetest"
)

const atomFeedDoc = `<?xml version="1.0" encoding="utf-8"?>
<!-- a comment first -->
<feed xmlns="http://www.w3.org/2005/Atom"><id>urn:x</id><updated>2024-01-01T00:00:00Z</updated></feed>`

const capList = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="capabilitylist"/>
  <url><loc>{base}/rl.xml</loc><rs:md capability="resourcelist"/></url>
</urlset>`

const resList = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="resourcelist" at="2024-01-02T03:04:05Z"/>
  <url><loc>{base}/a.txt</loc><rs:md length="3"/></url>
</urlset>`

// page is a fixed answer of site.
type page struct {
	body, ctype string
	headers     map[string]string
}

// site serves fixed pages, in which {base} is its URL; anything else is
// 404. It returns its URL with a slash.
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
			w.Header().Set(k, v)
		}
		if p.ctype != "" {
			w.Header().Set("Content-Type", p.ctype)
		}
		_, _ = w.Write([]byte(strings.ReplaceAll(p.body, "{base}", base)))
	}))
	t.Cleanup(srv.Close)
	base = srv.URL
	return base + "/"
}

func at(t *testing.T, url string) (*Found, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return At(ctx, url, source.Options{Client: fetch.New(fetch.Options{Retries: -1, Timeout: 5 * time.Second})})
}

// feedAt is the URL of the feed discovery found at url.
func feedAt(t *testing.T, url string) string {
	t.Helper()
	found, err := at(t, url)
	require.NoError(t, err)
	require.Equal(t, protocol.AtomPMH, found.Protocol())
	require.NotNil(t, found.Feed)
	assert.Nil(t, found.Source)
	return found.Feed.URL
}

// Discovery names the protocol it found; a feed is a result, not an error.
func TestAtNamesTheProtocolItFound(t *testing.T) {
	src, err := sourcetest.Start(sourcetest.Config{Resources: 3})
	require.NoError(t, err)
	t.Cleanup(src.Close)
	found, err := at(t, src.URL())
	require.NoError(t, err)
	assert.Equal(t, protocol.ResourceSync, found.Protocol())
	require.NotNil(t, found.Source)
	assert.Nil(t, found.Feed)
	assert.Len(t, found.Source.Sets(), 1)

	base := site(t, map[string]page{
		"/records.atom": {body: atomFeedDoc, ctype: "text/xml", headers: map[string]string{"ETag": `"v1"`}},
		"/plain.txt":    {body: "neither"},
	})
	assert.Equal(t, base+"records.atom", feedAt(t, base+"records.atom"))
	found, err = at(t, base+"records.atom")
	require.NoError(t, err)
	assert.Equal(t, atomFeedDoc, string(found.Feed.Body), "the document read is kept for the harvest")
	require.NotNil(t, found.Feed.Validators)
	assert.Equal(t, `"v1"`, found.Feed.Validators.ETag)

	_, err = at(t, base+"plain.txt")
	assert.ErrorIs(t, err, source.ErrNotFound)
}

func gzipped(t *testing.T, doc string) string {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, err := zw.Write([]byte(doc))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return buf.String()
}

// A gzip-compressed feed is a feed, told by the root element it
// decompresses to; a gzip-compressed Sitemap is still a Sitemap.
func TestAtGzipAtomFeed(t *testing.T) {
	base := site(t, map[string]page{
		"/records.atom.gz": {body: gzipped(t, atomFeedDoc), ctype: "application/gzip"},
		"/rl.xml.gz":       {body: gzipped(t, resList), ctype: "application/gzip"},
	})
	assert.Equal(t, base+"records.atom.gz", feedAt(t, base+"records.atom.gz"))
	_, err := at(t, base+"rl.xml.gz")
	assert.NotErrorIs(t, err, source.ErrNotFound, "a gzip Sitemap is read as one")

	a := atom{}
	assert.False(t, a.Is([]byte(gzipped(t, resList))))
	assert.True(t, a.Is([]byte(gzipped(t, atomFeedDoc))))
	assert.False(t, a.Is([]byte("\x1f\x8bnot gzip")), "a bad gzip stream is no feed")
	var big strings.Builder // compressed, far longer than the bytes peeked at
	big.WriteString(`<feed xmlns="http://www.w3.org/2005/Atom">`)
	for i := range 20000 {
		fmt.Fprintf(&big, "<entry><id>urn:%x</id></entry>", i*7919)
	}
	big.WriteString(`</feed>`)
	z := gzipped(t, big.String())
	require.Greater(t, len(z), 4*sniffPeek)
	assert.True(t, a.Is([]byte(z[:sniffPeek])), "told from the first bytes of a long stream")
}

func TestAtAtomFeedByHTMLLink(t *testing.T) {
	base := site(t, map[string]page{
		"/":          {body: `<html><head><link rel="stylesheet" href="/s.css"><link TYPE="application/atom+xml; charset=utf-8" rel="alternate" href="/feed"></head></html>`, ctype: "text/html"},
		"/feed":      {body: atomFeedDoc},
		"/page.html": {body: `<html><link rel="alternate" type="application/atom+xml" href="feed"></html>`, ctype: "text/html"},
	})
	assert.Equal(t, base+"feed", feedAt(t, base), "from the home page")
	assert.Equal(t, base+"feed", feedAt(t, base+"page.html"), "from a page, relative")
}

// A page linking to both is a ResourceSync Source: its feed is not what
// rsfs mounts, nor is a feed of another type or relation.
func TestAtResourceSyncBeforeAtomLink(t *testing.T) {
	base := site(t, map[string]page{
		"/":         {body: `<html><link rel="alternate" type="application/atom+xml" href="/feed"><link rel="resourcesync" href="/caps.xml"></html>`, ctype: "text/html"},
		"/caps.xml": {body: capList},
		"/feed":     {body: atomFeedDoc},
	})
	found, err := at(t, base)
	require.NoError(t, err)
	assert.Equal(t, protocol.ResourceSync, found.Protocol())
	assert.Len(t, found.Source.Sets(), 1)

	other := site(t, map[string]page{
		"/": {body: `<html><link rel="alternate" type="application/rss+xml" href="/rss"><link rel="feed" type="application/atom+xml" href="/feed"></html>`, ctype: "text/html"},
	})
	_, err = at(t, other)
	assert.ErrorIs(t, err, source.ErrNotFound)
}

// A Sitemap in the Atom namespace's clothing is not a feed, nor an Atom
// entry document.
func TestAtomIs(t *testing.T) {
	for doc, want := range map[string]bool{
		atomFeedDoc: true,
		`<feed xmlns="http://example.org/not-atom"/>`:     false,
		`<entry xmlns="http://www.w3.org/2005/Atom"/>`:    false,
		`<a:feed xmlns:a="http://www.w3.org/2005/Atom"/>`: true,
		`not xml at all`: false,
	} {
		assert.Equal(t, want, atom{}.Is([]byte(doc)), doc)
	}
}
