package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// RangeBody is the answer to Range. The caller must close it.
type RangeBody struct {
	// ReadCloser is positioned at the requested offset.
	io.ReadCloser
	// Partial is true when the server answered 206 for the range (or 416 for
	// an empty tail). False: the server ignored Range (200) and the first off
	// bytes were discarded; the stream then runs to the end of the
	// representation, and callers may keep reading past n.
	Partial bool
	// Total is the representation's length if known (Content-Range, or the
	// Content-Length of a 200), else -1.
	Total int64
	// ETag is the representation's ETag, "" when the server sent none.
	ETag string

	lastModified string // the Last-Modified header, a resume's validator without an ETag
}

// Range GETs bytes [off, off+n) of url (n < 0: to the end). A non-empty
// ifRange (an ETag) is sent as If-Range; if the server then answers 200 with
// another representation, Range returns ErrChanged (wrapped). A 416 at or
// beyond the end (off >= total) returns an empty body, not an error.
//
// A body that breaks mid-stream (reset, early EOF, stall, a drip below
// MinRate) is resumed at the next unread byte, up to Options.Retries times:
// with If-Range and a strong ETag where the server gave one, else with
// If-Range and its Last-Modified date, else with a plain Range; in every
// case the resumed answer must report the same total length, or the body
// fails with ErrChanged. (Without an ETag or a date, only the length
// guards the resumed bytes; rsfs's cache verifies the published hash.)
func (c *Client) Range(ctx context.Context, url string, off, n int64, ifRange string) (*RangeBody, error) {
	url = withoutUserinfo(url)
	if off < 0 {
		return nil, fmt.Errorf("fetch %s: negative range offset %d", url, off)
	}
	if n == 0 {
		return &RangeBody{ReadCloser: emptyBody(), Partial: true, Total: -1, ETag: ifRange}, nil
	}
	rb, err := c.rangeOnce(ctx, url, off, n, ifRange)
	if err != nil {
		return nil, err
	}
	validator := ifRange
	if validator == "" && strongETag(rb.ETag) {
		validator = rb.ETag
	}
	if validator == "" {
		validator = rb.lastModified
	}
	end := int64(-1)
	if rb.Partial && n > 0 {
		end = off + n
	}
	rb.ReadCloser = &resumingBody{c: c, ctx: ctx, url: url, validator: validator, total: rb.Total, pos: off, end: end, cur: rb.ReadCloser}
	return rb, nil
}

// rangeOnce sends one (retried, redirected) range request.
func (c *Client) rangeOnce(ctx context.Context, url string, off, n int64, ifRange string) (*RangeBody, error) {
	header := http.Header{"Range": {rangeHeader(off, n)}}
	if ifRange != "" {
		header.Set("If-Range", ifRange)
	}
	resp, err := c.send(ctx, request{method: http.MethodGet, url: url, header: header})
	if err != nil {
		return nil, err
	}
	var rb *RangeBody
	switch resp.StatusCode {
	case http.StatusPartialContent:
		rb, err = partialBody(resp, off)
	case http.StatusOK:
		rb, err = wholeBodyFrom(resp, off, ifRange)
	case http.StatusRequestedRangeNotSatisfiable:
		rb, err = emptyTail(resp, off)
	default:
		return nil, c.statusError(resp)
	}
	if rb != nil {
		rb.lastModified = resp.Header.Get("Last-Modified")
	}
	return rb, err
}

// partialBody checks that a 206 starts where asked.
func partialBody(resp *http.Response, off int64) (*RangeBody, error) {
	cr, err := parseContentRange(resp.Header.Get("Content-Range"))
	if err == nil && cr.first != off {
		err = fmt.Errorf("range starts at %d, asked %d", cr.first, off)
	}
	if err != nil {
		discard(resp)
		return nil, fmt.Errorf("fetch %s: 206 answer: %w", responseURL(resp), err)
	}
	return &RangeBody{ReadCloser: resp.Body, Partial: true, Total: cr.total, ETag: resp.Header.Get("ETag")}, nil
}

// wholeBodyFrom turns a 200 into a body positioned at off, unless it answers
// an If-Range with another representation.
func wholeBodyFrom(resp *http.Response, off int64, ifRange string) (*RangeBody, error) {
	url, etag := responseURL(resp), resp.Header.Get("ETag")
	if ifRange != "" && etag != ifRange && resp.Header.Get("Last-Modified") != ifRange {
		discard(resp)
		if etag == "" {
			etag = "(none)"
		}
		return nil, fmt.Errorf("fetch %s: If-Range %s answered whole with ETag %s: %w", url, ifRange, etag, ErrChanged)
	}
	rb := &RangeBody{ReadCloser: resp.Body, Total: resp.ContentLength, ETag: etag}
	skipped, err := io.CopyN(io.Discard, resp.Body, off)
	switch {
	case errors.Is(err, io.EOF):
		_ = resp.Body.Close()
		rb.ReadCloser, rb.Total = emptyBody(), skipped
	case err != nil:
		_ = resp.Body.Close()
		return nil, fmt.Errorf("fetch %s: skipping to %d of a 200 answer: %w", url, off, err)
	}
	return rb, nil
}

// emptyTail answers a 416 at or past the end with an empty body.
func emptyTail(resp *http.Response, off int64) (*RangeBody, error) {
	cr, err := parseContentRange(resp.Header.Get("Content-Range"))
	if err != nil || off < cr.total {
		return nil, statusError(resp)
	}
	discard(resp)
	return &RangeBody{ReadCloser: emptyBody(), Partial: true, Total: cr.total, ETag: resp.Header.Get("ETag")}, nil
}

// strongETag reports whether etag may be used with If-Range.
func strongETag(etag string) bool {
	return len(etag) >= 2 && etag[0] == '"'
}
