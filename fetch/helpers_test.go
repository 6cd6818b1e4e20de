package fetch

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// testContent is n deterministic, non-repeating-looking bytes.
func testContent(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}

var testModTime = time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)

// serveBytes serves data with ETag and Last-Modified through http.ServeContent,
// which answers Range, If-Range, If-None-Match and HEAD as real servers do.
func serveBytes(etag string, data []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", etag)
		http.ServeContent(w, r, "", testModTime, bytes.NewReader(data))
	}
}

// recorder counts requests and keeps their headers.
type recorder struct {
	mu      sync.Mutex
	headers []http.Header
	methods []string
	count   atomic.Int64
}

func (r *recorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.headers = append(r.headers, req.Header.Clone())
		r.methods = append(r.methods, req.Method)
		r.mu.Unlock()
		r.count.Add(1)
		h.ServeHTTP(w, req)
	})
}

func (r *recorder) header(i int) http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.headers[i]
}

func (r *recorder) method(i int) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.methods[i]
}

// newServer starts a recorded test server on 127.0.0.1.
func newServer(t testing.TB, h http.Handler) (*httptest.Server, *recorder) {
	t.Helper()
	rec := &recorder{}
	srv := httptest.NewServer(rec.wrap(h))
	t.Cleanup(srv.Close)
	return srv, rec
}

// fastOptions are small timeouts and backoffs so that retries cost little.
func fastOptions() Options {
	return Options{
		Timeout:     2 * time.Second,
		BackoffBase: time.Millisecond,
		BackoffMax:  5 * time.Millisecond,
		Logger:      slog.New(slog.DiscardHandler),
	}
}

// newTestClient returns a client allowed to reach the given servers.
func newTestClient(t *testing.T, opts Options, allowed ...*httptest.Server) *Client {
	t.Helper()
	c := New(opts)
	for _, s := range allowed {
		c.AllowOrigin(s.URL)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// hijackClose takes over the connection and closes it without answering;
// with reset it sends a TCP RST instead of a FIN.
func hijackClose(t *testing.T, w http.ResponseWriter, reset bool) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		t.Errorf("hijack: %v", err)
		return
	}
	if tcp, ok := conn.(*net.TCPConn); ok && reset {
		_ = tcp.SetLinger(0)
	}
	_ = conn.Close()
}

// readAll reads a body and closes it.
func readAll(t *testing.T, rc interface {
	Read([]byte) (int, error)
	Close() error
}) []byte {
	t.Helper()
	var buf bytes.Buffer
	_, err := buf.ReadFrom(rc)
	require.NoError(t, err)
	require.NoError(t, rc.Close())
	return buf.Bytes()
}

// hijackCloseConn resets a hijacked connection.
func hijackCloseConn(conn net.Conn) {
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = conn.Close()
}
