package fetch

import (
	"context"
	"net/http"
	"strings"
)

// Meta is what Head learns about a resource.
type Meta struct {
	Length       int64 // -1 when unknown
	ETag         string
	LastModified string
	ContentType  string
	AcceptRanges bool
}

// Head learns a resource's length, validators and type. When the server
// refuses HEAD (405, 501) or its answer has no Content-Length, it asks
// GET with Range: bytes=0-0 and reads the total from Content-Range.
func (c *Client) Head(ctx context.Context, url string) (*Meta, error) {
	url = withoutUserinfo(url)
	resp, err := c.send(ctx, request{method: http.MethodHead, url: url})
	if err != nil {
		return nil, err
	}
	switch {
	case resp.StatusCode == http.StatusMethodNotAllowed || resp.StatusCode == http.StatusNotImplemented:
		discard(resp)
		return c.headByRange(ctx, url, nil)
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return nil, c.statusError(resp)
	}
	discard(resp)
	meta := metaOf(resp)
	meta.Length = resp.ContentLength
	if meta.Length < 0 {
		return c.headByRange(ctx, url, meta)
	}
	return meta, nil
}

// headByRange learns the length from a one-byte range request; known, when
// non-nil, is what a HEAD answer already said.
func (c *Client) headByRange(ctx context.Context, url string, known *Meta) (*Meta, error) {
	header := http.Header{"Range": {rangeHeader(0, 1)}}
	resp, err := c.send(ctx, request{method: http.MethodGet, url: url, header: header})
	if err != nil {
		return nil, err
	}
	meta := metaOf(resp)
	switch resp.StatusCode {
	case http.StatusOK:
		meta.Length = resp.ContentLength
	case http.StatusPartialContent, http.StatusRequestedRangeNotSatisfiable:
		cr, err := parseContentRange(resp.Header.Get("Content-Range"))
		if err != nil {
			return nil, c.statusError(resp)
		}
		meta.Length = cr.total
		meta.AcceptRanges = meta.AcceptRanges || resp.StatusCode == http.StatusPartialContent
	default:
		return nil, c.statusError(resp)
	}
	discard(resp)
	return mergeMeta(meta, known), nil
}

func metaOf(resp *http.Response) *Meta {
	return &Meta{
		Length:       -1,
		ETag:         resp.Header.Get("ETag"),
		LastModified: resp.Header.Get("Last-Modified"),
		ContentType:  resp.Header.Get("Content-Type"),
		AcceptRanges: strings.Contains(strings.ToLower(resp.Header.Get("Accept-Ranges")), "bytes"),
	}
}

// mergeMeta fills m's empty fields from known.
func mergeMeta(m, known *Meta) *Meta {
	if known == nil {
		return m
	}
	if m.ETag == "" {
		m.ETag = known.ETag
	}
	if m.LastModified == "" {
		m.LastModified = known.LastModified
	}
	if m.ContentType == "" {
		m.ContentType = known.ContentType
	}
	m.AcceptRanges = m.AcceptRanges || known.AcceptRanges
	return m
}
