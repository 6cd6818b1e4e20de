package source

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// otherProto is a protocol of documents that start "OTHER", or any gzip
// stream, linked from pages by rel="other".
type otherProto struct{}

func (otherProto) Is(head []byte) bool {
	return bytes.HasPrefix(head, []byte("OTHER")) || bytes.HasPrefix(head, gzipMagic)
}

func (otherProto) Link(links []PageLink) string {
	for _, l := range links {
		if l.HasRel("other") && l.Type == "text/other" {
			return l.Href
		}
	}
	return ""
}

var gzipMagic = []byte{0x1f, 0x8b}

func discoverOther(t *testing.T, url string) (*Source, error) {
	t.Helper()
	opts := testOptions()
	opts.Other = otherProto{}
	return Discover(context.Background(), url, opts)
}

func otherFound(t *testing.T, err error) *OtherFound {
	t.Helper()
	var f *OtherFound
	require.ErrorAs(t, err, &f)
	return f
}

// A URL that answers another protocol's document stops discovery with it,
// its body and validators kept for that protocol's reader.
func TestDiscoverOtherDocument(t *testing.T) {
	base := site(t, map[string]page{"/doc": {body: "OTHER doc", headers: map[string]string{"ETag": `"v1"`}}})
	_, err := discoverOther(t, base+"doc")
	f := otherFound(t, err)
	assert.Equal(t, base+"doc", f.Doc.URL)
	assert.Equal(t, "OTHER doc", string(f.Doc.Body), "the document read is kept")
	require.NotNil(t, f.Doc.Validators)
	assert.Equal(t, `"v1"`, f.Doc.Validators.ETag)

	_, err = Discover(context.Background(), base+"doc", testOptions())
	assert.ErrorIs(t, err, ErrNotFound, "without Other, discovery looks for ResourceSync only")
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

// Other is asked before a gzip stream is taken for a Sitemap.
func TestDiscoverAsksOtherBeforeSitemap(t *testing.T) {
	base := site(t, map[string]page{"/doc.gz": {body: gzipped(t, resList), ctype: "application/gzip"}})
	_, err := discoverOther(t, base+"doc.gz")
	assert.Equal(t, base+"doc.gz", otherFound(t, err).Doc.URL)
	assert.True(t, isSitemap(bufReader(gzipped(t, resList))), "without Other it is a Sitemap")
}

func TestDiscoverOtherByPageLink(t *testing.T) {
	base := site(t, map[string]page{
		"/":          {body: `<html><head><link rel="stylesheet" href="/s.css"><link TYPE="text/other" rel="alternate OTHER" href="/doc"></head></html>`, ctype: "text/html"},
		"/doc":       {body: "OTHER doc"},
		"/page.html": {body: `<html><link rel="other" type='text/other' href="doc"></html>`, ctype: "text/html"},
	})
	_, err := discoverOther(t, base)
	f := otherFound(t, err)
	assert.Equal(t, base+"doc", f.Doc.URL, "from the home page")
	assert.Nil(t, f.Doc.Body, "a linked document is not read by discovery")
	_, err = discoverOther(t, base+"page.html")
	assert.Equal(t, base+"doc", otherFound(t, err).Doc.URL, "from a page, relative")
}

// A page linking to both is a ResourceSync Source.
func TestDiscoverResourceSyncBeforeOtherLink(t *testing.T) {
	base := site(t, map[string]page{
		"/":         {body: `<html><link rel="other" type="text/other" href="/doc"><link rel="resourcesync" href="/caps.xml"></html>`, ctype: "text/html"},
		"/caps.xml": {body: capList},
		"/doc":      {body: "OTHER doc"},
	})
	src, err := discoverOther(t, base)
	require.NoError(t, err)
	assert.Len(t, src.Sets(), 1)
}

func TestPageLinks(t *testing.T) {
	links := pageLinks(bufReader(`<html><LINK rel=alternate type="application/atom+xml; charset=utf-8" href=" /a "><link href="/b"><link rel='x y' href='/c'></html>`))
	assert.Equal(t, []PageLink{
		{Rel: "alternate", Type: "application/atom+xml; charset=utf-8", Href: "/a"},
		{Rel: "x y", Href: "/c"},
	}, links)
	assert.True(t, links[1].HasRel("Y"))
	assert.False(t, links[1].HasRel("x-y"))
}

func bufReader(s string) *bufio.Reader { return bufio.NewReader(strings.NewReader(s)) }
