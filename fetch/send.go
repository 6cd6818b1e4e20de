package fetch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"rsfs/origin"
	"sync/atomic"
	"time"
)

// request is one logical request: retried and redirected as a whole.
type request struct {
	method string
	url    string
	header http.Header // per-request headers: Range, If-Range, If-None-Match...
}

// send performs r with retries. It returns the final response whatever its
// status (a 5xx after the last retry too); the caller owns its body.
func (c *Client) send(ctx context.Context, r request) (*http.Response, error) {
	o := originOf(r.url)
	if err := c.offlineErr(ctx, o, nil); err != nil {
		return nil, fmt.Errorf("fetch %s: %w", r.url, err)
	}
	deadline := c.readDeadline(ctx, time.Now())
	ctx = withWaitDeadline(ctx, deadline)
	for attempt := 0; ; attempt++ {
		resp, err := c.follow(ctx, r)
		cause := retryCause(resp, err)
		if cause == nil || attempt >= c.opts.Retries || ctx.Err() != nil {
			return resp, err
		}
		wait := c.backoff(attempt)
		if resp != nil {
			wait = c.retryAfter(resp, wait)
			discard(resp)
		}
		if noAnswer(ctx, err) && c.tracking() && !isPatient(ctx) {
			// Offline, a read fails now and a probe after one attempt;
			// else a read waits for the origin until its deadline.
			if oe := c.offlineErr(ctx, o, err); oe != nil {
				return nil, fmt.Errorf("fetch %s: %w", r.url, oe)
			}
			if _, off := c.health.of(o).offline(c.opts.Timeout); off || !deadline.IsZero() && time.Now().Add(wait).After(deadline) {
				return nil, err
			}
		}
		c.stats.retries.Add(1)
		c.log.Debug("fetch: retrying", "method", r.method, "url", r.url,
			"retry", attempt+1, "of", c.opts.Retries, "wait", wait, "cause", cause)
		if f := c.onRetry.Load(); f != nil {
			(*f)(Retry{Method: r.method, URL: r.url, Attempt: attempt + 1, Attempts: c.opts.Retries + 1, Wait: wait, Cause: cause})
		}
		if err := sleep(ctx, wait); err != nil {
			return nil, fmt.Errorf("fetch %s: %w (while retrying after: %v)", r.url, err, cause)
		}
	}
}

// follow performs r once, following redirects within the origin policy,
// which each hop consults once: whether it may go, and with which
// credentials.
func (c *Client) follow(ctx context.Context, r request) (*http.Response, error) {
	current := r.url
	creds, ok := c.policy.consult(current)
	if !ok {
		return nil, fmt.Errorf("fetch %s: %w%s", current, ErrNotAllowed, c.opts.Advice.allowHint(current))
	}
	for hops := 0; ; hops++ {
		resp, err := c.roundTrip(ctx, r.method, current, r.header, creds)
		if err != nil {
			return nil, err
		}
		next, err := redirectTarget(resp)
		if err != nil || next == "" {
			return resp, err
		}
		discard(resp)
		if hops >= c.opts.MaxRedirects {
			return nil, fmt.Errorf("fetch %s: redirect from %s to %s after %d redirects: %w",
				r.url, current, next, hops, ErrTooManyRedirects)
		}
		if creds, ok = c.policy.consult(next); !ok {
			return nil, fmt.Errorf("fetch %s: redirect from %s to %s: %w%s", r.url, current, next, ErrNotAllowed, c.opts.Advice.allowHint(next))
		}
		current = next
	}
}

// redirectTarget is the absolute Location of a redirect, or "" when resp is
// not one to follow.
func redirectTarget(resp *http.Response) (string, error) {
	switch resp.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
	default:
		return "", nil
	}
	loc := resp.Header.Get("Location")
	if loc == "" {
		return "", nil
	}
	target, err := resp.Request.URL.Parse(loc)
	if err != nil {
		discard(resp)
		return "", fmt.Errorf("fetch %s: bad redirect Location %q: %w", responseURL(resp), withoutUserinfo(loc), err)
	}
	target.User = nil // never sent, never logged
	return target.String(), nil
}

// roundTrip sends one HTTP request, when its origin's pacer lets it go.
// The attempt must see its response headers within Options.Timeout (the
// wait for its turn does not count); the returned body keeps the attempt
// alive until it is closed. creds are the credential headers the policy
// gives rawURL.
func (c *Client) roundTrip(ctx context.Context, method, rawURL string, header, creds http.Header) (*http.Response, error) {
	actx, cancelCause := context.WithCancelCause(ctx)
	cancel := func() { cancelCause(nil) }
	req, err := http.NewRequestWithContext(actx, method, rawURL, nil)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("fetch %s: %w", rawURL, err)
	}
	// A URL's user information is never sent: net/http would make it a
	// Basic Authorization header, to whatever host the URL names.
	// Credentials are the configured headers, sent only to their origin.
	req.URL.User = nil
	setHeaders(req, header, creds, c.opts.UserAgent)
	key := TrafficKey{Origin: originOf(rawURL), Kind: kindOf(method, header)}
	turn, err := c.acquire(ctx, key.Origin)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("fetch %s %s: waiting for its turn at %s: %w", method, rawURL, key.Origin, err)
	}
	var timedOut, connected atomic.Bool
	if c.tracking() {
		req = req.WithContext(httptrace.WithClientTrace(actx, &httptrace.ClientTrace{
			GotConn: func(httptrace.GotConnInfo) { connected.Store(true) },
		}))
	}
	wait := c.headerWait(ctx)
	timer := time.AfterFunc(wait, func() {
		timedOut.Store(true)
		cancelCause(ErrTimeout) // the pipeline closes the connection (pipeline.go)
	})
	c.stats.requests.Add(1)
	sent := time.Now()
	resp, err := c.transport.RoundTrip(req)
	if err == nil {
		key.Status = resp.StatusCode
	}
	c.traffic.count(key)
	if !timer.Stop() && timedOut.Load() {
		turn.finish(signalTimeout, 0, 0)
		if resp != nil {
			_ = resp.Body.Close()
		}
		err = fmt.Errorf("fetch %s %s: no response within %v: %w", method, rawURL, wait, ErrTimeout)
		c.noteFailure(ctx, key.Origin, sent, connected.Load(), err)
		return nil, err
	}
	if err != nil {
		turn.finish(signalNone, 0, 0)
		cancel()
		err = fmt.Errorf("fetch %s %s: %w", method, rawURL, unwrapURLError(err))
		c.noteFailure(ctx, key.Origin, sent, false, err)
		return nil, err
	}
	if c.tracking() {
		c.health.of(key.Origin).answered()
	}
	switch {
	case throttling(resp.StatusCode):
		turn.finish(signalThrottle, resp.StatusCode, c.retryAfter(resp, 0))
	case resp.StatusCode >= 500: // an error of the server's, not a sign of its load either way
		turn.finish(signalNone, resp.StatusCode, 0)
	default:
		turn.finish(signalOK, resp.StatusCode, 0)
	}
	c.nets.response(key.Origin, time.Since(sent), resp.ProtoMajor == 2, pipelined(resp))
	body := c.guardBody(actx, resp.Body, rawURL, cancel)
	body.originBytes = c.traffic.bytesOf(key.Origin)
	body.origin, body.nets = key.Origin, &c.nets
	resp.Body = body
	return resp, nil
}

// throttling reports whether an answer says "slow down": 429 Too Many
// Requests (RFC 6585), or 503 Service Unavailable, which nginx's limit_req
// answers by default and an overloaded server answers too.
func throttling(code int) bool {
	return code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable
}

// setHeaders sets the User-Agent, the per-request headers and the
// credential headers the origin policy gives the request (none but on the
// credential origin).
func setHeaders(req *http.Request, header, creds http.Header, userAgent string) {
	for k, vs := range creds {
		req.Header[k] = append([]string(nil), vs...)
	}
	for k, vs := range header {
		req.Header[k] = append([]string(nil), vs...)
	}
	req.Header.Set("User-Agent", userAgent)
}

// withoutUserinfo returns rawURL without the user information
// (user:password@) of its authority (origin.StripUserinfo).
func withoutUserinfo(rawURL string) string {
	out, _, _ := origin.StripUserinfo(rawURL)
	return out
}

// unwrapURLError drops net/http's *url.Error, whose text repeats the URL.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// acquire waits for a turn at origin; while the origin fails to answer, no
// longer than the request's wait deadline (withWaitDeadline), if it has
// one. An origin that answers is waited for as its pacer says.
func (c *Client) acquire(ctx context.Context, origin string) (*ticket, error) {
	if d, ok := ctx.Value(deadlineKey{}).(time.Time); ok && c.health.of(origin).failing() {
		dctx, cancel := context.WithDeadline(ctx, d)
		defer cancel()
		return c.pace.of(origin).acquire(dctx)
	}
	return c.pace.of(origin).acquire(ctx)
}

// noteFailure records an attempt at origin sent at sent that got no
// answer, unless its caller gave up first. connected: it had a connection.
func (c *Client) noteFailure(ctx context.Context, origin string, sent time.Time, connected bool, err error) {
	if c.tracking() && noAnswer(ctx, err) {
		c.health.of(origin).failed(sent, connected && errors.Is(err, ErrTimeout), err)
	}
}
