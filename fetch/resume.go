package fetch

import (
	"context"
	"fmt"
	"io"
)

// resumingBody reads a range and, when the connection breaks mid-body,
// requests the rest from the next unread byte, with If-Range where there is
// a validator (ETag or Last-Modified) and always checking the total length,
// so the bytes come from the same representation.
type resumingBody struct {
	c         *Client
	ctx       context.Context
	url       string
	validator string // ETag or HTTP date for If-Range; "" for none
	total     int64  // the representation's length, -1 if unknown
	pos       int64  // offset of the next byte to return
	end       int64  // exclusive end of the range, -1 for the representation's end
	cur       io.ReadCloser
	broken    error // a read error not yet acted on
	resumes   int
}

func (b *resumingBody) Read(p []byte) (int, error) {
	for {
		if b.broken != nil {
			if err := b.resume(); err != nil {
				return 0, err
			}
		}
		n, err := b.cur.Read(p)
		b.pos += int64(n)
		if err == nil || err == io.EOF || !transient(err) {
			return n, err
		}
		b.broken = err
		if n > 0 {
			return n, nil
		}
	}
}

// resume replaces the broken stream by a new range request from pos.
func (b *resumingBody) resume() error {
	cause := b.broken
	if b.resumes >= b.c.opts.Retries || b.ctx.Err() != nil {
		return fmt.Errorf("fetch %s: reading at %d: %w", b.url, b.pos, cause)
	}
	_ = b.cur.Close()
	b.cur = emptyBody()
	b.resumes++
	wait := b.c.backoff(b.resumes - 1)
	b.c.stats.retries.Add(1)
	b.c.log.Warn("fetch: resuming range", "url", b.url, "at", b.pos, "retry", b.resumes, "wait", wait, "cause", cause)
	if err := sleep(b.ctx, wait); err != nil {
		return fmt.Errorf("fetch %s: reading at %d: %w (while resuming after: %v)", b.url, b.pos, err, cause)
	}
	n := int64(-1)
	if b.end >= 0 {
		n = b.end - b.pos
	}
	if n == 0 {
		b.broken = nil
		return nil
	}
	rb, err := b.c.rangeOnce(b.ctx, b.url, b.pos, n, b.validator)
	if err != nil {
		return fmt.Errorf("fetch %s: resuming at %d: %w", b.url, b.pos, err)
	}
	if b.total >= 0 && rb.Total >= 0 && rb.Total != b.total {
		rb.Close()
		return fmt.Errorf("fetch %s: resuming at %d: length now %d, was %d: %w", b.url, b.pos, rb.Total, b.total, ErrChanged)
	}
	b.cur, b.broken = rb.ReadCloser, nil
	return nil
}

func (b *resumingBody) Close() error { return b.cur.Close() }
