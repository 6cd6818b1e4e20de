package source

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"rsfs/protocol"
	"rsfs/tests/sourcetest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const atomFeedDoc = `<?xml version="1.0" encoding="utf-8"?>
<!-- a comment first -->
<feed xmlns="http://www.w3.org/2005/Atom"><id>urn:x</id><updated>2024-01-01T00:00:00Z</updated></feed>`

func foundFeed(t *testing.T, err error) string {
	t.Helper()
	var ff *feedFound
	require.True(t, errors.As(err, &ff), "want feedFound, got %v", err)
	return ff.doc.URL
}

func TestDiscoverAtomFeedByContent(t *testing.T) {
	base := site(t, map[string]page{"/records.atom": {body: atomFeedDoc, ctype: "text/xml", headers: map[string]string{"ETag": `"v1"`}}})
	_, err := discover(t, base+"records.atom")
	assert.Equal(t, base+"records.atom", foundFeed(t, err))
	var ff *feedFound
	require.ErrorAs(t, err, &ff)
	assert.Equal(t, atomFeedDoc, string(ff.doc.Body), "the document read is kept for the harvest")
	require.NotNil(t, ff.doc.Validators)
	assert.Equal(t, `"v1"`, ff.doc.Validators.ETag)
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
func TestDiscoverGzipAtomFeed(t *testing.T) {
	base := site(t, map[string]page{
		"/records.atom.gz": {body: gzipped(t, atomFeedDoc), ctype: "application/gzip"},
	})
	_, err := discover(t, base+"records.atom.gz")
	assert.Equal(t, base+"records.atom.gz", foundFeed(t, err))

	assert.True(t, isSitemap(bufReader(gzipped(t, resList))))
	assert.False(t, isAtomFeed(bufReader(gzipped(t, resList))))
	assert.True(t, isAtomFeed(bufReader(gzipped(t, atomFeedDoc))))
	assert.False(t, isAtomFeed(bufReader("\x1f\x8bnot gzip")), "a bad gzip stream is no feed")
	var big strings.Builder // compressed, far longer than the bytes peeked at
	big.WriteString(`<feed xmlns="http://www.w3.org/2005/Atom">`)
	for i := range 20000 {
		fmt.Fprintf(&big, "<entry><id>urn:%x</id></entry>", i*7919)
	}
	big.WriteString(`</feed>`)
	require.Greater(t, len(gzipped(t, big.String())), 4*4096)
	assert.True(t, isAtomFeed(bufReader(gzipped(t, big.String()))), "told from the first bytes of a long stream")
}

func TestDiscoverAtomFeedByHTMLLink(t *testing.T) {
	base := site(t, map[string]page{
		"/":          {body: `<html><head><link rel="stylesheet" href="/s.css"><link TYPE="application/atom+xml; charset=utf-8" rel="alternate" href="/feed"></head></html>`, ctype: "text/html"},
		"/feed":      {body: atomFeedDoc},
		"/page.html": {body: `<html><link rel="alternate" type="application/atom+xml" href="feed"></html>`, ctype: "text/html"},
	})
	_, err := discover(t, base)
	assert.Equal(t, base+"feed", foundFeed(t, err), "from the home page")
	_, err = discover(t, base+"page.html")
	assert.Equal(t, base+"feed", foundFeed(t, err), "from a page, relative")
}

// A page linking to both is a ResourceSync Source: its feed is not
// what rsfs mounts, nor is a feed of another type or relation.
func TestDiscoverResourceSyncBeforeAtomLink(t *testing.T) {
	base := site(t, map[string]page{
		"/":         {body: `<html><link rel="alternate" type="application/atom+xml" href="/feed"><link rel="resourcesync" href="/caps.xml"></html>`, ctype: "text/html"},
		"/caps.xml": {body: capList},
		"/feed":     {body: atomFeedDoc},
	})
	src, err := discover(t, base)
	require.NoError(t, err)
	assert.Len(t, src.Sets(), 1)

	other := site(t, map[string]page{
		"/": {body: `<html><link rel="alternate" type="application/rss+xml" href="/rss"><link rel="feed" type="application/atom+xml" href="/feed"></html>`, ctype: "text/html"},
	})
	_, err = discover(t, other)
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrNotFound)
}

// A Sitemap in the Atom namespace's clothing is not a feed, nor an Atom
// entry document.
func TestIsAtomFeed(t *testing.T) {
	for doc, want := range map[string]bool{
		atomFeedDoc: true,
		`<feed xmlns="http://example.org/not-atom"/>`:     false,
		`<entry xmlns="http://www.w3.org/2005/Atom"/>`:    false,
		`<a:feed xmlns:a="http://www.w3.org/2005/Atom"/>`: true,
		`not xml at all`: false,
	} {
		assert.Equal(t, want, isAtomFeed(bufReader(doc)), doc)
	}
}

func bufReader(s string) *bufio.Reader { return bufio.NewReader(strings.NewReader(s)) }

// Discovery names the protocol it found; a feed is a result, not an error.
func TestDiscoverNamesTheProtocolItFound(t *testing.T) {
	base := site(t, map[string]page{"/records.atom": {body: atomFeedDoc, ctype: "text/xml"}})
	found, err := Discover(context.Background(), base+"records.atom", testOptions())
	require.NoError(t, err)
	assert.Equal(t, protocol.AtomPMH, found.Protocol)
	assert.Nil(t, found.Source)
	require.NotNil(t, found.Feed)
	assert.Equal(t, base+"records.atom", found.Feed.URL)

	src := startTestSource(t, sourcetest.Config{Resources: 3})
	found, err = Discover(context.Background(), src.URL(), testOptions())
	require.NoError(t, err)
	assert.Equal(t, protocol.ResourceSync, found.Protocol)
	require.NotNil(t, found.Source)
	assert.Nil(t, found.Feed)
}
