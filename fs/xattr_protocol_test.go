package fs

import (
	"io"
	"log/slog"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/cache"
	"rsfs/catalog"
)

// A catalog of another protocol: its attributes are served under its name,
// its properties beside the common ones, and no user.resourcesync.* at all.
func TestXattrsOfAnotherProtocol(t *testing.T) {
	cat := catalog.New(catalog.Options{Origin: testOrigin, Protocol: "atompmh"})
	uri := testOrigin + "/rec/one.xml"
	updated := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	require.NoError(t, cat.Add(&catalog.Resource{URI: uri, Length: 3, Lastmod: updated, Type: "application/xml",
		Props: []catalog.Property{{Name: "id", Value: "urn:x:1"}, {Name: "title", Value: "One"}}}))
	require.NoError(t, cat.Seal())
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	blocks := cache.New(cache.Config{MaxBytes: 1 << 20, BlockSize: 4096, ReadAhead: -1, Logger: quiet})
	t.Cleanup(blocks.Close)
	f := New(Config{Catalog: cat, Cache: blocks, Logger: quiet,
		Fetcher: func(r *catalog.Resource) cache.Fetcher { return newMemOrigin().Of(r.URI) }})
	t.Cleanup(f.Shutdown)
	tf := &testFS{fs: f, cat: cat}
	n := tf.file(t, "rec", "one.xml")

	list, _, errno := tf.listxattr(n, 1024)
	require.Equal(t, syscall.Errno(0), errno)
	assert.Equal(t, "user.atompmh.uri\x00user.atompmh.type\x00user.atompmh.lastmod\x00user.atompmh.id\x00user.atompmh.title\x00",
		list)
	for name, want := range map[string]string{
		"user.atompmh.uri": uri, "user.atompmh.type": "application/xml", "user.atompmh.lastmod": "2024-05-01T00:00:00Z",
		"user.atompmh.id": "urn:x:1", "user.atompmh.title": "One",
	} {
		got, _, errno := tf.getxattr(n, name, 1024)
		require.Equal(t, syscall.Errno(0), errno, name)
		assert.Equal(t, want, got, name)
	}
	_, _, errno = tf.getxattr(n, "user.resourcesync.uri", 1024)
	assert.Equal(t, syscall.ENODATA, errno)
	_, _, errno = tf.getxattr(n, "user.atompmh.hash", 1024)
	assert.Equal(t, syscall.ENODATA, errno, "no hash published, so none served")
}
