package fetch

import (
	"context"
	"net/http"
)

// What rsfs asks of the shared HTTP caches (Squid, nginx proxy_cache,
// Varnish) between it and a Source (docs/caches.md):
//
//   - A document (Get: lists, indexes, manifests) is always current: it is
//     sent with Cache-Control: max-age=0, so a cache revalidates its copy
//     with the origin (a conditional request, mostly answered 304) before
//     it serves it, and the Change Lists a mount polls are never a cache's
//     stale copy.
//   - Content (Whole, Range) is left to the cache: the bytes of a version
//     never change, and rsfs checks every byte it serves against the
//     published length and hash, whoever sent them.
//   - A request made under NoCache (a copy that answered with another
//     version than the catalog lists: a length, a validator or a hash that
//     disagrees) is sent with Cache-Control: no-cache and Pragma: no-cache,
//     so a cache fetches the origin's current representation and stores it
//     in place of the old one.

type cacheKey int

const (
	noCacheKey cacheKey = iota // requests under this context ask past caches
	contentKey                 // a content GET: no max-age=0
)

// NoCache returns a context whose requests ask every cache on the way to
// answer from the origin (Cache-Control: no-cache, Pragma: no-cache).
func NoCache(ctx context.Context) context.Context {
	return context.WithValue(ctx, noCacheKey, true)
}

// IsNoCache reports whether ctx was made by NoCache.
func IsNoCache(ctx context.Context) bool {
	v, _ := ctx.Value(noCacheKey).(bool)
	return v
}

// asContent marks a whole-content GET, which a cache may answer from its
// copy like a Range request.
func asContent(ctx context.Context) context.Context {
	return context.WithValue(ctx, contentKey, true)
}

// cacheControl is the RoundTripper that adds the headers above to each
// request: no-cache under NoCache, else max-age=0 on a GET of a document
// (a GET with no Range that is not a content's).
type cacheControl struct{ next http.RoundTripper }

func (t cacheControl) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	var cc, pragma string
	switch {
	case req.Header.Get("Cache-Control") != "":
	case IsNoCache(ctx):
		cc, pragma = "no-cache", "no-cache"
	case req.Method == http.MethodGet && req.Header.Get("Range") == "" && ctx.Value(contentKey) == nil:
		cc = "max-age=0"
	}
	if cc == "" {
		return t.next.RoundTrip(req)
	}
	// A RoundTripper must not change the request it is given.
	req = req.Clone(ctx)
	req.Header.Set("Cache-Control", cc)
	if pragma != "" {
		req.Header.Set("Pragma", pragma)
	}
	return t.next.RoundTrip(req)
}

// CloseIdleConnections passes the call on to the transport.
func (t cacheControl) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
