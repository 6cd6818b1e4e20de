package fs

import (
	"io"
	"log/slog"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/cache"
	"rsfs/catalog"
	"rsfs/copies"
	"rsfs/resourcesync"
)

// The links rsfs adds for dump copies are not the Source's: fs knows them
// by catalog.InternalRelPrefix alone.
func TestDumpRelIsInternal(t *testing.T) {
	assert.True(t, strings.HasPrefix(copies.DumpRel, catalog.InternalRelPrefix), copies.DumpRel)
}

func TestLinkXattrs(t *testing.T) {
	mod := time.Date(2013, 1, 2, 18, 0, 0, 0, time.FixedZone("", 3600))
	links := []catalog.Link{
		{Rel: "describedby", Href: "http://example.com/meta1.xml", Length: resourcesync.NoLength},
		{Rel: "memento", Href: "http://example.com/20130103070000/res1", Modified: mod, Length: 8876,
			Type: "text/html", Hashes: []resourcesync.Hash{{Alg: "md5", Value: "1584abdf8ebdc9802ac0c6a7402c03b6"}}},
		{Rel: "describedby", Href: "http://example.com/meta2.xml", Length: resourcesync.NoLength},
		{Rel: "http://www.openarchives.org/rs/terms/patch", Href: "http://example.com/res1-diff", Type: "text/x-diff", Length: resourcesync.NoLength},
		{Rel: catalog.InternalRelPrefix + "dump", Href: "http://example.com/dump.zip", Path: "/res1", Length: 3},
		{Rel: "timegate", Length: resourcesync.NoLength}, // no href: nothing to show
	}
	got := map[string]string{}
	var names []string
	for _, x := range linkXattrs(links) {
		got[x.name] = x.value
		names = append(names, x.name)
	}
	assert.Equal(t, []string{"link.describedby", "link.memento", "link.memento.json", "link.patch", "link.patch.json"}, names)
	assert.Equal(t, "http://example.com/meta1.xml\nhttp://example.com/meta2.xml", got["link.describedby"])
	assert.Equal(t, "http://example.com/20130103070000/res1", got["link.memento"])
	assert.JSONEq(t, `[{"href":"http://example.com/20130103070000/res1","type":"text/html","modified":"2013-01-02T17:00:00Z",
		"length":8876,"hash":"md5:1584abdf8ebdc9802ac0c6a7402c03b6"}]`, got["link.memento.json"])
	assert.JSONEq(t, `[{"href":"http://example.com/res1-diff","type":"text/x-diff"}]`, got["link.patch.json"])
	assert.Empty(t, linkXattrs(nil))
}

// Links are served beside the other attributes, listed, and a link-only
// change (an upsert of the same version with other links) is what the
// next getxattr answers: the kernel caches no xattrs.
func TestLinkXattrsServedAndChanged(t *testing.T) {
	cat := catalog.New(catalog.Options{Origin: testOrigin})
	uri := testOrigin + "/res1"
	lastmod := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	res := func(links ...catalog.Link) *catalog.Resource {
		return &catalog.Resource{URI: uri, Length: 3, Lastmod: lastmod, Links: links}
	}
	require.NoError(t, cat.Add(res(catalog.Link{Rel: "collection", Href: "http://example.com/aggregation/0601007", Length: -1})))
	require.NoError(t, cat.Seal())
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	blocks := cache.New(cache.Config{MaxBytes: 1 << 20, BlockSize: 4096, ReadAhead: -1, Logger: quiet})
	t.Cleanup(blocks.Close)
	f := New(Config{Catalog: cat, Cache: blocks, Logger: quiet,
		Fetcher: func(r *catalog.Resource) cache.Fetcher { return newMemOrigin().Of(r.URI) }})
	t.Cleanup(f.Shutdown)
	tf := &testFS{fs: f, cat: cat}
	n := tf.file(t, "res1")

	get := func(name string) (string, syscall.Errno) {
		v, _, errno := tf.getxattr(n, name, 4096)
		return v, errno
	}
	list := func() string {
		v, _, errno := tf.listxattr(n, 4096)
		require.Equal(t, syscall.Errno(0), errno)
		return strings.ReplaceAll(v, "\x00", " ")
	}
	v, errno := get("user.resourcesync.link.collection")
	require.Equal(t, syscall.Errno(0), errno)
	assert.Equal(t, "http://example.com/aggregation/0601007", v)
	assert.Contains(t, list(), "user.resourcesync.link.collection ")
	_, errno = get("user.resourcesync.link.collection.json")
	assert.Equal(t, syscall.ENODATA, errno, "no link of the relation has details")

	effects := cat.Upsert(res(catalog.Link{Rel: "via", Href: "http://original.example.com/res1", Length: 3}))
	require.Len(t, effects, 1, "a link-only change is a change")
	assert.Equal(t, catalog.ContentChanged, effects[0].Kind)
	assert.Nil(t, effects[0].Old, "the same version: the file keeps its inode")
	again, _ := tf.lookup(t, "res1")
	assert.Equal(t, n, again, "a lookup by name gives the same inode")
	_, errno = get("user.resourcesync.link.collection")
	assert.Equal(t, syscall.ENODATA, errno)
	v, errno = get("user.resourcesync.link.via.json")
	require.Equal(t, syscall.Errno(0), errno)
	assert.JSONEq(t, `[{"href":"http://original.example.com/res1","length":3}]`, v)
	assert.NotContains(t, list(), "collection")
}

// The catalog's protocol names the link attributes too.
func TestLinkXattrsOfAnotherProtocol(t *testing.T) {
	r := &catalog.Resource{URI: testOrigin + "/rec/one.xml", Length: 1,
		Links: []catalog.Link{{Rel: "describedby", Href: "http://example.com/meta.xml", Type: "application/xml", Length: -1}}}
	got := map[string]string{}
	for _, x := range xattrs("atompmh", r) {
		got[x.name] = x.value
	}
	assert.Equal(t, "http://example.com/meta.xml", got["user.atompmh.link.describedby"])
	assert.JSONEq(t, `[{"href":"http://example.com/meta.xml","type":"application/xml"}]`, got["user.atompmh.link.describedby.json"])
	assert.NotContains(t, got, "user.resourcesync.link.describedby")
}
