package fetch

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"
)

// maxDrain bounds how much of an unwanted body is read so that its connection
// can be reused.
const maxDrain = 64 << 10

// discard drains (bounded) and closes an unwanted response body.
func discard(resp *http.Response) {
	_, _ = io.CopyN(io.Discard, resp.Body, maxDrain)
	_ = resp.Body.Close()
}

// guardedBody is a response body that counts its bytes, fails a Read that
// makes no progress within the timeout or a transfer slower than the
// minimum rate, and ends its attempt on Close.
type guardedBody struct {
	rc      io.ReadCloser
	url     string
	timeout time.Duration
	minRate int64 // bytes per second; <= 0: none
	timer   *time.Timer
	stalled atomic.Bool
	cancel  context.CancelFunc
	bytes   *atomic.Int64

	// The rate is measured over time spent inside Read (a consumer that
	// pauses is not the server's fault), in windows of timeout.
	waited time.Duration
	got    int64
	// originBytes counts the bytes by origin too, when set.
	originBytes *atomic.Int64
	// nets, when set, is told on Close of the bytes read and the time
	// spent waiting for them (origin's bandwidth).
	nets    *networks
	origin  string
	read    int64
	reading time.Duration
	// bandwidth, when set, waits until n more bytes fit the Client's
	// bandwidth limit, whose bucket holds burst bytes; ctx is the attempt's.
	bandwidth func(ctx context.Context, n int) error
	burst     int
	ctx       context.Context
}

func (c *Client) guardBody(ctx context.Context, rc io.ReadCloser, url string, cancel context.CancelFunc) *guardedBody {
	b := &guardedBody{rc: rc, url: url, timeout: c.opts.Timeout, minRate: c.opts.MinRate, cancel: cancel, bytes: &c.stats.bytesRead, ctx: ctx}
	if c.bw != nil {
		b.bandwidth, b.burst = c.waitBandwidth, c.bw.Burst()
	}
	b.timer = time.AfterFunc(time.Hour, func() {
		b.stalled.Store(true)
		cancel()
	})
	b.timer.Stop()
	return b
}

func (b *guardedBody) Read(p []byte) (int, error) {
	if b.stalled.Load() {
		return 0, b.stallError()
	}
	if b.bandwidth != nil && len(p) > b.burst {
		p = p[:b.burst]
	}
	start := time.Now()
	b.timer.Reset(b.timeout)
	n, err := b.rc.Read(p)
	switch {
	case !b.timer.Stop() && b.stalled.Load():
		err = b.stallError()
	case err != nil && err != io.EOF:
		err = fmt.Errorf("fetch %s: reading body: %w", b.url, err)
	case err == nil:
		err = b.checkRate(time.Since(start), n)
	}
	b.read += int64(n)
	b.reading += time.Since(start)
	b.bytes.Add(int64(n))
	if b.originBytes != nil {
		b.originBytes.Add(int64(n))
	}
	if b.bandwidth != nil && n > 0 {
		// The wait is the reader's, not the server's: it counts toward
		// neither the stall timer nor the minimum rate.
		if werr := b.bandwidth(b.ctx, n); werr != nil && err == nil {
			err = fmt.Errorf("fetch %s: reading body: %w", b.url, werr)
		}
	}
	return n, err
}

// checkRate fails the body when a window of timeout spent in Read brought
// fewer bytes than the minimum rate asks.
func (b *guardedBody) checkRate(waited time.Duration, n int) error {
	if b.minRate <= 0 {
		return nil
	}
	b.waited += waited
	b.got += int64(n)
	if b.waited < b.timeout {
		return nil
	}
	want := int64(float64(b.minRate) * b.waited.Seconds())
	if b.got < want {
		b.stalled.Store(true)
		b.cancel()
		return fmt.Errorf("fetch %s: body too slow: %d bytes in %v, below the minimum %d bytes/s: %w",
			b.url, b.got, b.waited.Round(time.Millisecond), b.minRate, ErrTimeout)
	}
	b.waited, b.got = 0, 0
	return nil
}

func (b *guardedBody) stallError() error {
	return fmt.Errorf("fetch %s: body stalled for %v: %w", b.url, b.timeout, ErrTimeout)
}

func (b *guardedBody) Close() error {
	if b.nets != nil {
		b.nets.body(b.origin, b.read, b.reading)
	}
	b.timer.Stop()
	err := b.rc.Close()
	b.cancel()
	return err
}

// emptyBody is the body of an empty range.
func emptyBody() io.ReadCloser { return http.NoBody }
