// Package cachetest is for tests only: an in-memory origin that hands out
// the cache.Fetcher of each URI and counts the requests each got, as the
// tests of fs and prefetch read through the block cache. No code but tests
// imports it (tests/design's import graph would show it).
package cachetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"sync"

	"rsfs/cache"
)

// Origin serves bodies from memory and counts the requests per URI.
type Origin struct {
	mu       sync.Mutex
	bodies   map[string][]byte
	requests map[string]int
}

// NewOrigin serves bodies, by URI (a copy of the map: Set adds to it).
func NewOrigin(bodies map[string][]byte) *Origin {
	o := &Origin{bodies: map[string][]byte{}, requests: map[string]int{}}
	maps.Copy(o.bodies, bodies)
	return o
}

// Set serves body at uri from now on.
func (o *Origin) Set(uri string, body []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.bodies[uri] = body
}

// Count is the requests uri got.
func (o *Origin) Count(uri string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.requests[uri]
}

// Requests is the requests each URI got, a copy.
func (o *Origin) Requests() map[string]int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return maps.Clone(o.requests)
}

// Of returns the cache.Fetcher of one URI: each OpenRange is a request;
// a URI it does not serve, or an offset past its end, is an error.
func (o *Origin) Of(uri string) cache.Fetcher { return uriOrigin{o, uri} }

type uriOrigin struct {
	o   *Origin
	uri string
}

func (u uriOrigin) OpenRange(ctx context.Context, off, n int64) (io.ReadCloser, bool, error) {
	u.o.mu.Lock()
	defer u.o.mu.Unlock()
	u.o.requests[u.uri]++
	body, ok := u.o.bodies[u.uri]
	if !ok || off > int64(len(body)) {
		return nil, false, fmt.Errorf("%s: no bytes at %d", u.uri, off)
	}
	end := min(off+n, int64(len(body)))
	return io.NopCloser(bytes.NewReader(body[off:end])), false, nil
}

// SHA256Hex is b's SHA-256, in hex, as a Source publishes it.
func SHA256Hex(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
