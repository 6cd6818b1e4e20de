package fetch

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/time/rate"
)

// Client is the HTTP client every rsfs package uses. It is safe for
// concurrent use.
type Client struct {
	opts Options
	log  *slog.Logger
	// transport sends each request as it is: redirects are followed by
	// follow, hop by hop, so that the host policy and the credential rule
	// apply to each (http.Client's own following, header copying and
	// error wrapping would be work per request for nothing).
	transport cacheControl
	policy    *Policy
	stats     counters
	traffic   traffic
	nets      networks
	pace      pacers
	health    healths
	created   time.Time
	bw        *rate.Limiter // Options.BandwidthLimit; nil: none
	onRetry   atomic.Pointer[func(Retry)]
}

// Retry is a request about to be sent again, as OnRetry hears of it.
type Retry struct {
	Method, URL string
	Attempt     int           // the attempt that failed, from 1
	Attempts    int           // how many it will make in all
	Wait        time.Duration // before the next
	Cause       error
}

// OnRetry has f told of every retry from now on (nil: no one), e.g. to
// show a user why a mount is waiting.
func (c *Client) OnRetry(f func(Retry)) {
	if f == nil {
		c.onRetry.Store(nil)
		return
	}
	c.onRetry.Store(&f)
}

// Stats are the client's counters since New.
type Stats struct {
	Requests  int64 // HTTP requests sent, each redirect hop and retry counted
	Retries   int64 // retries and resumed range bodies
	BytesRead int64 // response body bytes read, including skipped ones
}

type counters struct {
	requests, retries, bytesRead atomic.Int64
}

// New returns a Client. Its origin policy allows only opts.CredentialOrigin
// until AllowOrigin or the Policy's Admit adds others.
func New(opts Options) *Client {
	opts = opts.withDefaults()
	c := &Client{
		opts:      opts,
		log:       opts.Logger,
		created:   time.Now(),
		transport: cacheControl{newTransport(opts)},
	}
	c.policy = newPolicy(opts.CredentialOrigin, opts.Headers, c.log)
	c.pace = pacers{
		opts: paceOptions{maxRate: opts.MaxRate, backoffBase: opts.BackoffBase,
			backoffMax: opts.BackoffMax, maxRetryWait: opts.MaxRetryAfter},
		limitOf: func(origin string) int { return c.inFlight(c.nets.get(origin)) },
	}
	if opts.BandwidthLimit > 0 {
		c.bw = rate.NewLimiter(rate.Limit(opts.BandwidthLimit), bandwidthBurst(opts.BandwidthLimit))
		c.bw.AllowN(time.Now(), c.bw.Burst()) // it starts empty: no burst above the limit
	}
	return c
}

// newTransport keeps connections alive, tries HTTP/2 on TLS and bounds the
// dial and handshake. Compression is left to the server's representation:
// transparent gzip would change lengths and ETags, which rsfs checks.
func newTransport(opts Options) http.RoundTripper {
	dialer := &net.Dialer{Timeout: opts.Timeout, KeepAlive: 30 * time.Second}
	var h2 *http.HTTP2Config
	if opts.BandwidthLimit > 0 {
		// What the server may send ahead of the reader: a little, so that
		// its own rate is the limit too (over HTTP/2 each stream's and the
		// connection's window, over HTTP/1.1 the socket's buffer).
		ahead := aheadOfReader(opts.BandwidthLimit)
		dialer.Control = receiveBuffer(ahead)
		h2 = &http.HTTP2Config{MaxReceiveBufferPerStream: ahead, MaxReceiveBufferPerConnection: max(ahead, 64<<10)}
	}
	t := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          4 * opts.MaxConnsPerHost,
		MaxIdleConnsPerHost:   opts.MaxConnsPerHost,
		MaxConnsPerHost:       opts.MaxConnsPerHost,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   min(opts.Timeout, 10*time.Second),
		ExpectContinueTimeout: time.Second,
		DisableCompression:    true,
		TLSClientConfig:       opts.TLSClientConfig.Clone(),
		HTTP2:                 h2,
	}
	return &pipeline{next: t, proxy: t.Proxy, dial: dialer.DialContext, conns: pipeConns(opts), idle: pipeIdle, log: opts.Logger}
}

// pipeConns is how many connections per host carry pipelined requests
// (pipeline.go), beside the transport's: an eighth of those allowed (2 of
// 16), so that the requests in flight, which stay as many as connections
// allowed (the pacer's limit), are written several at a time; none under a
// bandwidth limit, whose socket buffers are sized for one answer at a
// time.
func pipeConns(opts Options) int {
	if opts.BandwidthLimit > 0 {
		return 0
	}
	return opts.MaxConnsPerHost / 8
}

// Stats returns the counters.
func (c *Client) Stats() Stats {
	return Stats{
		Requests:  c.stats.requests.Load(),
		Retries:   c.stats.retries.Load(),
		BytesRead: c.stats.bytesRead.Load(),
	}
}

// CloseIdleConnections closes the kept-alive connections not in use.
func (c *Client) CloseIdleConnections() { c.transport.CloseIdleConnections() }

// bandwidthBurst is the bucket of a bandwidth limit: a tenth of a second's
// worth, at least 16 KiB, at most 1 MiB.
func bandwidthBurst(limit int64) int {
	return int(min(max(limit/10, 16<<10), 1<<20))
}

// aheadOfReader is how many bytes a server may send ahead of a reader held
// to a bandwidth limit: a quarter of its bucket, at least 16 KiB (the
// kernel doubles a socket's buffer).
func aheadOfReader(limit int64) int {
	return max(bandwidthBurst(limit)/4, 16<<10)
}

// receiveBuffer sets a socket's receive buffer to size bytes, so that under
// a bandwidth limit the kernel does not take in megabytes ahead of the
// reader: the server then sends at the limit too, not in bursts.
func receiveBuffer(size int) func(network, address string, raw syscall.RawConn) error {
	return func(_, _ string, raw syscall.RawConn) error {
		var serr error
		err := raw.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, size)
		})
		if err != nil {
			return err
		}
		return serr
	}
}

// waitBandwidth waits until n more body bytes fit the bandwidth limit.
func (c *Client) waitBandwidth(ctx context.Context, n int) error {
	if c.bw == nil || n <= 0 {
		return nil
	}
	return c.bw.WaitN(ctx, n)
}
