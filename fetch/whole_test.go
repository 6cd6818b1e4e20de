package fetch

import (
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What a shared cache is asked (docs/caches.md): a document GET is
// revalidated (max-age=0), a content GET and a Range request are left to
// the cache, and a request under NoCache asks past it.
func TestCacheControlOfEachKindOfRequest(t *testing.T) {
	data := testContent(100)
	srv, rec := newServer(t, serveBytes(`"v1"`, data))
	c := newTestClient(t, fastOptions(), srv)
	ctx := testContext(t)

	resp, err := c.Get(ctx, srv.URL+"/doc", nil)
	require.NoError(t, err)
	readAll(t, resp.Body)
	_, err = c.Get(ctx, srv.URL+"/doc", resp.Validators())
	require.ErrorIs(t, err, ErrNotModified)
	wb, err := c.Whole(ctx, srv.URL+"/a", "")
	require.NoError(t, err)
	assert.Equal(t, data, readAll(t, wb))
	assert.Equal(t, int64(100), wb.Total)
	assert.False(t, wb.Partial)
	rb, err := c.Range(ctx, srv.URL+"/a", 10, 10, "")
	require.NoError(t, err)
	readAll(t, rb)
	wb, err = c.Whole(NoCache(ctx), srv.URL+"/a", `"v1"`)
	require.NoError(t, err)
	readAll(t, wb)
	rb, err = c.Range(NoCache(ctx), srv.URL+"/a", 10, 10, `"v1"`)
	require.NoError(t, err)
	readAll(t, rb)

	want := []struct{ cc, pragma, rng string }{
		{"max-age=0", "", ""},
		{"max-age=0", "", ""},
		{"", "", ""},
		{"", "", "bytes=10-19"},
		{"no-cache", "no-cache", ""},
		{"no-cache", "no-cache", "bytes=10-19"},
	}
	require.Equal(t, int64(len(want)), rec.count.Load())
	for i, w := range want {
		h := rec.header(i)
		assert.Equal(t, w.cc, h.Get("Cache-Control"), "request %d", i)
		assert.Equal(t, w.pragma, h.Get("Pragma"), "request %d", i)
		assert.Equal(t, w.rng, h.Get("Range"), "request %d", i)
	}
	assert.NotEmpty(t, rec.header(1).Get("If-None-Match"), "a poll is conditional")
}

// Whole fails on another ETag than the one an earlier answer had, and on
// any status but 200.
func TestWholeChecksItsETagAndStatus(t *testing.T) {
	srv, _ := newServer(t, serveBytes(`"v2"`, testContent(10)))
	c := newTestClient(t, fastOptions(), srv)
	_, err := c.Whole(testContext(t), srv.URL+"/a", `"v1"`)
	require.ErrorIs(t, err, ErrChanged)

	partial, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Range", "bytes 0-1/10")
		w.WriteHeader(http.StatusPartialContent)
		_, _ = w.Write([]byte("ab"))
	}))
	c = newTestClient(t, fastOptions(), partial)
	_, err = c.Whole(testContext(t), partial.URL+"/a", "")
	var se *StatusError
	require.True(t, errors.As(err, &se), "a 206 to a plain GET is refused: %v", err)
}
