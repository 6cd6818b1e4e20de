package fetch

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// streamServer answers /first at once and holds every other request until
// release is closed; it records the requests in flight at their peak and
// the connections they came on.
type streamServer struct {
	srv         *httptest.Server
	release     chan struct{}
	inFlight    atomic.Int32
	peak        atomic.Int32
	mu          sync.Mutex
	conns       map[string]bool
	protos      map[string]bool
	releaseOnce sync.Once
}

func newStreamServer(t *testing.T, http2 bool) *streamServer {
	s := &streamServer{release: make(chan struct{}), conns: map[string]bool{}, protos: map[string]bool{}}
	data := testContent(4096)
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.conns[r.RemoteAddr], s.protos[r.Proto] = true, true
		s.mu.Unlock()
		if r.URL.Path != "/first" {
			n := s.inFlight.Add(1)
			for p := s.peak.Load(); n > p && !s.peak.CompareAndSwap(p, n); p = s.peak.Load() {
			}
			<-s.release
			s.inFlight.Add(-1)
		}
		serveBytes(`"v1"`, data)(w, r)
	}))
	s.srv.EnableHTTP2 = http2
	s.srv.StartTLS()
	t.Cleanup(s.srv.Close)
	t.Cleanup(s.open)
	return s
}

func (s *streamServer) open() { s.releaseOnce.Do(func() { close(s.release) }) }

// Over TLS with a server that speaks HTTP/2, the client learns it from the
// first response and says so (Network, InFlight: MaxStreams, not the 16
// connections), and, once its first window has opened, that many requests
// run at once on one connection.
func TestHTTP2RaisesTheRequestsInFlightOnOneConnection(t *testing.T) {
	s := newStreamServer(t, true)
	opts := fastOptions()
	opts.TLSClientConfig = s.srv.Client().Transport.(*http.Transport).TLSClientConfig
	c := newTestClient(t, opts, s.srv)
	ctx := testContext(t)
	assert.Equal(t, DefaultMaxConnsPerHost, c.InFlight(), "nothing measured yet")

	// The answers that open the origin's first window (the pacer's, as
	// TCP's: one more in flight per success, from initialWindow).
	for range MaxStreams {
		resp, err := c.Get(ctx, s.srv.URL+"/first", nil)
		require.NoError(t, err)
		readAll(t, resp.Body)
	}
	n := c.Network(s.srv.URL)
	assert.True(t, n.HTTP2)
	assert.Positive(t, n.RTT)
	require.Equal(t, MaxStreams, c.InFlight())

	var wg sync.WaitGroup
	for range c.InFlight() {
		wg.Go(func() {
			rb, err := c.Range(ctx, s.srv.URL+"/f", 0, 100, `"v1"`)
			if assert.NoError(t, err) {
				rb.Close()
			}
		})
	}
	deadline := time.Now().Add(20 * time.Second)
	for s.peak.Load() < int32(MaxStreams) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	s.open()
	wg.Wait()
	t.Logf("%d requests in flight at once on %d connection(s)", s.peak.Load(), len(s.conns))
	assert.EqualValues(t, MaxStreams, s.peak.Load(), "requests in flight at once")
	assert.Len(t, s.conns, 1, "connections")
	assert.Equal(t, map[string]bool{"HTTP/2.0": true}, s.protos)
}

// Over HTTP/1.1 (TLS without HTTP/2), the requests in flight stay at the
// connections allowed per host.
func TestHTTP1KeepsTheConnectionsPerHost(t *testing.T) {
	s := newStreamServer(t, false)
	opts := fastOptions()
	opts.TLSClientConfig = s.srv.Client().Transport.(*http.Transport).TLSClientConfig
	c := newTestClient(t, opts, s.srv)
	_, err := c.Get(testContext(t), s.srv.URL+"/first", nil)
	require.NoError(t, err)
	assert.False(t, c.Network(s.srv.URL).HTTP2)
	assert.Equal(t, DefaultMaxConnsPerHost, c.InFlight())
}

// A body large enough is measured for bandwidth.
func TestNetworkMeasuresBandwidth(t *testing.T) {
	data := testContent(bandwidthMin * 2)
	srv, _ := newServer(t, serveBytes(`"v1"`, data))
	c := newTestClient(t, fastOptions(), srv)
	rb, err := c.Range(testContext(t), srv.URL+"/f", 0, int64(len(data)), `"v1"`)
	require.NoError(t, err)
	assert.Equal(t, data, readAll(t, rb))
	n := c.Network(srv.URL)
	assert.Positive(t, n.Bandwidth)
	assert.Positive(t, n.RTT)
	assert.Equal(t, 1, n.Samples)
	assert.Equal(t, n, c.Busiest())
}
