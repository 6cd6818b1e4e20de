package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"

	"rsfs/internal/catalog"
)

// ErrVersionChanged means the bytes an origin serves are no longer the
// version the catalog (and so the reader) has: the resource changed.
var ErrVersionChanged = errors.New("the resource changed since it was listed")

// Origin is where a resource's bytes come from: its URI, then the mirrors
// the Source names (rs:ln rel="duplicate"), in pri order. It implements
// cache.Origin. One Origin serves one open file: it remembers each URL's
// ETag from its first answer and asks later ranges with If-Range, so a
// file that changes while open fails (EIO) instead of mixing versions.
type Origin struct {
	s      *Source
	urls   []string
	length int64

	mu    sync.Mutex
	etags map[string]string
}

// OriginOf returns the origin of a catalog resource.
func (s *Source) OriginOf(r *catalog.Resource) *Origin {
	return &Origin{s: s, urls: candidates(r), length: r.Length, etags: map[string]string{}}
}

// candidates lists the resource's URI, then its duplicates by ascending pri
// (absent pri last), keeping the published order among equals.
func candidates(r *catalog.Resource) []string {
	type mirror struct {
		href string
		pri  int
	}
	var ms []mirror
	for _, l := range r.Links {
		if l.Rel == "duplicate" && l.Href != "" {
			pri := l.Pri
			if pri <= 0 {
				pri = int(^uint(0) >> 1)
			}
			ms = append(ms, mirror{l.Href, pri})
		}
	}
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].pri < ms[j].pri })
	urls := []string{r.URI}
	for _, m := range ms {
		urls = append(urls, m.href)
	}
	return urls
}

// OpenRange implements cache.Origin: it tries each candidate in turn until
// one answers with the listed version's length.
func (o *Origin) OpenRange(ctx context.Context, off, n int64) (io.ReadCloser, bool, error) {
	var errs []error
	for i, u := range o.urls {
		rc, toEnd, err := o.open(ctx, u, off, n)
		if err == nil {
			if i > 0 {
				o.s.log.Info("served from mirror", "uri", o.urls[0], "mirror", u)
			}
			return rc, toEnd, nil
		}
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		errs = append(errs, err)
		if i+1 < len(o.urls) {
			o.s.log.Warn("origin failed; trying the next copy", "uri", u, "err", err)
		}
	}
	return nil, false, fmt.Errorf("fetch %s: every copy failed: %w", o.urls[0], errors.Join(errs...))
}

func (o *Origin) open(ctx context.Context, u string, off, n int64) (io.ReadCloser, bool, error) {
	o.mu.Lock()
	etag := o.etags[u]
	o.mu.Unlock()
	body, err := o.s.opts.Client.Range(ctx, u, off, n, etag)
	if err != nil {
		return nil, false, err
	}
	if body.Total >= 0 && o.length >= 0 && body.Total != o.length {
		body.Close()
		return nil, false, fmt.Errorf("%s: %w: listed length %d, served %d", u, ErrVersionChanged, o.length, body.Total)
	}
	if body.ETag != "" && etag == "" {
		o.mu.Lock()
		o.etags[u] = body.ETag
		o.mu.Unlock()
	}
	return body, !body.Partial, nil
}
