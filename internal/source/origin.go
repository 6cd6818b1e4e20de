package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"

	"rsfs/internal/catalog"
)

// Origin is where a resource's bytes come from: its URI, then the mirrors
// the Source names (rs:ln rel="duplicate"), in pri order. It implements
// cache.Origin.
type Origin struct {
	s    *Source
	urls []string
}

// OriginOf returns the origin of a catalog resource.
func (s *Source) OriginOf(r *catalog.Resource) *Origin {
	return &Origin{s: s, urls: candidates(r)}
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
// one answers.
func (o *Origin) OpenRange(ctx context.Context, off, n int64) (io.ReadCloser, bool, error) {
	var errs []error
	for i, u := range o.urls {
		body, err := o.s.opts.Client.Range(ctx, u, off, n, "")
		if err == nil {
			if i > 0 {
				o.s.log.Info("served from mirror", "uri", o.urls[0], "mirror", u)
			}
			return body, !body.Partial, nil
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
