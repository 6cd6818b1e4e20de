package fetch

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHead(t *testing.T) {
	srv, rec := newServer(t, serveBytes(`"v1"`, testContent(1234)))
	c := newTestClient(t, fastOptions(), srv)

	meta, err := c.Head(testContext(t), srv.URL+"/f.bin")
	require.NoError(t, err)
	assert.Equal(t, &Meta{
		Length:       1234,
		ETag:         `"v1"`,
		LastModified: testModTime.Format(http.TimeFormat),
		ContentType:  "application/octet-stream",
		AcceptRanges: true,
	}, meta)
	assert.Equal(t, int64(1), rec.count.Load())
	assert.Equal(t, http.MethodHead, rec.method(0))
}

func TestHead405FallsBackToRange(t *testing.T) {
	serve := serveBytes(`"v1"`, testContent(4321))
	srv, rec := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			http.Error(w, "no HEAD here", http.StatusMethodNotAllowed)
			return
		}
		serve(w, r)
	}))
	c := newTestClient(t, fastOptions(), srv)

	meta, err := c.Head(testContext(t), srv.URL+"/f")
	require.NoError(t, err)
	assert.Equal(t, int64(4321), meta.Length)
	assert.Equal(t, `"v1"`, meta.ETag)
	assert.True(t, meta.AcceptRanges)
	require.Equal(t, int64(2), rec.count.Load())
	assert.Equal(t, http.MethodGet, rec.method(1))
	assert.Equal(t, "bytes=0-0", rec.header(1).Get("Range"))
}

func TestHeadWithoutLengthFallsBackToRange(t *testing.T) {
	serve := serveBytes(`"v1"`, testContent(777))
	srv, rec := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			w.Header().Set("ETag", `"v1"`)
			w.Header().Set("Last-Modified", "Mon, 06 May 2024 07:08:09 GMT")
			w.Header().Set("Transfer-Encoding", "chunked")
			w.WriteHeader(http.StatusOK)
			return
		}
		serve(w, r)
	}))
	c := newTestClient(t, fastOptions(), srv)

	meta, err := c.Head(testContext(t), srv.URL+"/f")
	require.NoError(t, err)
	assert.Equal(t, int64(777), meta.Length)
	assert.Equal(t, "Mon, 06 May 2024 07:08:09 GMT", meta.LastModified)
	assert.Equal(t, int64(2), rec.count.Load())
}

func TestHeadEmptyResource(t *testing.T) {
	srv, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			w.WriteHeader(http.StatusNotImplemented)
			return
		}
		w.Header().Set("Content-Range", "bytes */0")
		w.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
	}))
	c := newTestClient(t, fastOptions(), srv)

	meta, err := c.Head(testContext(t), srv.URL+"/empty")
	require.NoError(t, err)
	assert.Equal(t, int64(0), meta.Length)
}

func TestHeadNotFound(t *testing.T) {
	srv, _ := newServer(t, http.NotFoundHandler())
	c := newTestClient(t, fastOptions(), srv)

	_, err := c.Head(testContext(t), srv.URL+"/gone")
	var se *StatusError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, 404, se.Code)
}
