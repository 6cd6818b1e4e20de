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

// Two spellings of one origin are one origin: one traffic row, one
// pacer, one byte count (DESIGN §9's canonical form), so a Source named
// as http://Host:80/ and http://host/ is not paced, or counted, twice.
func TestTrafficKeysOriginsCanonically(t *testing.T) {
	srv, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "x", time.Unix(1e9, 0), strings.NewReader("0123456789"))
	}))
	port := srv.URL[strings.LastIndexByte(srv.URL, ':'):]
	lower, upper := "http://localhost"+port, "http://LocalHost"+port
	c := newTestClient(t, fastOptions())
	c.AllowOrigin(lower)
	ctx := testContext(t)
	for _, u := range []string{lower + "/a", upper + "/a", "http://user@LOCALHOST" + port + "/a"} {
		resp, err := c.Get(ctx, u, nil)
		require.NoError(t, err, u)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	assert.Equal(t, []Traffic{{TrafficKey{lower, "get", 200}, 3}}, c.Traffic())
	assert.Equal(t, map[string]int64{lower: 30}, c.BytesByOrigin())
	var origins []string
	for _, st := range c.Pacing() {
		origins = append(origins, st.Origin)
	}
	assert.Equal(t, []string{lower}, origins, "one pacer")
	assert.Equal(t, "http://host", originOf("http://Host:80/x"))
	assert.Equal(t, "https://host:8443", originOf("HTTPS://user:pw@HOST:8443/"))
}
