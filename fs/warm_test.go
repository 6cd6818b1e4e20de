package fs

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/cache"
	"rsfs/catalog"
	"rsfs/resourcesync"
)

// warmTree is a catalog of dirs directories d0, d1, … of n small files
// each, and an FS over it whose Batch records what it is asked for (and
// gives every file's bytes).
type warmTree struct {
	fs     *FS
	cat    *catalog.Catalog
	blocks *cache.Cache
	mu     sync.Mutex
	asked  map[string]int // URI: times asked of Batch
}

func warmBody(uri string) []byte { return []byte("body of " + uri) }

func newWarmTree(t *testing.T, dirs, n int) *warmTree {
	cat := catalog.New(catalog.Options{Origin: testOrigin})
	for d := range dirs {
		for i := range n {
			uri := fmt.Sprintf("%s/d%d/f%04d.txt", testOrigin, d, i)
			body := warmBody(uri)
			cat.Add(&catalog.Resource{URI: uri, Length: int64(len(body)),
				Hashes: []resourcesync.Hash{{Alg: "sha-256", Value: sha256Hex(body)}}})
		}
	}
	cat.Seal()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	w := &warmTree{cat: cat, asked: map[string]int{}}
	w.blocks = cache.New(cache.Config{MaxBytes: 64 << 20, BlockSize: 4096, ReadAhead: -1, Logger: quiet})
	t.Cleanup(w.blocks.Close)
	origin := newMemOrigin()
	w.fs = New(Config{Catalog: cat, Cache: w.blocks, Logger: quiet, Timeout: testTimeout,
		Fetcher: func(r *catalog.Resource) cache.Fetcher { return origin.of(r.URI) },
		Batch: func(_ context.Context, rs []*catalog.Resource) [][]byte {
			out := make([][]byte, len(rs))
			w.mu.Lock()
			defer w.mu.Unlock()
			for i, r := range rs {
				w.asked[r.URI]++
				out[i] = warmBody(r.URI)
			}
			return out
		}})
	t.Cleanup(w.fs.Shutdown)
	return w
}

func (w *warmTree) file(t *testing.T, d, i int) (catalog.NodeID, string) {
	dir, _, ok := w.cat.Lookup(catalog.RootID, fmt.Sprintf("d%d", d))
	require.True(t, ok)
	name := fmt.Sprintf("f%04d.txt", i)
	id, _, ok := w.cat.Lookup(dir, name)
	require.True(t, ok)
	return id, name
}

func (w *warmTree) warmed(d, i int) bool { return w.askedOf(d, i) > 0 }

func (w *warmTree) askedOf(d, i int) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.asked[fmt.Sprintf("%s/d%d/f%04d.txt", testOrigin, d, i)]
}

// A first read warms the rest of its directory only; a reader that reads
// on past the refill point has the window run on into the next
// directories; nothing is asked of the batch twice.
func TestWarmWindowFollowsAWalker(t *testing.T) {
	w := newWarmTree(t, 4, 100)
	id, name := w.file(t, 0, 0)
	w.fs.warmSiblings(id, name)
	waitFor(t, "d0's files to be warmed", func() bool { return w.warmed(0, 99) })
	assert.Zero(t, w.askedOf(0, 0), "the file read is not warmed")
	assert.Zero(t, w.askedOf(1, 0), "a first read stays in its directory")

	id, name = w.file(t, 0, warmRefill+1)
	w.fs.warmSiblings(id, name)
	waitFor(t, "d1 and d2 to be warmed", func() bool { return w.warmed(1, 99) && w.warmed(2, 99) })
	assert.Zero(t, w.askedOf(3, 0), "two directories ahead at most")

	// The reader enters d1, which a window reached: it walks on into d3.
	id, name = w.file(t, 1, 0)
	w.fs.warmSiblings(id, name)
	waitFor(t, "d3 to be warmed", func() bool { return w.warmed(3, 50) })
	w.mu.Lock()
	defer w.mu.Unlock()
	for uri, n := range w.asked {
		assert.Equal(t, 1, n, "%s asked of the batch once", uri)
	}
}
