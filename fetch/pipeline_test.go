package fetch

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"rsfs/tests/logbuf"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rawServer is an HTTP/1.1 server written for these tests from RFC 9112,
// not Go's: it reads requests as their bytes come, answers them in order
// on their connection, and records how they came (how many one read
// brought, on how many connections).
type rawServer struct {
	t    *testing.T
	ln   net.Listener
	URL  string
	plan func(path string, n int) rawAnswer // n: the request's number on its connection, from 1
	idle atomic.Int64                       // closes a connection idle this long (ns); 0: never

	mu       sync.Mutex
	conns    int
	requests int
	answers  map[string]int // answers sent per path
	maxBatch int            // most complete requests one read brought
	closed   int            // connections the client closed
}

// rawAnswer is what the server does with one request.
type rawAnswer struct {
	status  string // "200 OK" if empty
	proto   string // "HTTP/1.1" if empty
	body    []byte
	chunked bool
	close   bool // Connection: close, and close after it
	stall   bool // never answer (nor anything after it)
	delay   time.Duration
	header  string
}

func newRawServer(t *testing.T, plan func(path string, n int) rawAnswer) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &rawServer{t: t, ln: ln, URL: "http://" + ln.Addr().String(), plan: plan, answers: map[string]int{}}
	var wg sync.WaitGroup
	t.Cleanup(func() { _ = ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns++
			s.mu.Unlock()
			wg.Add(1)
			go func() { defer wg.Done(); s.serve(c) }()
		}
	}()
	return s
}

func (s *rawServer) serve(c net.Conn) {
	defer c.Close()
	t := time.AfterFunc(20*time.Second, func() { _ = c.Close() }) // no test waits this long
	defer t.Stop()
	var pending []byte
	buf := make([]byte, 64<<10)
	n := 0
	stalled := false
	for {
		if idle := time.Duration(s.idle.Load()); idle > 0 {
			_ = c.SetReadDeadline(time.Now().Add(idle))
		}
		k, err := c.Read(buf)
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			return // keep-alive timeout: the client sees the close
		}
		if err != nil {
			s.mu.Lock()
			s.closed++
			s.mu.Unlock()
			return
		}
		pending = append(pending, buf[:k]...)
		var paths []string
		for {
			end := bytes.Index(pending, []byte("\r\n\r\n"))
			if end < 0 {
				break
			}
			line, _, _ := strings.Cut(string(pending[:end]), "\r\n")
			pending = pending[end+4:]
			f := strings.Fields(line)
			if len(f) != 3 || f[0] != "GET" || f[2] != "HTTP/1.1" {
				s.t.Errorf("request line %q", line)
				return
			}
			paths = append(paths, f[1])
		}
		s.mu.Lock()
		s.requests += len(paths)
		s.maxBatch = max(s.maxBatch, len(paths))
		s.mu.Unlock()
		for _, p := range paths {
			n++
			if stalled {
				continue
			}
			a := s.plan(p, n)
			if a.stall {
				stalled = true
				continue
			}
			time.Sleep(a.delay)
			s.mu.Lock()
			s.answers[p]++ // before the client can have it
			s.mu.Unlock()
			if _, err := c.Write(a.bytes()); err != nil {
				return
			}
			if a.close {
				lingeringClose(c)
				return
			}
		}
	}
}

// lingeringClose ends a connection as nginx does (lingering_close): it
// stops writing, and reads what the client still sends for a while before
// it closes; a close with unread bytes would send a reset, which would
// discard the answers the client has not read yet (RFC 9112 §9.6).
func lingeringClose(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
	_ = c.SetReadDeadline(time.Now().Add(time.Second))
	_, _ = io.Copy(io.Discard, c)
}

func (a rawAnswer) bytes() []byte {
	var b bytes.Buffer
	proto, status := a.proto, a.status
	if proto == "" {
		proto = "HTTP/1.1"
	}
	if status == "" {
		status = "200 OK"
	}
	fmt.Fprintf(&b, "%s %s\r\n%s", proto, status, a.header)
	if a.close {
		b.WriteString("Connection: close\r\n")
	}
	if a.chunked {
		b.WriteString("Transfer-Encoding: chunked\r\n\r\n")
		for rest := a.body; len(rest) > 0; {
			k := min(len(rest), 1000)
			fmt.Fprintf(&b, "%x\r\n%s\r\n", k, rest[:k])
			rest = rest[k:]
		}
		b.WriteString("0\r\n\r\n")
		return b.Bytes()
	}
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n", len(a.body))
	b.Write(a.body)
	return b.Bytes()
}

func (s *rawServer) stats() (conns, requests, maxBatch, closed int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns, s.requests, s.maxBatch, s.closed
}

func (s *rawServer) answered(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.answers[path]
}

// bodyOf is the content the raw servers give path.
func bodyOf(path string) []byte {
	return []byte(strings.Repeat(path+";", 40))
}

// wholeAll GETs paths whole, all at once, and checks every body.
func wholeAll(t *testing.T, c *Client, base string, paths []string) {
	t.Helper()
	ctx := testContext(t)
	var wg sync.WaitGroup
	for _, p := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rb, err := c.Whole(ctx, base+p, "")
			if !assert.NoError(t, err, p) {
				return
			}
			got, err := io.ReadAll(rb)
			_ = rb.Close()
			assert.NoError(t, err, p)
			assert.Equal(t, bodyOf(p), got, p)
		}()
	}
	wg.Wait()
}

func pathsN(n int) []string {
	ps := make([]string, n)
	for i := range ps {
		ps[i] = fmt.Sprintf("/f%03d", i)
	}
	return ps
}

func rawClient(t *testing.T, s *rawServer, opts Options) *Client {
	t.Helper()
	c := New(opts)
	c.AllowOrigin(s.URL)
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func TestPipelineWritesWaitingRequestsTogether(t *testing.T) {
	s := newRawServer(t, func(p string, _ int) rawAnswer { return rawAnswer{body: bodyOf(p)} })
	c := rawClient(t, s, fastOptions())
	primeRTT(t, c, s)
	paths := pathsN(300)
	wholeAll(t, c, s.URL, paths)

	conns, requests, maxBatch, _ := s.stats()
	assert.Equal(t, len(paths)+primeN, requests, "one request per content, none again")
	for _, p := range paths {
		assert.Equal(t, 1, s.answered(p), p)
	}
	assert.LessOrEqual(t, conns, 1+pipeConns(c.opts), "content GETs share the pipelined connections")
	assert.GreaterOrEqual(t, maxBatch, 4, "requests waiting are written, and arrive, together")
	assert.True(t, c.Network(s.URL).Pipelined)
}

// A server that takes its time over each request (a network's delay, or
// work: both show in a request sent alone) is asked as before, on as many
// connections at once, never through a pipeline that would serialize it.
func TestPipelineLeavesASlowServerAlone(t *testing.T) {
	s := newRawServer(t, func(p string, _ int) rawAnswer { return rawAnswer{body: bodyOf(p), delay: 2 * pipeMaxRTT} })
	c := rawClient(t, s, fastOptions())
	primeRTT(t, c, s)
	wholeAll(t, c, s.URL, pathsN(100))
	conns, requests, maxBatch, _ := s.stats()
	assert.Equal(t, 100+primeN, requests)
	assert.Equal(t, 1, maxBatch, "no request written behind another")
	assert.Greater(t, conns, pipeConns(c.opts))
	assert.False(t, c.Network(s.URL).Pipelined)
}

// A server quick to answer one request alone but slow over each of many
// (dynamic contents behind static lists) stops being pipelined after a
// few answers: its requests then go on as many connections as before.
func TestPipelineStopsWhenTheServerTakesItsTimeOverEach(t *testing.T) {
	s := newRawServer(t, func(p string, _ int) rawAnswer {
		a := rawAnswer{body: bodyOf(p)}
		if p != "/first" {
			a.delay = 2 * pipeMaxService
		}
		return a
	})
	opts, logged := loggedOptions()
	c := rawClient(t, s, opts)
	h := c.pipe().host(canonicalAddr(mustURL(s.URL)))
	primeRTT(t, c, s)
	paths := pathsN(80)
	wholeAll(t, c, s.URL, paths)
	for _, p := range paths {
		assert.Equal(t, 1, s.answered(p), p)
	}
	assert.True(t, h.isOff())
	assert.Contains(t, logged.String(), "over each of 16 answers in a row")
	conns, _, _, _ := s.stats()
	assert.Greater(t, conns, 1+pipeConns(c.opts), "then on as many connections as before")
}

func TestPipelineWritesAgainWhatAClosedConnectionLeft(t *testing.T) {
	// A server that ends each connection after 5 answers, as nginx does
	// after keepalive_requests: what was written after them is unanswered.
	s := newRawServer(t, func(p string, n int) rawAnswer { return rawAnswer{body: bodyOf(p), close: n == 5} })
	c := rawClient(t, s, fastOptions())
	primeRTT(t, c, s)
	paths := pathsN(200)
	wholeAll(t, c, s.URL, paths)

	for _, p := range paths {
		assert.Equal(t, 1, s.answered(p), p)
	}
	_, requests, maxBatch, _ := s.stats()
	assert.Greater(t, requests, len(paths), "the unanswered were written again")
	assert.Greater(t, maxBatch, 1)
	assert.False(t, c.pipe().host(canonicalAddr(mustURL(s.URL))).isOff(), "a server that answers several a connection pipelines")
}

func TestPipelineStopsForAServerThatAnswersOneAConnection(t *testing.T) {
	for _, tc := range []rawAnswer{
		{proto: "HTTP/1.0", close: true},
		{close: true},
		{proto: "HTTP/1.0", header: "Connection: keep-alive\r\n"}, // a pipeline is HTTP/1.1's
	} {
		t.Run(fmt.Sprintf("%s close=%v", tc.proto, tc.close), func(t *testing.T) {
			s := newRawServer(t, func(p string, _ int) rawAnswer {
				a := tc
				a.body = bodyOf(p)
				return a
			})
			opts, logged := loggedOptions()
			c := rawClient(t, s, opts)
			primeRTT(t, c, s)
			paths := pathsN(60)
			wholeAll(t, c, s.URL, paths)
			for _, p := range paths {
				assert.Equal(t, 1, s.answered(p), p)
			}
			assert.True(t, c.pipe().host(canonicalAddr(mustURL(s.URL))).isOff())
			assert.False(t, c.Network(s.URL).Pipelined)
			assert.Equal(t, 1, strings.Count(logged.String(), "no longer pipelining requests to "+mustURL(s.URL).Host), "said once: %s", logged)
			_, before, _, _ := s.stats()
			wholeAll(t, c, s.URL, []string{"/next"})
			_, after, _, _ := s.stats()
			assert.Equal(t, before+1, after, "then each request is sent alone, once")
		})
	}
}

func TestPipelineSeesAnIdleConnectionClosed(t *testing.T) {
	s := newRawServer(t, func(p string, _ int) rawAnswer { return rawAnswer{body: bodyOf(p)} })
	s.idle.Store(int64(50 * time.Millisecond)) // a keep-alive timeout
	c := rawClient(t, s, fastOptions())
	primeRTT(t, c, s)
	h := c.pipe().host(canonicalAddr(mustURL(s.URL)))
	for i := range 4 {
		wholeAll(t, c, s.URL, []string{fmt.Sprintf("/r%d", i)})
		require.Eventually(t, func() bool { return len(h.live()) == 0 }, 5*time.Second, 5*time.Millisecond,
			"the server's close is seen while idle")
	}
	_, requests, _, _ := s.stats()
	assert.Equal(t, 4+primeN, requests, "nothing written on a closed connection")
	assert.False(t, h.isOff())
}

func TestPipelineAnswersOfEveryShape(t *testing.T) {
	large := bytes.Repeat([]byte("0123456789abcdef"), (pipeBodyMax+1<<10)/16)
	s := newRawServer(t, func(p string, _ int) rawAnswer {
		switch p {
		case "/large":
			return rawAnswer{body: large}
		case "/chunked":
			return rawAnswer{body: bodyOf(p), chunked: true}
		}
		return rawAnswer{body: bodyOf(p)}
	})
	c := rawClient(t, s, fastOptions())
	primeRTT(t, c, s)
	ctx := testContext(t)
	// The large answer is read from the connection by its caller, after
	// the small ones written behind it have waited for it.
	var wg sync.WaitGroup
	results := map[string][]byte{}
	var mu sync.Mutex
	for _, p := range []string{"/large", "/chunked", "/a", "/b", "/c"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rb, err := c.Whole(ctx, s.URL+p, "")
			if !assert.NoError(t, err, p) {
				return
			}
			got, err := io.ReadAll(rb)
			_ = rb.Close()
			assert.NoError(t, err, p)
			mu.Lock()
			results[p] = got
			mu.Unlock()
		}()
	}
	wg.Wait()
	assert.Equal(t, large, results["/large"])
	for _, p := range []string{"/chunked", "/a", "/b", "/c"} {
		assert.Equal(t, bodyOf(p), results[p], p)
	}
}

func TestPipelineClosesAnIdleConnection(t *testing.T) {
	const idle = 100 * time.Millisecond
	s := newRawServer(t, func(p string, _ int) rawAnswer {
		a := rawAnswer{body: bodyOf(p)}
		if p == "/slow" {
			a.delay = 2 * idle
		}
		return a
	})
	c := rawClient(t, s, fastOptions())
	c.pipe().idle = idle
	h := c.pipe().host(canonicalAddr(mustURL(s.URL)))
	h.minRTT = time.Millisecond // pipelined from the start
	// The connection turns idle after /fast; an answer asked for then and
	// slower than the idle time does not count as idle.
	wholeAll(t, c, s.URL, []string{"/fast"})
	time.Sleep(idle / 4)
	wholeAll(t, c, s.URL, []string{"/slow"})
	conns, _, _, closed := s.stats()
	require.Equal(t, 1, conns)
	require.Equal(t, 0, closed)
	require.Eventually(t, func() bool { _, _, _, closed := s.stats(); return closed == 1 && len(h.live()) == 0 },
		5*time.Second, 10*time.Millisecond, "closed once idle")
	wholeAll(t, c, s.URL, []string{"/next"})
	conns, _, _, _ = s.stats()
	assert.Equal(t, 2, conns)
}

func TestPipelineClosesAConnectionThatStopsAnswering(t *testing.T) {
	s := newRawServer(t, func(p string, n int) rawAnswer {
		return rawAnswer{body: bodyOf(p), stall: p == "/stuck"}
	})
	opts := fastOptions()
	opts.Timeout = 300 * time.Millisecond
	opts.Retries = -1
	c := rawClient(t, s, opts)
	primeRTT(t, c, s)
	_, err := c.Whole(testContext(t), s.URL+"/stuck", "")
	require.ErrorIs(t, err, ErrTimeout)
	require.Eventually(t, func() bool { _, _, _, closed := s.stats(); return closed == 1 }, 5*time.Second, 10*time.Millisecond,
		"the stuck connection is closed")
	wholeAll(t, c, s.URL, []string{"/a"}) // on a new connection
	conns, _, _, _ := s.stats()
	assert.Equal(t, 3, conns, "the one that primed, the stuck one, a new one")
}

func TestPipelineKeepsAConnectionWhoseCallerLeft(t *testing.T) {
	s := newRawServer(t, func(p string, _ int) rawAnswer {
		a := rawAnswer{body: bodyOf(p)}
		if p == "/slow" {
			a.delay = 300 * time.Millisecond
		}
		return a
	})
	c := rawClient(t, s, fastOptions())
	h := c.pipe().host(canonicalAddr(mustURL(s.URL)))
	primeRTT(t, c, s)

	// Given up before it is written: never written.
	ctx, cancel := context.WithCancel(testContext(t))
	cancel()
	_, err := h.p.RoundTrip(mustRequest(t, ctx, s.URL+"/never"))
	require.ErrorIs(t, err, context.Canceled)

	// Given up while the server works on it: its answer is read and
	// dropped, and the connection kept.
	ctx, cancel = context.WithTimeout(testContext(t), 50*time.Millisecond)
	defer cancel()
	_, err = c.Whole(ctx, s.URL+"/slow", "")
	require.Error(t, err)
	require.Eventually(t, func() bool {
		live := h.live()
		return s.answered("/slow") == 1 && len(live) == 1 && live[0].load.Load() == 0
	},
		5*time.Second, 5*time.Millisecond)
	wholeAll(t, c, s.URL, []string{"/c"})

	conns, requests, _, closed := s.stats()
	assert.Equal(t, 2, conns, "the one that primed and one pipelined: a request its caller gave up does not cost it")
	assert.Equal(t, 0, closed)
	assert.Equal(t, primeN+2, requests, "/slow and /c; not /never")
	assert.Equal(t, 0, s.answered("/never"))
}

func mustRequest(t *testing.T, ctx context.Context, raw string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(asContent(ctx), http.MethodGet, raw, nil)
	require.NoError(t, err)
	return req
}

func TestPipelineOnlyCarriesContentGETs(t *testing.T) {
	s := newRawServer(t, func(p string, _ int) rawAnswer { return rawAnswer{body: bodyOf(p)} })
	c := rawClient(t, s, fastOptions())
	resp, err := c.Get(testContext(t), s.URL+"/doc", nil)
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.False(t, c.Network(s.URL).Pipelined, "a document is not a content")
}

// primeRTT asks s for /first alone, primeN times one after the other: the
// round trip that has the host pipelined (the first one's includes the
// connection's setup).
func primeRTT(t *testing.T, c *Client, s *rawServer) {
	t.Helper()
	for range primeN {
		wholeAll(t, c, s.URL, []string{"/first"})
	}
}

const primeN = 6

// loggedOptions are fastOptions whose log is kept.
func loggedOptions() (Options, *logbuf.Buffer) {
	b := &logbuf.Buffer{}
	opts := fastOptions()
	opts.Logger = b.Logger()
	return opts, b
}

// pipe is the client's pipeline (white box).
func (c *Client) pipe() *pipeline {
	return c.transport.next.(*pipeline)
}

func mustURL(raw string) *url.URL {
	u, err := url.Parse(raw)
	if err != nil {
		panic(err)
	}
	return u
}
