package fetch

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTrafficCountsByOriginKindAndStatus(t *testing.T) {
	calls := 0
	srv, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		if r.URL.Path == "/gone" {
			http.NotFound(w, r)
			return
		}
		http.ServeContent(w, r, "x", time.Unix(1e9, 0), strings.NewReader("0123456789"))
	}))
	c := newTestClient(t, fastOptions(), srv)
	ctx := testContext(t)
	resp, err := c.Get(ctx, srv.URL+"/a", nil)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	rb, err := c.Range(ctx, srv.URL+"/a", 2, 3, "")
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, rb)
	rb.Close()
	_, err = c.Head(ctx, srv.URL+"/a")
	require.NoError(t, err)
	_, err = c.Get(ctx, srv.URL+"/gone", nil)
	require.Error(t, err)

	o := srv.URL
	assert.Equal(t, []Traffic{
		{TrafficKey{o, "get", 200}, 1},
		{TrafficKey{o, "get", 404}, 1},
		{TrafficKey{o, "head", 200}, 1},
		{TrafficKey{o, "range", 206}, 1},
	}, c.Traffic())
	assert.Equal(t, 4, calls)
	assert.Equal(t, map[string]int64{o: 10 + 3 + int64(len("404 page not found\n"))}, c.BytesByOrigin(), "the 404's body is read for its error")
	assert.Equal(t, c.Stats().BytesRead, c.BytesByOrigin()[o])
}
