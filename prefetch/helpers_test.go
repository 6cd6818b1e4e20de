package prefetch

import (
	"context"
	"io"
	"log/slog"
	"strings"
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
