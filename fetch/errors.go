package fetch

import (
	"errors"
	"fmt"
	"net/http"
)

// Sentinel errors; the returned errors wrap them with the URL.
var (
	// ErrNotAllowed: the URL's origin (or a redirect target's) is not allowed.
	ErrNotAllowed = errors.New("fetch: host not allowed")
	// ErrNotModified: a conditional Get was answered 304. Get returns it bare.
	ErrNotModified = errors.New("fetch: not modified")
	// ErrChanged: a Range with If-Range was answered with another representation.
	ErrChanged = errors.New("fetch: representation changed")
	// ErrTimeout: no response headers, or no body progress, within Options.Timeout.
	ErrTimeout = errors.New("fetch: timeout")
	// ErrTooManyRedirects: more redirects than Options.MaxRedirects.
	ErrTooManyRedirects = errors.New("fetch: too many redirects")
)

// StatusError is an HTTP answer other than the one asked for (4xx, 5xx, or an
// unexpected status). Use errors.As to read it.
type StatusError struct {
	URL    string // the URL that answered (after redirects)
	Code   int    // e.g. 404
	Status string // e.g. "404 Not Found"
	// SlowDown, for a 429 or 503 after every retry, is what would let
	// the request through (Advice.SlowDown).
	SlowDown string
}

// IsGone reports whether err is an answer of 404 Not Found or 410 Gone:
// the document is no longer published.
func IsGone(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && (se.Code == http.StatusNotFound || se.Code == http.StatusGone)
}

func (e *StatusError) Error() string {
	status := e.Status
	if status == "" {
		status = fmt.Sprintf("%d %s", e.Code, http.StatusText(e.Code))
	}
	return fmt.Sprintf("fetch %s: HTTP %s%s", e.URL, status, throttleHint(e.Code, e.SlowDown))
}

// throttleHint says why a request the Source kept refusing as too many,
// after the retries and the pauses it asked for, failed, and what would
// let it through (advice, if any).
func throttleHint(code int, advice string) string {
	var why string
	switch code {
	case http.StatusTooManyRequests:
		why = "the Source refused it as too many requests, after every retry"
	case http.StatusServiceUnavailable:
		why = "the Source is unavailable, or refusing requests as too many"
	default:
		return ""
	}
	if advice != "" {
		why += ": " + advice
	}
	return " (" + why + ")"
}

// statusError drains and closes resp and describes its status.
func statusError(resp *http.Response) error {
	discard(resp)
	return &StatusError{URL: responseURL(resp), Code: resp.StatusCode, Status: resp.Status}
}

// statusError is the package's statusError with the Client's advice.
func (c *Client) statusError(resp *http.Response) error {
	err := statusError(resp).(*StatusError)
	err.SlowDown = c.opts.Advice.SlowDown
	return err
}

// responseURL is the URL that answered, after redirects.
func responseURL(resp *http.Response) string {
	if resp.Request != nil && resp.Request.URL != nil {
		return resp.Request.URL.String()
	}
	return ""
}
