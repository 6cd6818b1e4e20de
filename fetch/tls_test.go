package fetch

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHTTP2OverTLS(t *testing.T) {
	data := testContent(3000)
	var protos []string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		protos = append(protos, r.Proto)
		serveBytes(`"v1"`, data)(w, r)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)

	opts := fastOptions()
	opts.TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig
	c := newTestClient(t, opts, srv)
	ctx := testContext(t)

	rb, err := c.Range(ctx, srv.URL+"/f", 1000, 500, `"v1"`)
	require.NoError(t, err)
	assert.True(t, rb.Partial)
	assert.Equal(t, data[1000:1500], readAll(t, rb))
	meta, err := c.Head(ctx, srv.URL+"/f")
	require.NoError(t, err)
	assert.Equal(t, int64(3000), meta.Length)
	assert.Equal(t, []string{"HTTP/2.0", "HTTP/2.0"}, protos)
}

func TestUntrustedCertificateIsNotRetried(t *testing.T) {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	c := newTestClient(t, fastOptions(), srv)

	_, err := c.Get(testContext(t), srv.URL+"/x", nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), srv.URL+"/x")
	assert.Contains(t, err.Error(), "certificate")
	assert.Zero(t, c.Stats().Retries)
}
