package fetch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
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
		return nil, fmt.Errorf("fetch %s: %w", current, ErrNotAllowed)
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
			return nil, fmt.Errorf("fetch %s: redirect from %s to %s: %w", r.url, current, next, ErrNotAllowed)
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

// roundTrip sends one HTTP request. The attempt must see its response headers
// within Options.Timeout; the returned body keeps the attempt alive until it
// is closed. creds are the credential headers the policy gives rawURL.
func (c *Client) roundTrip(ctx context.Context, method, rawURL string, header, creds http.Header) (*http.Response, error) {
	actx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(actx, method, rawURL, nil)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("fetch %s: %w", rawURL, err)
	}
	// A URL's user information is never sent: net/http would make it a
	// Basic Authorization header, to whatever host the URL names.
	// Credentials are the configured headers, sent only to their origin.
	req.URL.User = nil
	setHeaders(req, header, creds)
	var timedOut atomic.Bool
	timer := time.AfterFunc(c.opts.Timeout, func() {
		timedOut.Store(true)
		cancel()
	})
	c.stats.requests.Add(1)
	sent := time.Now()
	resp, err := c.http.Do(req)
	key := TrafficKey{Origin: originOf(rawURL), Kind: kindOf(method, header)}
	if err == nil {
		key.Status = resp.StatusCode
	}
	c.traffic.count(key)
	if !timer.Stop() && timedOut.Load() {
		if resp != nil {
			_ = resp.Body.Close()
		}
		return nil, fmt.Errorf("fetch %s %s: no response within %v: %w", method, rawURL, c.opts.Timeout, ErrTimeout)
	}
	if err != nil {
		cancel()
		return nil, fmt.Errorf("fetch %s %s: %w", method, rawURL, unwrapURLError(err))
	}
	c.nets.response(key.Origin, time.Since(sent), resp.ProtoMajor == 2)
	body := c.guardBody(resp.Body, rawURL, cancel)
	body.originBytes = c.traffic.bytesOf(key.Origin)
	body.origin, body.nets = key.Origin, &c.nets
	resp.Body = body
	return resp, nil
}

// setHeaders sets the User-Agent, the per-request headers and the
// credential headers the origin policy gives the request (none but on the
// credential origin).
func setHeaders(req *http.Request, header, creds http.Header) {
	for k, vs := range creds {
		req.Header[k] = append([]string(nil), vs...)
	}
	for k, vs := range header {
		req.Header[k] = append([]string(nil), vs...)
	}
	req.Header.Set("User-Agent", "rsfs/"+Version)
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
