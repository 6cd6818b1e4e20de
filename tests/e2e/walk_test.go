package e2e

import (
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/tests/sourcetest"
)

// delayProxy is a distant Source: it forwards every request to the Source
// after a delay, and counts the bytes of the content it sends (files and
// dump packages).
type delayProxy struct {
	url     string
	target  atomic.Pointer[url.URL]
	content atomic.Int64
}

func startDelayProxy(t *testing.T, delay time.Duration) *delayProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &delayProxy{url: "http://" + ln.Addr().String() + "/"}
	rp := &httputil.ReverseProxy{
		Rewrite:        func(r *httputil.ProxyRequest) { r.SetURL(p.target.Load()); r.Out.Host = r.In.Host },
		ModifyResponse: p.count,
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(delay)
		rp.ServeHTTP(w, r)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return p
}

func (p *delayProxy) forwardTo(addr string) { p.target.Store(&url.URL{Scheme: "http", Host: addr}) }

// count counts the body bytes of content answers.
func (p *delayProxy) count(resp *http.Response) error {
	path := resp.Request.URL.Path
	if strings.HasPrefix(path, "/data/") || strings.HasPrefix(path, "/dumps/") {
		resp.Body = &countingBody{ReadCloser: resp.Body, n: &p.content}
	}
	return nil
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// A walk of many small directories (1,200 files in 200 directories of 6,
// two levels deep, spread round-robin, with a Resource Dump in creation
// order) behind a distant Source: grep -r (readdir order) and rsync -a
// (sorted, a directory's files before its subdirectories) wait on a file
// request only for the first directories' first files, and read the rest
// from the dump in a few requests per window, not one per directory, with
// little more than the files' own bytes.
func TestWalkOfSmallDirectoriesReadsTheDumpInFewRequests(t *testing.T) {
	const files, dirs = 1200, 200
	for _, walker := range []struct {
		name string
		argv func(dir, scratch string) []string
	}{
		{"grep", func(dir, _ string) []string { return []string{"grep", "-rc", "zzz-not-there", dir} }},
		{"rsync", func(dir, scratch string) []string {
			return []string{"rsync", "-a", dir + "/", filepath.Join(scratch, "copy") + "/"}
		}},
	} {
		t.Run(walker.name, func(t *testing.T) {
			p := startDelayProxy(t, 20*time.Millisecond)
			src := startSource(t, sourcetest.Config{Resources: files, FanOut: dirs, Dumps: true, PerDump: 400,
				DumpMethod: sourcetest.DumpStored, MinSize: 1000, MaxSize: 3000, Base: p.url})
			p.forwardTo(src.Addr())
			m := mount(t, src.URL())
			var own int64
			for _, r := range src.Resources() {
				own += r.Size
			}
			before, bytesBefore := src.Counters(), p.content.Load()
			argv := walker.argv(m.dir, t.TempDir())
			_, stderr, err := run(t, 2*time.Minute, argv[0], argv[1:]...)
			if walker.name == "grep" {
				require.EqualError(t, err, "exit status 1", stderr) // no line matches
			} else {
				require.NoError(t, err, stderr)
			}
			c := src.Counters()
			gets, ranges := c.ContentGets()-before.ContentGets(), c.DumpRanges-before.DumpRanges
			fetched := p.content.Load() - bytesBefore
			t.Logf("%s over %d files in %d directories: %d file requests, %d dump requests, %d bytes fetched for %d (%.2f×)",
				walker.name, files, dirs, gets, ranges, fetched, own, float64(fetched)/float64(own))
			assert.LessOrEqual(t, gets, int64(3), "file requests: the first files of the first two directories")
			assert.LessOrEqual(t, ranges, int64(dirs/5), "dump requests: a few per window, not one per directory")
			assert.LessOrEqual(t, float64(fetched), 1.25*float64(own), "bytes fetched")
		})
	}
}

// h2Source is a static Source served over TLS by Go's server, HTTP/2 when
// h2, with a delay per request; it records the content requests in flight
// at their peak and the connections they came on.
type h2Source struct {
	srv      *httptest.Server
	ca       string // the server's certificate, for --ca-cert
	inFlight atomic.Int32
	peak     atomic.Int32
	mu       sync.Mutex
	conns    map[string]bool
	protos   map[string]int
}

func startH2Source(t *testing.T, files int, h2 bool, delay time.Duration) *h2Source {
	s := &h2Source{conns: map[string]bool{}, protos: map[string]int{}}
	root := t.TempDir()
	fileServer := http.FileServer(http.Dir(root))
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		content := strings.HasPrefix(r.URL.Path, "/f/")
		if content {
			n := s.inFlight.Add(1)
			for p := s.peak.Load(); n > p && !s.peak.CompareAndSwap(p, n); p = s.peak.Load() {
			}
			defer s.inFlight.Add(-1)
			s.mu.Lock()
			s.conns[r.RemoteAddr] = true
			s.protos[r.Proto]++
			s.mu.Unlock()
		}
		time.Sleep(delay)
		fileServer.ServeHTTP(w, r)
	}))
	s.srv.EnableHTTP2 = h2
	s.srv.StartTLS()
	t.Cleanup(s.srv.Close)
	base := s.srv.URL + "/"
	list := make([]staticFile, files)
	for i := range list {
		p := fmt.Sprintf("f/%03d/%05d.txt", i/100, i)
		list[i] = staticFile{loc: base + p, path: p, body: fmt.Appendf(nil, "file %d %s\n", i, strings.Repeat("x", i%200))}
	}
	writeStaticSource(t, root, base, list)
	s.ca = filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(s.ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.srv.Certificate().Raw}), 0o644))
	return s
}

// Over HTTPS with HTTP/2, a walk without a dump has many more requests in
// flight than the 16 connections of HTTP/1.1 allow, on one connection;
// over HTTP/1.1 it keeps to the 16.
func TestHTTP2WalkHasManyRequestsInFlightOnOneConnection(t *testing.T) {
	for _, h2 := range []bool{true, false} {
		t.Run(fmt.Sprintf("h2=%v", h2), func(t *testing.T) {
			src := startH2Source(t, 1000, h2, 20*time.Millisecond)
			m := mount(t, src.srv.URL+"/", "--ca-cert", src.ca)
			_, stderr, err := run(t, 2*time.Minute, "grep", "-rc", "zzz-not-there", m.dir)
			require.EqualError(t, err, "exit status 1", stderr)
			src.mu.Lock()
			defer src.mu.Unlock()
			t.Logf("h2=%v: %d content requests, at most %d in flight, on %d connection(s), %v", h2,
				src.protos["HTTP/2.0"]+src.protos["HTTP/1.1"], src.peak.Load(), len(src.conns), src.protos)
			if h2 {
				assert.Greater(t, src.peak.Load(), int32(2*16), "requests in flight at once: more than twice the 16 connections of HTTP/1.1")
				assert.Len(t, src.conns, 1, "connections")
				assert.Equal(t, 1000, src.protos["HTTP/2.0"], "every file once, over HTTP/2")
			} else {
				assert.LessOrEqual(t, src.peak.Load(), int32(16), "requests in flight at once")
				assert.Equal(t, 1000, src.protos["HTTP/1.1"], "every file once")
			}
		})
	}
}
