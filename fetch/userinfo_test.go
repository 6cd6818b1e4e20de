package fetch

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUserinfoNeverSent: a URL's user:password@ becomes no Authorization
// header (net/http would send Basic), on a request or a redirect hop, and
// appears in no error and no log line.
func TestUserinfoNeverSent(t *testing.T) {
	data := testContent(100)
	var mu sync.Mutex
	var auth []string
	mux := http.NewServeMux()
	mux.Handle("/x", serveBytes(`"v1"`, data))
	mux.HandleFunc("/hop", func(w http.ResponseWriter, r *http.Request) {
		u := "http://hop:secret@" + r.Host + "/x"
		http.Redirect(w, r, u, http.StatusFound)
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	var logs bytes.Buffer
	opts := fastOptions()
	opts.Retries = 1
	opts.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := newTestClient(t, opts, srv)
	ctx := testContext(t)
	withUser := strings.Replace(srv.URL, "http://", "http://user:secret@", 1)

	resp, err := c.Get(ctx, withUser+"/x", nil)
	require.NoError(t, err)
	assert.Equal(t, data, readAll(t, resp.Body))
	assert.Equal(t, srv.URL+"/x", resp.URL)
	resp, err = c.Get(ctx, srv.URL+"/hop", nil)
	require.NoError(t, err)
	assert.Equal(t, data, readAll(t, resp.Body))
	assert.NotContains(t, resp.URL, "secret")
	rb, err := c.Range(ctx, withUser+"/x", 10, 5, "")
	require.NoError(t, err)
	assert.Equal(t, data[10:15], readAll(t, rb))
	_, err = c.Head(ctx, withUser+"/x")
	require.NoError(t, err)
	_, err = c.Get(ctx, withUser+"/missing", nil)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "secret")
	assert.Contains(t, err.Error(), srv.URL+"/missing")

	mu.Lock()
	defer mu.Unlock()
	assert.Len(t, auth, 6)
	for _, a := range auth {
		assert.Empty(t, a, "no Authorization header")
	}
	assert.NotContains(t, logs.String(), "secret")
}
