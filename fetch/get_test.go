package fetch

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGetWholeDocument(t *testing.T) {
	data := testContent(5000)
	srv, rec := newServer(t, serveBytes(`"v1"`, data))
	c := newTestClient(t, fastOptions(), srv)

	resp, err := c.Get(testContext(t), srv.URL+"/doc.xml", nil)
	require.NoError(t, err)
	assert.Equal(t, data, readAll(t, resp.Body))
	assert.Equal(t, srv.URL+"/doc.xml", resp.URL)
	assert.Equal(t, `"v1"`, resp.ETag)
	assert.Equal(t, testModTime.Format(http.TimeFormat), resp.LastModified)
	assert.Equal(t, int64(5000), resp.Length)
	assert.Equal(t, DefaultUserAgent(), rec.header(0).Get("User-Agent"))
	assert.Empty(t, rec.header(0).Get("If-None-Match"))
	assert.Equal(t, Stats{Requests: 1, BytesRead: 5000}, c.Stats())
}

func TestGetNotModified(t *testing.T) {
	srv, rec := newServer(t, serveBytes(`"v1"`, testContent(100)))
	c := newTestClient(t, fastOptions(), srv)
	ctx := testContext(t)

	resp, err := c.Get(ctx, srv.URL+"/doc.xml", nil)
	require.NoError(t, err)
	readAll(t, resp.Body)

	again, err := c.Get(ctx, srv.URL+"/doc.xml", resp.Validators())
	assert.Nil(t, again)
	assert.ErrorIs(t, err, ErrNotModified)
	assert.Equal(t, `"v1"`, rec.header(1).Get("If-None-Match"))
	assert.Equal(t, testModTime.Format(http.TimeFormat), rec.header(1).Get("If-Modified-Since"))

	changed, err := c.Get(ctx, srv.URL+"/doc.xml", &Validators{ETag: `"v0"`})
	require.NoError(t, err)
	assert.Len(t, readAll(t, changed.Body), 100)
}

func TestGetRetriesServerErrorsThenSucceeds(t *testing.T) {
	data := testContent(300)
	var calls atomic.Int64
	srv, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= 2 {
			http.Error(w, "busy", http.StatusInternalServerError)
			return
		}
		serveBytes(`"v1"`, data)(w, r)
	}))
	c := newTestClient(t, fastOptions(), srv)

	resp, err := c.Get(testContext(t), srv.URL+"/x", nil)
	require.NoError(t, err)
	assert.Equal(t, data, readAll(t, resp.Body))
	assert.Equal(t, int64(3), calls.Load())
	assert.Equal(t, int64(2), c.Stats().Retries)
	assert.Equal(t, int64(3), c.Stats().Requests)
}

func TestGetGivesUpAfterRetries(t *testing.T) {
	srv, rec := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusBadGateway)
	}))
	opts := fastOptions()
	opts.Retries = 2
	c := newTestClient(t, opts, srv)

	_, err := c.Get(testContext(t), srv.URL+"/x", nil)
	var se *StatusError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, http.StatusBadGateway, se.Code)
	assert.Equal(t, srv.URL+"/x", se.URL)
	assert.Equal(t, int64(3), rec.count.Load())
}

func TestGetNoRetryOn404(t *testing.T) {
	srv, rec := newServer(t, http.NotFoundHandler())
	c := newTestClient(t, fastOptions(), srv)

	resp, err := c.Get(testContext(t), srv.URL+"/missing", nil)
	assert.Nil(t, resp)
	var se *StatusError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, 404, se.Code)
	assert.Equal(t, "404 Not Found", se.Status)
	assert.Contains(t, err.Error(), srv.URL+"/missing")
	assert.Contains(t, err.Error(), "404")
	assert.Equal(t, int64(1), rec.count.Load())
	assert.Zero(t, c.Stats().Retries)
}

func TestGetRetriesConnectionClosedBeforeHeaders(t *testing.T) {
	data := testContent(64)
	var calls atomic.Int64
	srv, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch calls.Add(1) {
		case 1:
			hijackClose(t, w, true) // RST
		case 2:
			hijackClose(t, w, false) // FIN: EOF before headers
		default:
			serveBytes(`"v1"`, data)(w, r)
		}
	}))
	c := newTestClient(t, fastOptions(), srv)

	resp, err := c.Get(testContext(t), srv.URL+"/x", nil)
	require.NoError(t, err)
	assert.Equal(t, data, readAll(t, resp.Body))
	assert.GreaterOrEqual(t, calls.Load(), int64(3))
	assert.GreaterOrEqual(t, c.Stats().Retries, int64(2))
}

func TestGetConnectionRefusedIsRetriedThenReported(t *testing.T) {
	srv, _ := newServer(t, http.NotFoundHandler())
	url := srv.URL + "/x"
	srv.Close() // nothing listens there now
	opts := fastOptions()
	opts.Retries = 2
	c := New(opts)
	c.AllowOrigin(url)

	_, err := c.Get(testContext(t), url, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), url)
	assert.Equal(t, int64(2), c.Stats().Retries)
	assert.Equal(t, int64(3), c.Stats().Requests)
}

func TestGetSlowServerTimesOut(t *testing.T) {
	srv, rec := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
	}))
	opts := fastOptions()
	opts.Timeout = 100 * time.Millisecond
	opts.Retries = 1
	c := newTestClient(t, opts, srv)

	start := time.Now()
	_, err := c.Get(testContext(t), srv.URL+"/slow", nil)
	assert.ErrorIs(t, err, ErrTimeout)
	assert.Contains(t, err.Error(), srv.URL+"/slow")
	// The server answers after a minute: returning well before that means
	// the per-attempt timeout cut both attempts short.
	assert.Less(t, time.Since(start), 30*time.Second)
	assert.Equal(t, int64(2), rec.count.Load())
}

func TestGetStalledBodyTimesOut(t *testing.T) {
	srv, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100")
		_, _ = w.Write([]byte("0123456789"))
		http.NewResponseController(w).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(3 * time.Second):
		}
	}))
	opts := fastOptions()
	opts.Timeout = 150 * time.Millisecond
	c := newTestClient(t, opts, srv)

	resp, err := c.Get(testContext(t), srv.URL+"/stall", nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	assert.Equal(t, "0123456789", string(got))
	assert.ErrorIs(t, err, ErrTimeout)
}

func TestRetryAfterHonouredAndBounded(t *testing.T) {
	var calls atomic.Int64
	srv, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "30")
			http.Error(w, "later", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	opts := fastOptions()
	opts.MaxRetryAfter = 300 * time.Millisecond
	c := newTestClient(t, opts, srv)

	start := time.Now()
	resp, err := c.Get(testContext(t), srv.URL+"/x", nil)
	elapsed := time.Since(start)
	require.NoError(t, err)
	assert.Equal(t, "ok", string(readAll(t, resp.Body)))
	assert.GreaterOrEqual(t, elapsed, 280*time.Millisecond, "Retry-After ignored")
	// Retry-After asks for 30 s; well under that means MaxRetryAfter bounded it.
	assert.Less(t, elapsed, 15*time.Second, "Retry-After not bounded by MaxRetryAfter")
}

func TestNoRetryOnceContextDone(t *testing.T) {
	srv, rec := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusInternalServerError)
	}))
	opts := fastOptions()
	opts.BackoffBase, opts.BackoffMax = time.Minute, time.Minute
	c := newTestClient(t, opts, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()

	start := time.Now()
	_, err := c.Get(ctx, srv.URL+"/x", nil)
	// A backoff is a minute: returning well before that means it did not
	// wait out a backoff after the context was done.
	assert.Less(t, time.Since(start), 30*time.Second)
	if !errors.Is(err, context.DeadlineExceeded) {
		// The first backoff may be drawn short enough to retry once in time;
		// the error must still report the deadline or the last 500.
		var se *StatusError
		require.ErrorAs(t, err, &se)
	}
	assert.LessOrEqual(t, rec.count.Load(), int64(2))
}

func TestHostNotAllowed(t *testing.T) {
	srv, rec := newServer(t, serveBytes(`"v1"`, testContent(10)))
	c := newTestClient(t, fastOptions())

	assert.False(t, c.Allowed(srv.URL+"/x"))
	_, err := c.Get(testContext(t), srv.URL+"/x", nil)
	assert.ErrorIs(t, err, ErrNotAllowed)
	assert.Contains(t, err.Error(), srv.URL+"/x")
	_, err = c.Head(testContext(t), srv.URL+"/x")
	assert.ErrorIs(t, err, ErrNotAllowed)
	_, err = c.Range(testContext(t), srv.URL+"/x", 0, 5, "")
	assert.ErrorIs(t, err, ErrNotAllowed)
	assert.Zero(t, rec.count.Load())
	assert.False(t, strings.Contains(err.Error(), "%!"))
}
