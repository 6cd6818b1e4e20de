package fetch

import (
	"context"
	"fmt"
	"io"
)

// ReaderAt reads a representation of known size through Range requests, for
// io.ReaderAt users such as ZIP readers. Each ReadAt is one Range request,
// with If-Range when an ETag was given, so that a changed representation
// fails with ErrChanged instead of mixing versions.
type ReaderAt struct {
	ctx  context.Context
	c    *Client
	url  string
	size int64
	etag string
}

// NewReaderAt returns a ReaderAt over url's size bytes. ctx bounds every read.
func NewReaderAt(ctx context.Context, c *Client, url string, size int64, etag string) *ReaderAt {
	return &ReaderAt{ctx: ctx, c: c, url: url, size: size, etag: etag}
}

// BytesPerRoundTrip is what the host measured carries in the time of a
// round trip (its bandwidth times its round trip); 0 until both are
// measured.
func (r *ReaderAt) BytesPerRoundTrip() int64 {
	n := r.c.Network(r.url)
	return int64(n.Bandwidth * n.RTT.Seconds())
}

// InFlight is how many requests to the host are worth having in flight:
// MaxStreams where it speaks HTTP/2, else the connections per host.
func (r *ReaderAt) InFlight() int { return r.c.inFlight(r.c.Network(r.url)) }

// Size is the representation's size given to NewReaderAt.
func (r *ReaderAt) Size() int64 { return r.size }

// ReadAt reads len(p) bytes at off, fewer with io.EOF at the end.
func (r *ReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("fetch %s: negative offset %d", r.url, off)
	}
	if off >= r.size {
		return 0, io.EOF
	}
	want := min(int64(len(p)), r.size-off)
	if want == 0 {
		return 0, nil
	}
	body, err := r.c.Range(r.ctx, r.url, off, want, r.etag)
	if err != nil {
		return 0, err
	}
	defer body.Close()
	n, err := io.ReadFull(body, p[:want])
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return n, fmt.Errorf("fetch %s: reading %d bytes at %d of %d: %w", r.url, want, off, r.size, err)
	}
	if want < int64(len(p)) {
		return n, io.EOF
	}
	return n, nil
}

// ReadRange streams n bytes at off (n < 0: to the end) in one Range
// request, with If-Range when an ETag was given. It lets ZIP readers stream
// a member instead of reading it in chunks.
func (r *ReaderAt) ReadRange(ctx context.Context, off, n int64) (io.ReadCloser, error) {
	if n < 0 || off+n > r.size {
		n = r.size - off
	}
	body, err := r.c.Range(ctx, r.url, off, n, r.etag)
	if err != nil {
		return nil, err
	}
	if !body.Partial {
		return struct {
			io.Reader
			io.Closer
		}{io.LimitReader(body, n), body}, nil
	}
	return body, nil
}

// ReadRanges reads several ranges ([offset, length] pairs, sorted, not
// overlapping) in one request, with If-Range when an ETag was given (see
// Client.Ranges): ZIP readers use it to read members scattered in a package
// in one round trip.
func (r *ReaderAt) ReadRanges(ctx context.Context, spans [][2]int64) ([][]byte, error) {
	return r.c.Ranges(ctx, r.url, spans, r.size, r.etag)
}
