package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
)

// ErrNoMultiRange is returned by Ranges when the server answered a request
// for several ranges with the whole representation: it does not serve them
// in one answer, and the caller should ask for them one by one.
var ErrNoMultiRange = errors.New("the server does not serve several ranges in one answer")

// Ranges GETs several byte ranges of url in one request (Range:
// bytes=a-b,c-d,...), with If-Range when ifRange (an ETag) is set, and
// returns each range's bytes. spans are [offset, length] pairs, sorted and
// not overlapping, each of length > 0. The answer may be
// multipart/byteranges (parts in any order, and parts that coalesce several
// ranges) or a single 206 part that covers them all; every part must lie
// within the first and last byte asked for, and report total as the
// representation's length (when total >= 0). A 200 returns ErrNoMultiRange
// without reading the body (ErrChanged if it answers If-Range with another
// representation). The body is not resumed: on any error the caller reads
// the ranges another way.
func (c *Client) Ranges(ctx context.Context, url string, spans [][2]int64, total int64, ifRange string) ([][]byte, error) {
	url = withoutUserinfo(url)
	if len(spans) == 0 {
		return nil, nil
	}
	var h strings.Builder
	h.WriteString("bytes=")
	for i, s := range spans {
		if s[1] <= 0 || s[0] < 0 || (i > 0 && s[0] < spans[i-1][0]+spans[i-1][1]) {
			return nil, fmt.Errorf("fetch %s: ranges not sorted, empty or overlapping", url)
		}
		if i > 0 {
			h.WriteByte(',')
		}
		fmt.Fprintf(&h, "%d-%d", s[0], s[0]+s[1]-1)
	}
	header := http.Header{"Range": {h.String()}}
	if ifRange != "" {
		header.Set("If-Range", ifRange)
	}
	resp, err := c.send(ctx, request{method: http.MethodGet, url: url, header: header})
	if err != nil {
		return nil, err
	}
	switch resp.StatusCode {
	case http.StatusPartialContent:
	case http.StatusOK:
		etag := resp.Header.Get("ETag")
		resp.Body.Close()
		if ifRange != "" && etag != ifRange && resp.Header.Get("Last-Modified") != ifRange {
			return nil, fmt.Errorf("fetch %s: If-Range %s answered whole with ETag %q: %w", url, ifRange, etag, ErrChanged)
		}
		return nil, fmt.Errorf("fetch %s: %w", url, ErrNoMultiRange)
	default:
		return nil, c.statusError(resp)
	}
	defer resp.Body.Close()
	a := &rangesAnswer{spans: spans, out: make([][]byte, len(spans)), total: total,
		first: spans[0][0], end: spans[len(spans)-1][0] + spans[len(spans)-1][1], budget: 1 << 20}
	for _, s := range spans {
		a.budget += 2 * s[1]
	}
	mt, params, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt == "multipart/byteranges" && params["boundary"] != "" {
		mr := multipart.NewReader(resp.Body, params["boundary"])
		for {
			part, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("fetch %s: multipart answer: %w", url, err)
			}
			if err := a.take(part.Header.Get("Content-Range"), part); err != nil {
				return nil, fmt.Errorf("fetch %s: multipart answer: %w", url, err)
			}
		}
	} else if err := a.take(resp.Header.Get("Content-Range"), resp.Body); err != nil {
		return nil, fmt.Errorf("fetch %s: 206 answer: %w", url, err)
	}
	for i, b := range a.out {
		if b == nil {
			return nil, fmt.Errorf("fetch %s: the answer lacks bytes %d-%d", url, spans[i][0], spans[i][0]+spans[i][1]-1)
		}
	}
	return a.out, nil
}

// rangesAnswer collects the parts of an answer to Ranges.
type rangesAnswer struct {
	spans      [][2]int64
	out        [][]byte
	total      int64
	first, end int64 // the bytes asked for lie in [first, end)
	budget     int64 // bytes the parts may still hold: twice those asked for, and 1 MiB
}

// take reads one part, whose Content-Range is cr, and hands its bytes to
// the spans it covers.
func (a *rangesAnswer) take(cr string, body io.Reader) error {
	r, err := parseContentRange(cr)
	if err != nil {
		return err
	}
	if r.first < a.first || r.last < r.first || r.last >= a.end {
		return fmt.Errorf("part %s outside the bytes asked for [%d, %d)", cr, a.first, a.end)
	}
	if a.total >= 0 && r.total != a.total {
		return fmt.Errorf("part %s: length %d, expected %d: %w", cr, r.total, a.total, ErrChanged)
	}
	n := r.last - r.first + 1
	if n > a.budget {
		return fmt.Errorf("part %s: more bytes than were asked for", cr)
	}
	a.budget -= n
	data := make([]byte, n)
	if _, err := io.ReadFull(body, data); err != nil {
		return fmt.Errorf("part %s: %w", cr, err)
	}
	for i, s := range a.spans {
		if s[0] >= r.first && s[0]+s[1] <= r.last+1 {
			a.out[i] = data[s[0]-r.first : s[0]-r.first+s[1] : s[0]-r.first+s[1]]
		}
	}
	return nil
}
