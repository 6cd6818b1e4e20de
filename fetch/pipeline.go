package fetch

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"rsfs/origin"
)

// Content GETs to an origin reached directly over plain HTTP/1.1, where
// the machine and not the network nor the server is the limit (pipeMaxRTT,
// pipeMaxService), are pipelined (RFC 9112 §9.3.2): written back to back
// on a few connections (pipeConns),
// as many as are waiting in one write, and their answers read in order,
// several in one read. The requests are the same ones, one per content; a
// small file then costs the client, and the server, a part of a write and
// of a read instead of one of each and their wakeups (issue 42: the
// request's write was 11% of rsfs's CPU over a first `grep -r`).
//
// Only GETs of a whole content are pipelined (Whole: a file of one block),
// whose answers are small: each is read whole off the connection before it
// is handed over, so a slow reader of one holds up no other. An answer
// with no length, or longer than pipeBodyMax, is handed over as it comes,
// and the next waits until it has been read to its end. Everything else
// (documents, ranges, HEADs, TLS, a proxy) goes through the ordinary
// transport, as does every request to an origin that answers HTTP/1.0 or
// whose connections close after answering at most one twice in a row (a
// server that does not pipeline).
const (
	// pipeQueue bounds the requests queued or written and not yet answered
	// on one connection: more than the pacer lets be in flight.
	pipeQueue = 128
	// pipeBodyMax is the largest answer read whole before it is handed
	// over: a block and its headers' slack.
	pipeBodyMax = 1<<20 + 64<<10
	// pipeTries is how many connections a request is written on before it
	// is sent alone through the ordinary transport: a connection that
	// closes (the server's keep-alive limit, an idle timeout) leaves the
	// requests it did not answer to be written again.
	pipeTries = 3
	// pipeRefusals: this many connections in a row of an origin that
	// closed without answering anything, and the origin is not pipelined.
	pipeRefusals = 2
	// pipeMaxRTT: a host's content GETs are pipelined only once one sent
	// alone has seen its answer's headers sooner than this: the least such
	// time, as TCP's BBR takes the network's delay to be the least round
	// trip (a mean would count the time requests wait behind each other,
	// or for the CPU, on a busy machine). Below it the machine, not the
	// network nor the server, is the limit; above it, a pipeline would
	// serialize a server's work or waits on a connection, and the requests
	// go on as many connections as before.
	pipeMaxRTT = 2 * time.Millisecond
	// pipeMaxService: a host that then takes longer than this on average
	// to answer a request it already has, over pipeSlowAnswers answers in
	// a row, is not pipelined again (it has become slow over each). A file
	// read from a cold disk, or a busy machine's scheduling, lasts less.
	pipeMaxService  = 10 * time.Millisecond
	pipeSlowAnswers = 16
	// pipeIdle: a pipelined connection with nothing asked for this long
	// is closed, as net/http closes its idle ones.
	pipeIdle = 90 * time.Second
	// timeWeight is a new sample's weight in the averages.
	timeWeight = 0.25
)

// errUnanswered: the connection a request was written on closed before its
// answer began. It is written again (a GET is idempotent, RFC 9110 §9.2.2).
var errUnanswered = errors.New("connection closed before the answer")

// pipeline is the RoundTripper of pipelined content GETs; next carries
// every other request.
type pipeline struct {
	next  http.RoundTripper
	proxy func(*http.Request) (*url.URL, error)
	dial  func(ctx context.Context, network, addr string) (net.Conn, error)
	conns int           // connections per host
	idle  time.Duration // pipeIdle, or what a test sets
	log   *slog.Logger

	mu    sync.Mutex
	hosts map[string]*pipeHost
}

// pipeHost is one host:port's pipelined connections.
type pipeHost struct {
	p    *pipeline
	addr string

	mu       sync.Mutex
	conns    []*pipeConn
	dialing  int
	dialed   chan struct{} // closed when a dial ends
	refusals int           // connections in a row that answered nothing
	off      bool          // the host does not pipeline
	minRTT   time.Duration // least time to the headers of a request sent alone; 0: none yet
	service  meanTime      // time to an answer once the server has its request
	slow     int           // answers in a row with service above pipeMaxService
}

// meanTime is a moving average of durations.
type meanTime struct {
	mean    time.Duration
	samples int
}

func (a *meanTime) add(d time.Duration) {
	if a.samples == 0 {
		a.mean = d
	} else {
		a.mean += time.Duration(timeWeight * float64(d-a.mean))
	}
	a.samples++
}

// pipeReq is a request written, or to be written, on a connection.
type pipeReq struct {
	req       *http.Request
	done      chan pipeResult // buffered: the reader never waits on it
	abandoned atomic.Bool     // its caller gave up: its answer is read and dropped
	written   time.Time       // set by the writer
}

type pipeResult struct {
	resp *http.Response
	err  error
}

func (p *pipeline) RoundTrip(req *http.Request) (*http.Response, error) {
	if !p.pipelines(req) {
		return p.next.RoundTrip(req)
	}
	h := p.host(canonicalAddr(req.URL))
	if !h.worth() {
		return h.alone(req)
	}
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	for try := 0; try < pipeTries && !h.isOff(); try++ {
		pc, err := h.conn(req.Context())
		if err != nil {
			return nil, err
		}
		if trace := httptrace.ContextClientTrace(req.Context()); trace != nil && trace.GotConn != nil {
			trace.GotConn(httptrace.GotConnInfo{Conn: pc.c, Reused: true})
		}
		r := &pipeReq{req: req, done: make(chan pipeResult, 1)}
		if !pc.enqueue(r) {
			continue
		}
		select {
		case res := <-r.done:
			if errors.Is(res.err, errUnanswered) {
				continue
			}
			return res.resp, res.err
		case <-req.Context().Done():
			r.abandoned.Store(true)
			select {
			case res := <-r.done:
				if res.resp != nil {
					_ = res.resp.Body.Close()
				}
			default:
				// Not answered in the time the caller waits for headers:
				// the connection is stuck, and is closed (what else was
				// waiting on it is written again). An answer to a request
				// given up for another reason is read and dropped.
				if errors.Is(context.Cause(req.Context()), ErrTimeout) {
					pc.fail(ErrTimeout)
				}
			}
			return nil, req.Context().Err()
		}
	}
	return h.alone(req)
}

// alone sends req to h as it is, not pipelined, and measures the time to
// its answer's headers.
func (h *pipeHost) alone(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := h.p.next.RoundTrip(req)
	if err == nil {
		took := time.Since(start)
		h.mu.Lock()
		if h.minRTT == 0 || took < h.minRTT {
			h.minRTT = took
		}
		h.mu.Unlock()
	}
	return resp, err
}

// pipelines reports whether req goes through the pipeline: a GET of a whole
// content, with no body, to a plain-HTTP origin reached directly.
// (Whether it is worth it is the host's: pipeHost.worth.)
func (p *pipeline) pipelines(req *http.Request) bool {
	if p.conns <= 0 || req.Method != http.MethodGet || req.URL.Scheme != "http" ||
		req.Body != nil && req.Body != http.NoBody ||
		req.Context().Value(contentKey) == nil || req.Header.Get("Range") != "" {
		return false
	}
	if p.proxy != nil {
		if u, err := p.proxy(req); err != nil || u != nil {
			return false
		}
	}
	return true
}

// canonicalAddr is the host:port of u (its scheme's default port when it
// names none).
func canonicalAddr(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = origin.DefaultPort(u.Scheme)
	}
	return net.JoinHostPort(u.Hostname(), port)
}

func (p *pipeline) host(addr string) *pipeHost {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.hosts == nil {
		p.hosts = map[string]*pipeHost{}
	}
	h, ok := p.hosts[addr]
	if !ok {
		h = &pipeHost{p: p, addr: addr, dialed: make(chan struct{})}
		p.hosts[addr] = h
	}
	return h
}

// CloseIdleConnections closes the pipelined connections with nothing in
// flight, and the ordinary transport's idle ones.
func (p *pipeline) CloseIdleConnections() {
	p.mu.Lock()
	hosts := make([]*pipeHost, 0, len(p.hosts))
	for _, h := range p.hosts {
		hosts = append(hosts, h)
	}
	p.mu.Unlock()
	for _, h := range hosts {
		for _, pc := range h.live() {
			if pc.load.Load() == 0 {
				pc.fail(errors.New("closed while idle"))
			}
		}
	}
	if c, ok := p.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// worth reports whether h's requests are worth pipelining: it answers
// requests sent alone fast, and pipelined ones without working on each.
func (h *pipeHost) worth() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return !h.off && h.minRTT > 0 && h.minRTT < pipeMaxRTT
}

// served records the time the server took over an answer it had the
// request for, and turns pipelining off for a server slow to answer.
func (h *pipeHost) served(d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.service.add(d)
	if h.service.mean <= pipeMaxService {
		h.slow = 0
		return
	}
	h.slow++
	if h.slow >= pipeSlowAnswers {
		h.turnOffLocked(fmt.Sprintf("it took %v on average over each of %d answers in a row", h.service.mean.Round(time.Microsecond), h.slow))
	}
}

func (h *pipeHost) isOff() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.off
}

func (h *pipeHost) live() []*pipeConn {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*pipeConn(nil), h.conns...)
}

// conn returns the connection to write a request on: the least loaded, or
// a new one while every one has requests waiting and the host has fewer
// than its share.
func (h *pipeHost) conn(ctx context.Context) (*pipeConn, error) {
	for {
		h.mu.Lock()
		var best *pipeConn
		for _, pc := range h.conns {
			if best == nil || pc.load.Load() < best.load.Load() {
				best = pc
			}
		}
		if best != nil && (best.load.Load() == 0 || len(h.conns)+h.dialing >= h.p.conns) {
			h.mu.Unlock()
			return best, nil
		}
		if best == nil && h.dialing >= h.p.conns {
			wait := h.dialed
			h.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		h.dialing++
		h.mu.Unlock()
		c, err := h.p.dial(ctx, "tcp", h.addr)
		h.mu.Lock()
		h.dialing--
		close(h.dialed)
		h.dialed = make(chan struct{})
		if err != nil {
			h.mu.Unlock()
			return nil, err
		}
		pc := newPipeConn(h, c)
		h.conns = append(h.conns, pc)
		h.mu.Unlock()
		return pc, nil
	}
}

// remove drops pc from the host's connections.
func (h *pipeHost) remove(pc *pipeConn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, c := range h.conns {
		if c == pc {
			h.conns = append(h.conns[:i], h.conns[i+1:]...)
			return
		}
	}
}

// closedAfter counts a closed connection that left requests unanswered
// after answering at most one towards turning the host's pipelining off;
// one that answered more resets the count.
func (h *pipeHost) closedAfter(pc *pipeConn, answered int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case answered > 1:
		h.refusals = 0
	case int(pc.written.Load()) > answered:
		h.refusals++
		if h.refusals >= pipeRefusals {
			h.turnOffLocked(fmt.Sprintf("%d connections in a row closed after at most one answer", h.refusals))
		}
	}
}

// turnOff stops pipelining to h for the rest of the mount, and says why
// once.
func (h *pipeHost) turnOff(why string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.turnOffLocked(why)
}

func (h *pipeHost) turnOffLocked(why string) {
	if h.off {
		return
	}
	h.off = true
	h.p.log.Info("fetch: no longer pipelining requests to "+h.addr+"; one at a time on each connection, as before", "why", why)
}

// pipeConn is one connection: a goroutine writes what is queued, as many
// requests in one write as are waiting, and another reads the answers in
// the order the requests were written.
type pipeConn struct {
	h       *pipeHost
	c       net.Conn
	queue   chan *pipeReq // to write
	sent    chan *pipeReq // written, in order, awaiting answers
	load    atomic.Int32  // queued and sent, not yet answered
	written atomic.Int32
	loops   sync.WaitGroup

	mu     sync.Mutex
	closed bool
	dead   chan struct{}
}

func newPipeConn(h *pipeHost, c net.Conn) *pipeConn {
	pc := &pipeConn{h: h, c: c,
		queue: make(chan *pipeReq, pipeQueue),
		sent:  make(chan *pipeReq, pipeQueue),
		dead:  make(chan struct{}),
	}
	pc.loops.Add(2)
	go pc.writeLoop()
	go pc.readLoop()
	return pc
}

// enqueue queues r to be written; false if the connection is closed or
// its queue full.
func (pc *pipeConn) enqueue(r *pipeReq) bool {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.closed {
		return false
	}
	select {
	case pc.queue <- r:
		pc.load.Add(1)
		return true
	default:
		return false
	}
}

func (pc *pipeConn) writeLoop() {
	defer pc.loops.Done()
	bw := bufio.NewWriterSize(pc.c, 16<<10)
	for {
		var r *pipeReq
		select {
		case r = <-pc.queue:
		case <-pc.dead:
			return
		}
		for {
			if r.abandoned.Load() { // given up before it was written
				pc.answer(r, pipeResult{err: errUnanswered})
				if r = pc.next(); r == nil {
					break
				}
				continue
			}
			r.written = time.Now() // before the reader can see it
			select {
			case pc.sent <- r:
			case <-pc.dead:
				pc.answer(r, pipeResult{err: errUnanswered})
				return
			}
			pc.written.Add(1)
			if err := writeRequest(bw, r.req); err != nil {
				pc.fail(fmt.Errorf("write request: %w", err))
				return
			}
			if r = pc.next(); r == nil {
				break
			}
		}
		if err := bw.Flush(); err != nil {
			pc.fail(fmt.Errorf("write requests: %w", err))
			return
		}
	}
}

// next is the next request queued, if one is: one written now is written
// with those before it. When none is, the other goroutines are let run
// once first, as those that are about to ask usually are.
func (pc *pipeConn) next() *pipeReq {
	if len(pc.queue) == 0 {
		runtime.Gosched()
	}
	select {
	case r := <-pc.queue:
		return r
	default:
		return nil
	}
}

func (pc *pipeConn) readLoop() {
	defer pc.loops.Done()
	br := bufio.NewReaderSize(pc.c, 64<<10)
	answered, armed := 0, false
	defer func() { pc.h.closedAfter(pc, answered) }()
	for {
		// Wait for bytes also while nothing is asked: a server that closes
		// an idle connection is seen at once, not by the next requests
		// written on it.
		ahead, waitFrom := br.Buffered() > 0, time.Now()
		if err := pc.peek(br, &armed); err != nil {
			pc.fail(err)
			return
		}
		var r *pipeReq
		select {
		case r = <-pc.sent: // queued before its bytes were written
		default:
			pc.fail(errors.New("bytes before any request"))
			return
		}
		// The server's time over the answer: none if it came while the
		// one before was read, else the wait since it had the request.
		var took time.Duration
		if !ahead {
			took = time.Since(later(waitFrom, r.written))
		}
		pc.h.served(took)
		resp, err := readAnswer(br, r.req)
		if err != nil {
			pc.answer(r, pipeResult{err: errUnanswered})
			pc.fail(err)
			return
		}
		answered++
		if !pc.deliver(r, resp) {
			return
		}
		if !resp.ProtoAtLeast(1, 1) {
			pc.h.turnOff("it answered " + resp.Proto) // HTTP/1.0 keeps no pipeline
		}
		if resp.Close {
			pc.fail(errors.New("the server closes it (Connection: close)"))
			return
		}
	}
}

// peek waits for the next answer's first byte, and closes the connection
// once nothing has been asked on it for its idle time. armed: the read deadline
// is set (it is changed only when the connection turns idle or busy).
func (pc *pipeConn) peek(br *bufio.Reader, armed *bool) error {
	for {
		if idle := pc.load.Load() == 0; idle != *armed {
			deadline := time.Time{}
			if idle {
				deadline = time.Now().Add(pc.h.p.idle)
			}
			if err := pc.c.SetReadDeadline(deadline); err != nil {
				return err
			}
			*armed = idle
		}
		_, err := br.Peek(1)
		if ne, ok := err.(net.Error); ok && ne.Timeout() && pc.load.Load() > 0 {
			continue // asked for while the deadline ran out: wait on
		}
		return err
	}
}

// deliver hands r its answer: one of known length up to pipeBodyMax read
// whole first, any other as it comes, the next waiting until it has been
// read to its end. false: the connection is closed.
func (pc *pipeConn) deliver(r *pipeReq, resp *http.Response) bool {
	if resp.ContentLength < 0 || resp.ContentLength > pipeBodyMax {
		if !pc.stream(r, resp) {
			pc.fail(errors.New("answer not read to its end"))
			return false
		}
		return true
	}
	buf := getWhole(int(resp.ContentLength))
	n, err := io.ReadFull(resp.Body, *buf)
	if err != nil {
		// Cut short: the caller reads what came and then the error, as
		// from net/http (and resumes by Range, as after any cut).
		got := bytes.Clone((*buf)[:n])
		putWhole(buf)
		resp.Body = &pipedBody{Reader: io.MultiReader(bytes.NewReader(got), errReader{io.ErrUnexpectedEOF})}
		pc.answer(r, pipeResult{resp: resp})
		pc.fail(err)
		return false
	}
	wb := &wholeBody{buf: buf}
	resp.Body = &pipedBody{Reader: wb, closer: wb}
	pc.answer(r, pipeResult{resp: resp})
	return true
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// readAnswer reads the next final answer's headers (an informational 1xx
// before it is skipped).
func readAnswer(br *bufio.Reader, req *http.Request) (*http.Response, error) {
	for {
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			return resp, nil
		}
	}
}

// stream hands r an answer of unknown or large length as it comes off the
// connection, and waits until it has been read to its end (true) or closed
// before it (false: the connection's place in the stream is lost).
func (pc *pipeConn) stream(r *pipeReq, resp *http.Response) bool {
	sb := &streamBody{rc: resp.Body, done: make(chan struct{})}
	resp.Body = &pipedBody{Reader: sb, closer: sb}
	pc.answer(r, pipeResult{resp: resp})
	select {
	case <-sb.done:
		return sb.eof.Load()
	case <-pc.dead:
		return false
	}
}

// answer hands r its result, or drops it when its caller gave up.
func (pc *pipeConn) answer(r *pipeReq, res pipeResult) {
	pc.load.Add(-1)
	r.done <- res
	if r.abandoned.Load() {
		select {
		case res := <-r.done:
			if res.resp != nil {
				_ = res.resp.Body.Close()
			}
		default:
		}
	}
}

// fail closes the connection for cause (logged at debug level); every
// request written or queued on it and not answered is told errUnanswered,
// and is written again elsewhere.
func (pc *pipeConn) fail(cause error) {
	pc.mu.Lock()
	if pc.closed {
		pc.mu.Unlock()
		return
	}
	pc.closed = true
	close(pc.dead)
	pc.mu.Unlock()
	pc.h.p.log.Debug("fetch: pipelined connection closed", "host", pc.h.addr, "cause", cause)
	_ = pc.c.Close()
	pc.h.remove(pc)
	go pc.drain()
}

// drain tells the requests left on a closed connection, once its loops
// have ended (nothing is queued after it closes).
func (pc *pipeConn) drain() {
	pc.loops.Wait()
	for {
		select {
		case r := <-pc.sent:
			pc.answer(r, pipeResult{err: errUnanswered})
		case r := <-pc.queue:
			pc.answer(r, pipeResult{err: errUnanswered})
		default:
			return
		}
	}
}

// streamBody is an answer read from the connection by its caller.
type streamBody struct {
	rc   io.ReadCloser
	eof  atomic.Bool
	once sync.Once
	done chan struct{}
}

func (b *streamBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err == io.EOF {
		b.eof.Store(true)
		b.finish()
	}
	return n, err
}

func (b *streamBody) Close() error {
	err := b.rc.Close() // net/http reads a short rest to its end
	b.finish()
	return err
}

func (b *streamBody) finish() { b.once.Do(func() { close(b.done) }) }

// pipedBody is the body of an answer that came through the pipeline.
type pipedBody struct {
	io.Reader
	closer io.Closer // nil: nothing to close
}

func (b *pipedBody) Close() error {
	if b.closer == nil {
		return nil
	}
	return b.closer.Close()
}

// Pipelined reports whether resp came through the pipeline.
func pipelined(resp *http.Response) bool {
	_, ok := resp.Body.(*pipedBody)
	return ok
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
