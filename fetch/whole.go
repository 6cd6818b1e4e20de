package fetch

import (
	"context"
	"fmt"
	"net/http"
)

// Whole GETs a whole content, with no Range header: the request a shared
// cache stores and answers for every mount (stock Squid does not store the
// answer to a Range request, even one for every byte). The answer must be
// a 200 (a 206 or any other status is a *StatusError); Total is its
// Content-Length (-1 when it gave none), Partial false. A non-empty etag
// is the ETag an earlier answer had: an answer with another ETag is
// another representation, and Whole returns ErrChanged (wrapped), as Range
// does when an If-Range is answered whole. (No If-Match is sent: a cache
// would forward it, or answer 412, for nothing the check here misses.)
//
// A body that breaks mid-stream is resumed by Range from the next unread
// byte, as Range's are, with the same total length required.
func (c *Client) Whole(ctx context.Context, url, etag string) (*RangeBody, error) {
	url = withoutUserinfo(url)
	resp, err := c.send(asContent(ctx), request{method: http.MethodGet, url: url})
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, c.statusError(resp)
	}
	got := resp.Header.Get("ETag")
	if etag != "" && got != etag {
		discard(resp)
		if got == "" {
			got = "(none)"
		}
		return nil, fmt.Errorf("fetch %s: answered with ETag %s, earlier %s: %w", responseURL(resp), got, etag, ErrChanged)
	}
	rb := &RangeBody{Total: resp.ContentLength, ETag: got, lastModified: resp.Header.Get("Last-Modified")}
	validator := etag
	if validator == "" && strongETag(got) {
		validator = got
	}
	if validator == "" {
		validator = rb.lastModified
	}
	rb.ReadCloser = &resumingBody{c: c, ctx: ctx, url: url, validator: validator, total: rb.Total, pos: 0, end: -1, cur: resp.Body}
	return rb, nil
}

// LastModified is the Last-Modified header of the answer, "" if none.
func (rb *RangeBody) LastModified() string { return rb.lastModified }
