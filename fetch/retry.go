package fetch

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// retryCause says why an attempt is worth retrying, or nil when it is not:
// a transient transport error, a 5xx answer, or a 429 (a "slow down" that
// the origin's pacer has heeded before the retry goes).
func retryCause(resp *http.Response, err error) error {
	if err != nil {
		if transient(err) {
			return err
		}
		return nil
	}
	if resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests {
		return &StatusError{URL: responseURL(resp), Code: resp.StatusCode, Status: resp.Status}
	}
	return nil
}

// transient reports whether err is a failure that a new attempt may not
// meet: a timeout, a reset or refused connection, a connection closed early.
// The caller checks separately that its context is still live.
func transient(err error) bool {
	if errors.Is(err, ErrNotAllowed) || errors.Is(err, ErrTooManyRedirects) {
		return false
	}
	if errors.Is(err, ErrTimeout) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return dnsErr.IsTimeout || dnsErr.IsTemporary
	}
	var netErr net.Error
	return errors.As(err, &netErr) && netErr.Timeout()
}

// backoff is the wait before retry number attempt+1: uniform in
// [0, min(BackoffMax, BackoffBase*2^attempt)] (full jitter).
func (c *Client) backoff(attempt int) time.Duration {
	ceiling := c.opts.BackoffMax
	if attempt < 32 {
		if d := c.opts.BackoffBase << attempt; d > 0 && d < ceiling {
			ceiling = d
		}
	}
	return time.Duration(rand.Int64N(int64(ceiling) + 1))
}

// retryAfter is the wait a 429's or 503's Retry-After asks for (seconds or
// an HTTP date), bounded by MaxRetryAfter; otherwise it returns wait.
func (c *Client) retryAfter(resp *http.Response, wait time.Duration) time.Duration {
	value := resp.Header.Get("Retry-After")
	if !throttling(resp.StatusCode) || value == "" {
		return wait
	}
	var d time.Duration
	if secs, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64); err == nil {
		d = c.opts.MaxRetryAfter
		if secs < int64(c.opts.MaxRetryAfter/time.Second) {
			d = time.Duration(max(secs, 0)) * time.Second
		}
	} else if at, err := http.ParseTime(value); err == nil {
		d = max(time.Until(at), 0)
	} else {
		return wait
	}
	return min(d, c.opts.MaxRetryAfter)
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
