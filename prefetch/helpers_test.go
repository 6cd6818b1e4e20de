package prefetch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"rsfs/cache"
	"rsfs/catalog"
)

const (
	testOrigin  = "http://src.example"
	testTimeout = time.Minute
)

var quiet = slog.New(slog.DiscardHandler)

// memOrigin serves bodies from memory and counts the requests per URI.
type memOrigin struct {
	mu       sync.Mutex
	bodies   map[string][]byte
	requests map[string]int
}

func newMemOrigin() *memOrigin {
	return &memOrigin{bodies: map[string][]byte{}, requests: map[string]int{}}
}

func (o *memOrigin) set(uri string, body []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.bodies[uri] = body
}

func (o *memOrigin) count(uri string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.requests[uri]
}

// of returns the cache.Fetcher of one URI.
func (o *memOrigin) of(uri string) cache.Fetcher { return uriOrigin{o, uri} }

type uriOrigin struct {
	o   *memOrigin
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

func sha256Hex(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// newTestPrefetcher is a Prefetcher over cat and blocks, fetching from
// origin, with cfg's other fields; it stops with the test.
func newTestPrefetcher(t *testing.T, cfg Config) *Prefetcher {
	t.Helper()
	cfg.Logger = quiet
	closing, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	return New(cfg, closing)
}

// lookup is the catalog node at the slash-separated path p.
func lookup(t *testing.T, cat *catalog.Catalog, p string) catalog.NodeID {
	t.Helper()
	id := catalog.RootID
	for _, name := range strings.Split(p, "/") {
		var ok bool
		id, _, ok = cat.Lookup(id, name)
		require.True(t, ok, p)
	}
	return id
}

// readFile reads file id to its end as package fs reads a file of one
// block for the kernel, in reads of 4096 bytes: each read opens the
// file's stream in the cache, tells p (Reading), reads and closes it.
func readFile(t *testing.T, p *Prefetcher, id catalog.NodeID, fetcher cache.Fetcher) []byte {
	t.Helper()
	v, ok := p.cfg.Catalog.Version(id)
	require.True(t, ok)
	var got []byte
	for {
		file := p.cfg.Cache.Open(ContentOf(v), fetcher)
		p.Reading(id, v.Resource.Length)
		parts, err := file.ReadRange(context.Background(), int64(len(got)), 4096)
		n := len(got)
		for _, b := range parts {
			got = append(got, b...)
		}
		file.Close()
		if err != nil && err != io.EOF {
			require.NoError(t, err)
		}
		if len(got) == n {
			return got
		}
	}
}

// waitFor polls cond until it holds; the bound only keeps a broken build
// from hanging.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
