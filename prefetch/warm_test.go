package prefetch

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/cache"
	"rsfs/catalog"
	"rsfs/resourcesync"
	"rsfs/tests/cachetest"
	"rsfs/tests/wait"
)

// warmTree is a catalog of small files at the given paths, and a
// Prefetcher over it whose Batch (a dump's batches) and Fetcher (the
// files' own URIs) record what they are asked for. Every request the
// reader's reads make to the Fetcher is a round trip it waits on; a Batch
// call is one for the window.
type warmTree struct {
	p       *Prefetcher
	cat     *catalog.Catalog
	origin  *cachetest.Origin
	blocks  *cache.Cache
	paths   []string
	mu      sync.Mutex
	asked   map[string]int // URI: times asked of Batch
	batches int            // Batch calls
	bytes   int64          // bytes Batch gave
}

func warmBody(uri string) []byte { return []byte("body of " + uri) }

func newWarmTree(t *testing.T, paths []string, withBatch bool) *warmTree {
	return newWarmTreeUnsized(t, paths, withBatch, nil)
}

// newWarmTreeUnsized is newWarmTree with the paths unsized listed without
// a length, learned (when asked) from their bodies.
func newWarmTreeUnsized(t *testing.T, paths []string, withBatch bool, unsized map[string]bool) *warmTree {
	cat := catalog.New(catalog.Options{Origin: testOrigin})
	origin := cachetest.NewOrigin(nil)
	for _, p := range paths {
		uri := testOrigin + "/" + p
		body := warmBody(uri)
		origin.Set(uri, body)
		length := int64(len(body))
		if unsized[p] {
			length = resourcesync.NoLength
		}
		cat.Add(&catalog.Resource{URI: uri, Length: length,
			Hashes: []resourcesync.Hash{{Alg: "sha-256", Value: cachetest.SHA256Hex(body)}}})
	}
	cat.Seal()
	w := &warmTree{cat: cat, origin: origin, paths: paths, asked: map[string]int{}}
	w.blocks = cache.New(cache.Config{MaxBytes: 64 << 20, BlockSize: 4096, ReadAhead: -1, Logger: quiet})
	t.Cleanup(w.blocks.Close)
	cfg := Config{Catalog: cat, Cache: w.blocks,
		Fetcher: func(r *catalog.Resource) cache.Fetcher { return origin.Of(r.URI) },
		Length: func(_ context.Context, r *catalog.Resource) (int64, error) {
			return int64(len(warmBody(r.URI))), nil
		}}
	if withBatch {
		cfg.Batch = w.batch
	}
	w.p = newTestPrefetcher(t, cfg)
	return w
}

func (w *warmTree) batch(_ context.Context, rs []*catalog.Resource) [][]byte {
	out := make([][]byte, len(rs))
	w.mu.Lock()
	defer w.mu.Unlock()
	w.batches++
	for i, r := range rs {
		w.asked[r.URI]++
		out[i] = warmBody(r.URI)
		w.bytes += int64(len(out[i]))
	}
	return out
}

// read reads the file at path as a reader does through package fs, and
// checks its bytes.
func (w *warmTree) read(t *testing.T, p string) {
	t.Helper()
	uri := testOrigin + "/" + p
	got := readFile(t, w.p, lookup(t, w.cat, p), w.origin.Of(uri))
	require.Equal(t, string(warmBody(uri)), string(got), p)
}

// own is the requests the reader's reads made to the files' URIs.
func (w *warmTree) own() int {
	n := 0
	for _, p := range w.paths {
		n += w.origin.Count(testOrigin + "/" + p)
	}
	return n
}

func (w *warmTree) askedOf(p string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.asked[testOrigin+"/"+p]
}

// askedAll is how many contents Batch was asked for in all.
func (w *warmTree) askedAll() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, k := range w.asked {
		n += k
	}
	return uint64(n)
}

func (w *warmTree) totalBytes() int64 {
	var n int64
	for _, p := range w.paths {
		n += int64(len(warmBody(testOrigin + "/" + p)))
	}
	return n
}

// fanOut is files small files spread round-robin over dirs directories
// two levels deep (d00/s00/…), as a repository of many small records is.
func fanOut(files, top, sub int) []string {
	var paths []string
	for i := range files {
		d := i % (top * sub)
		paths = append(paths, fmt.Sprintf("d%02d/s%02d/f%05d.txt", d/sub, d%sub, i))
	}
	return paths
}

// items is n BagIt-like items: bag-info.txt, manifest-md5.txt and data/
// with 3 files each.
func items(n int) []string {
	var paths []string
	for i := range n {
		for _, name := range []string{"bag-info.txt", "manifest-md5.txt", "data/a.dat", "data/b.dat", "data/c.dat"} {
			paths = append(paths, fmt.Sprintf("item%04d/%s", i, name))
		}
	}
	return paths
}

// readdirOrder is the order grep -r, tar and find reach paths in: each
// directory's entries in the order readdir lists them (by name), a
// subdirectory walked where it is met.
func readdirOrder(paths []string) []string {
	out := slices.Clone(paths)
	slices.Sort(out)
	return out
}

// rsyncOrder is rsync's: a directory's files (sorted), then its
// subdirectories, each in turn.
func rsyncOrder(paths []string) []string {
	out := slices.Clone(paths)
	slices.SortFunc(out, func(a, b string) int {
		da, db := a[:strings.LastIndex(a, "/")+1], b[:strings.LastIndex(b, "/")+1]
		switch {
		case da == db:
			return strings.Compare(a, b)
		case strings.HasPrefix(db, da): // a's directory holds b's
			return -1
		case strings.HasPrefix(da, db):
			return 1
		}
		return strings.Compare(da, db)
	})
	return out
}

// A walk of many small directories, in readdir order and in rsync's, with
// a dump: the reader waits on a round trip for the first directory's
// first file and the second's, then finds every file claimed by a
// window; the windows are O(files/window) batches, not one per directory,
// and no byte is fetched twice.
func TestWarmWalkOfSmallDirectories(t *testing.T) {
	for _, tree := range []struct {
		name  string
		paths []string
	}{{"fan-out", fanOut(600, 10, 10)}, {"per-item", items(120)}} {
		for _, order := range []struct {
			name string
			of   func([]string) []string
		}{{"readdir", readdirOrder}, {"rsync", rsyncOrder}} {
			t.Run(tree.name+"/"+order.name, func(t *testing.T) {
				w := newWarmTree(t, tree.paths, true)
				for _, p := range order.of(tree.paths) {
					w.read(t, p)
				}
				dirs := map[string]bool{}
				for _, p := range tree.paths {
					for d := p; strings.Contains(d, "/"); {
						d = d[:strings.LastIndex(d, "/")]
						dirs[d] = true
					}
				}
				t.Logf("%d files in %d directories: %d requests the reader waited on, %d batches",
					len(tree.paths), len(dirs), w.own(), w.batches)
				assert.LessOrEqual(t, w.own(), 3, "requests the reader waited on")
				wait.For(t, "the batches to settle", func() bool { return w.blocks.Stats().Fills >= uint64(len(tree.paths)) })
				w.mu.Lock()
				defer w.mu.Unlock()
				assert.LessOrEqual(t, w.batches, len(tree.paths)/warmAhead+3, "batches: O(files/window), not O(directories)")
				for uri, n := range w.asked {
					assert.Equal(t, 1, n, "%s asked of the batch once", uri)
				}
				fetched := w.bytes
				for _, p := range tree.paths {
					fetched += int64(w.origin.Count(testOrigin+"/"+p)) * int64(len(warmBody(testOrigin+"/"+p)))
				}
				assert.LessOrEqual(t, float64(fetched), 1.25*float64(w.totalBytes()), "bytes fetched")
			})
		}
	}
}

// Without a dump, the window's files are fetched one by one in the
// background: a walker's window reaches across many small directories,
// and no file is fetched twice.
func TestWarmWalkWithoutADump(t *testing.T) {
	for _, tree := range []struct {
		name  string
		paths []string
	}{{"fan-out", fanOut(600, 10, 10)}, {"per-item", items(120)}} {
		t.Run(tree.name, func(t *testing.T) {
			w := newWarmTree(t, tree.paths, false)
			order := readdirOrder(tree.paths)
			for _, p := range order[:12] { // two directories and more
				w.read(t, p)
			}
			far := order[12+200]
			wait.For(t, far+" to be warmed", func() bool { return w.origin.Count(testOrigin+"/"+far) == 1 })
			for _, p := range order[12:] {
				w.read(t, p)
			}
			for _, p := range tree.paths {
				assert.Equal(t, 1, w.origin.Count(testOrigin+"/"+p), "%s fetched once", p)
			}
		})
	}
}

// A first read warms its directory only, however small; a reader that
// reads on past the middle of a large directory's window walks into the
// next directories.
func TestWarmWindowFollowsAWalker(t *testing.T) {
	var paths []string
	for d := range 4 {
		for i := range 100 {
			paths = append(paths, fmt.Sprintf("d%d/f%04d.txt", d, i))
		}
	}
	paths = append(paths, fanOut(60, 2, 5)...) // e00… sorts after d3: small directories
	for i := range paths[400:] {
		paths[400+i] = "e" + paths[400+i][1:]
	}
	w := newWarmTree(t, paths, true)
	w.read(t, "e00/s00/f00000.txt")
	wait.For(t, "e00/s00 to be warmed", func() bool { return w.askedOf("e00/s00/f00050.txt") == 1 })
	assert.Zero(t, w.askedOf("e00/s01/f00001.txt"), "a first read stays in its directory")

	w.read(t, "d0/f0000.txt")
	wait.For(t, "d0 to be warmed", func() bool { return w.askedOf("d0/f0099.txt") == 1 })
	assert.Zero(t, w.askedOf("d1/f0000.txt"), "a first read stays in its directory")
	for i := 1; i <= 50; i++ {
		w.read(t, fmt.Sprintf("d0/f%04d.txt", i))
	}
	wait.For(t, "d1 to d3 to be warmed", func() bool { return w.askedOf("d3/f0099.txt") == 1 })
	assert.Zero(t, w.own()-2, "the reader waited on its first reads only")
}

// A reader that stops walking stops the window within one refill: nothing
// is claimed past the window its last read asked for, and nothing more is
// claimed once it has stopped.
func TestWarmWindowStopsWithItsReader(t *testing.T) {
	paths := fanOut(3000, 20, 25)
	w := newWarmTree(t, paths, true)
	order := readdirOrder(paths)
	const stop = 700
	for _, p := range order[:stop] {
		w.read(t, p)
	}
	claimed := w.blocks.Stats().Warms
	wait.For(t, "the batches to settle", func() bool { return w.askedAll() == claimed })
	last := -1
	w.mu.Lock()
	for i, p := range order {
		if w.asked[testOrigin+"/"+p] > 0 {
			last = i
		}
	}
	w.mu.Unlock()
	t.Logf("read %d files; the windows reached file %d", stop, last)
	assert.Greater(t, last, stop, "the window ran ahead of the reader")
	assert.Less(t, last, stop+2*warmAhead, "the window stopped within one refill of the reader")
	assert.Equal(t, claimed, w.blocks.Stats().Warms, "nothing claimed once the reader stopped")
}

// A window stops at a file of unknown length, and the reader's reaching it
// fills the next: once the lengths are learned (in the background), the
// files after it are warmed as any are.
func TestWarmResumesAfterAFileOfUnknownLength(t *testing.T) {
	var paths []string
	unsized := map[string]bool{}
	for i := range 40 {
		p := fmt.Sprintf("d/f%03d.txt", i)
		paths = append(paths, p)
		if i >= 10 {
			unsized[p] = true
		}
	}
	w := newWarmTreeUnsized(t, paths, true, unsized)
	w.read(t, paths[0])
	wait.For(t, "the known files to be warmed", func() bool { return w.askedOf(paths[9]) == 1 })
	assert.Zero(t, w.askedOf(paths[10]), "one of unknown length is not")
	learned, failed := w.p.LearnLengths(context.Background(), 4)
	require.Equal(t, int64(30), learned)
	require.Zero(t, failed)
	for _, p := range paths[1:11] {
		w.read(t, p)
	}
	wait.For(t, "the files after it to be warmed once their lengths are known", func() bool { return w.askedOf(paths[39]) == 1 })
	assert.Equal(t, 1, w.askedOf(paths[20]))
	assert.Zero(t, w.askedOf(paths[10]), "the reader read it itself")
}
