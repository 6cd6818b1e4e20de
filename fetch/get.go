package fetch

import (
	"context"
	"io"
	"net/http"
)

// Validators identify a previously fetched representation.
type Validators struct {
	ETag         string
	LastModified string
}

// Response is a successful Get. The caller must close Body.
type Response struct {
	Body         io.ReadCloser
	URL          string // final URL, after redirects
	ETag         string
	LastModified string
	ContentType  string
	Length       int64 // Content-Length, -1 when unknown
	Header       http.Header
}

// Validators returns the response's validators, for a later conditional Get.
func (r *Response) Validators() *Validators {
	return &Validators{ETag: r.ETag, LastModified: r.LastModified}
}

// Get fetches a whole document. With v non-nil it sends If-None-Match and
// If-Modified-Since from v's non-empty fields, and a 304 answer returns
// (nil, ErrNotModified). Any answer but 2xx is a *StatusError.
func (c *Client) Get(ctx context.Context, url string, v *Validators) (*Response, error) {
	url = withoutUserinfo(url)
	header := http.Header{}
	if v != nil && v.ETag != "" {
		header.Set("If-None-Match", v.ETag)
	}
	if v != nil && v.LastModified != "" {
		header.Set("If-Modified-Since", v.LastModified)
	}
	resp, err := c.send(ctx, request{method: http.MethodGet, url: url, header: header})
	if err != nil {
		return nil, err
	}
	switch {
	case resp.StatusCode == http.StatusNotModified:
		discard(resp)
		return nil, ErrNotModified
	case resp.StatusCode < 200 || resp.StatusCode > 299 || resp.StatusCode == http.StatusPartialContent:
		return nil, c.statusError(resp)
	}
	return &Response{
		Body:         resp.Body,
		URL:          responseURL(resp),
		ETag:         resp.Header.Get("ETag"),
		LastModified: resp.Header.Get("Last-Modified"),
		ContentType:  resp.Header.Get("Content-Type"),
		Length:       resp.ContentLength,
		Header:       resp.Header,
	}, nil
}

// Document is a document as it was fetched, to be read again without a
// request: its URL and, when it was read whole, its body and its answer's
// validators (Body nil when it was not kept).
type Document struct {
	URL        string
	Body       []byte
	Validators *Validators
}
