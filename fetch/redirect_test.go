package fetch

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRedirectFollowed(t *testing.T) {
	data := testContent(50)
	mux := http.NewServeMux()
	mux.Handle("/old", http.RedirectHandler("/mid", http.StatusMovedPermanently))
	mux.Handle("/mid", http.RedirectHandler("/new", http.StatusTemporaryRedirect))
	mux.Handle("/new", serveBytes(`"v1"`, data))
	srv, rec := newServer(t, mux)
	c := newTestClient(t, fastOptions(), srv)

	resp, err := c.Get(testContext(t), srv.URL+"/old", nil)
	require.NoError(t, err)
	assert.Equal(t, data, readAll(t, resp.Body))
	assert.Equal(t, srv.URL+"/new", resp.URL)
	assert.Equal(t, int64(3), rec.count.Load())
}

func TestRangeFollowsRedirectKeepingRange(t *testing.T) {
	data := testContent(500)
	mux := http.NewServeMux()
	mux.Handle("/old", http.RedirectHandler("/new", http.StatusFound))
	mux.Handle("/new", serveBytes(`"v1"`, data))
	srv, rec := newServer(t, mux)
	c := newTestClient(t, fastOptions(), srv)

	rb, err := c.Range(testContext(t), srv.URL+"/old", 40, 10, `"v1"`)
	require.NoError(t, err)
	assert.Equal(t, data[40:50], readAll(t, rb))
	assert.Equal(t, "bytes=40-49", rec.header(1).Get("Range"))
	assert.Equal(t, `"v1"`, rec.header(1).Get("If-Range"))
}

func TestRedirectLimit(t *testing.T) {
	srv, rec := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Path+"x", http.StatusFound)
	}))
	opts := fastOptions()
	opts.MaxRedirects = 3
	c := newTestClient(t, opts, srv)

	_, err := c.Get(testContext(t), srv.URL+"/r", nil)
	require.ErrorIs(t, err, ErrTooManyRedirects)
	assert.Contains(t, err.Error(), srv.URL+"/r")
	assert.Equal(t, int64(4), rec.count.Load(), "3 redirects followed, no retry")
}

func TestRedirectsDisabled(t *testing.T) {
	srv, _ := newServer(t, http.RedirectHandler("/elsewhere", http.StatusFound))
	opts := fastOptions()
	opts.MaxRedirects = -1
	c := newTestClient(t, opts, srv)

	_, err := c.Get(testContext(t), srv.URL+"/r", nil)
	assert.ErrorIs(t, err, ErrTooManyRedirects)
}

func TestRedirectToOtherOriginNotAllowed(t *testing.T) {
	other, otherRec := newServer(t, serveBytes(`"v1"`, testContent(10)))
	srv, _ := newServer(t, http.RedirectHandler(other.URL+"/stolen", http.StatusFound))
	c := newTestClient(t, fastOptions(), srv)

	_, err := c.Get(testContext(t), srv.URL+"/start", nil)
	require.ErrorIs(t, err, ErrNotAllowed)
	assert.Contains(t, err.Error(), srv.URL+"/start")
	assert.Contains(t, err.Error(), other.URL+"/stolen")
	assert.Zero(t, otherRec.count.Load())
}

func TestCredentialsOnlyToCredentialOrigin(t *testing.T) {
	data := testContent(20)
	mirror, mirrorRec := newServer(t, serveBytes(`"v1"`, data))
	mux := http.NewServeMux()
	mux.Handle("/doc", serveBytes(`"v1"`, data))
	mux.Handle("/same", http.RedirectHandler("/doc", http.StatusFound))
	mux.Handle("/away", http.RedirectHandler(mirror.URL+"/doc", http.StatusFound))
	source, sourceRec := newServer(t, mux)

	opts := fastOptions()
	opts.CredentialOrigin = source.URL
	opts.Headers = http.Header{"Authorization": {"Bearer s3cret"}, "X-Api-Key": {"k"}}
	c := newTestClient(t, opts, mirror) // the source is allowed as credential origin
	ctx := testContext(t)

	for _, path := range []string{"/doc", "/same"} {
		resp, err := c.Get(ctx, source.URL+path, nil)
		require.NoError(t, err, path)
		readAll(t, resp.Body)
	}
	for i := range 3 {
		assert.Equal(t, "Bearer s3cret", sourceRec.header(i).Get("Authorization"), "source request %d", i)
		assert.Equal(t, "k", sourceRec.header(i).Get("X-Api-Key"), "source request %d", i)
	}

	resp, err := c.Get(ctx, mirror.URL+"/doc", nil)
	require.NoError(t, err)
	readAll(t, resp.Body)
	rb, err := c.Range(ctx, source.URL+"/away", 0, 5, "")
	require.NoError(t, err)
	assert.Equal(t, data[:5], readAll(t, rb))

	require.Equal(t, int64(2), mirrorRec.count.Load())
	for i := range 2 {
		assert.Empty(t, mirrorRec.header(i).Get("Authorization"), "mirror request %d", i)
		assert.Empty(t, mirrorRec.header(i).Get("X-Api-Key"), "mirror request %d", i)
		assert.Equal(t, DefaultUserAgent(), mirrorRec.header(i).Get("User-Agent"))
	}
}
