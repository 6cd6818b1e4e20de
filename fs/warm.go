package fs

import (
	"context"
	"path"
	"sync"

	"rsfs/cache"
	"rsfs/catalog"
)

// Reading a small file warms the small files that follow it in its
// directory, so tools that read a tree in order (grep -r, rsync, tar) find
// them in memory instead of paying one round trip each. The window is wide
// enough to hide a long round trip: hundreds of files ahead of the reader
// are fetched or on their way, refilled as it goes, with the fetches
// running at once (dump members in a few large runs, other files with up
// to half the prefetch slots). A reader that walks (it has read on past the
// refill point of a directory, or it entered a directory a window already
// reached) has the window run on into the directories that follow in the
// parent.
const (
	warmAhead      = 512           // files in the window at most
	warmAheadBytes = 32 << 20      // and at most this many of their bytes
	warmRefill     = 32            // the window is refilled once the reader passes this many entries
	warmNextDirs   = 2             // directories after the reader's that a walker's window may reach into
	warmDirsKept   = 4096          // directories remembered before the maps are cleared
	warmScan       = 4 * warmAhead // entries of the reader's directory looked at per refill, at most
)

// warmer remembers, per directory, the name past which the next batch is
// due, and the directories a walker's window reached.
type warmer struct {
	mu      sync.Mutex
	refill  map[catalog.NodeID]string
	reached map[catalog.NodeID]bool
}

// warmWindow is what one refill collects.
type warmWindow struct {
	f         *FS
	items     []cache.WarmItem
	resources []*catalog.Resource
	bytes     int64
}

// take adds a small file to the window; it reports whether there is room
// for more.
func (w *warmWindow) take(_ string, cid catalog.NodeID, a catalog.Attr) bool {
	if w.room() && !a.Dir && a.Size > 0 && w.f.oneBlock(a.Size) {
		if v, ok := w.f.cfg.Catalog.Version(cid); ok {
			w.resources = append(w.resources, v.Resource)
			w.items = append(w.items, cache.WarmItem{Content: contentOf(v), Fetcher: w.f.cfg.Fetcher(v.Resource)})
			w.bytes += a.Size
		}
	}
	return w.room()
}

func (w *warmWindow) room() bool { return len(w.items) < warmAhead && w.bytes < warmAheadBytes }

// warmSiblings warms the small files after id in its directory (and, for a
// walker, in the directories after it), at most once per refill.
func (f *FS) warmSiblings(id catalog.NodeID, name string) {
	cat := f.cfg.Catalog
	parent, ok := cat.Parent(id)
	if !ok {
		return
	}
	w := &f.warm
	w.mu.Lock()
	if w.refill == nil || len(w.refill) > warmDirsKept {
		w.refill = map[catalog.NodeID]string{}
	}
	if w.reached == nil || len(w.reached) > warmDirsKept {
		w.reached = map[catalog.NodeID]bool{}
	}
	due, seen := w.refill[parent]
	if seen && name < due {
		w.mu.Unlock()
		return
	}
	walking := seen || w.reached[parent]
	w.refill[parent] = "\xff" // claimed; set below
	w.mu.Unlock()

	win := &warmWindow{f: f}
	next := ""
	n := 0
	cat.ReadDirAfter(parent, name, func(child string, cid catalog.NodeID, a catalog.Attr) bool {
		n++
		if n == warmRefill {
			next = child
		}
		room := win.take(child, cid, a)
		return n < warmRefill || (room && n < warmScan)
	})
	var reached []catalog.NodeID
	if walking && win.room() && parent != catalog.RootID {
		reached = f.warmNextDirs(parent, win)
	}
	w.mu.Lock()
	if next == "" {
		next = "\xff" // the directory's end: nothing more to warm
	}
	w.refill[parent] = next
	for _, d := range reached {
		w.reached[d] = true
	}
	w.mu.Unlock()
	if len(win.items) == 0 {
		return
	}
	if f.cfg.Batch == nil {
		f.cfg.Cache.Warm(win.items)
		return
	}
	go f.warmBatch(win.items, win.resources)
}

// warmNextDirs adds to win the small files of the directories after dir in
// its parent (at most warmNextDirs of them), and returns those it reached.
func (f *FS) warmNextDirs(dir catalog.NodeID, win *warmWindow) []catalog.NodeID {
	cat := f.cfg.Catalog
	gp, ok := cat.Parent(dir)
	if !ok {
		return nil
	}
	var reached []catalog.NodeID
	cat.ReadDirAfter(gp, path.Base(cat.Path(dir)), func(_ string, cid catalog.NodeID, a catalog.Attr) bool {
		if !a.Dir {
			return true
		}
		reached = append(reached, cid)
		cat.ReadDir(cid, win.take)
		return len(reached) < warmNextDirs && win.room()
	})
	return reached
}

// warmBatch reads what the Source can read in batches, stores it verified,
// and warms the rest one by one (cache.WarmBatch: the cache is asked first,
// memory then disk, and readers wait on the batch instead of fetching).
func (f *FS) warmBatch(items []cache.WarmItem, resources []*catalog.Resource) {
	f.cfg.Cache.WarmBatch(f.closing, items, func(ctx context.Context, which []int) [][]byte {
		rs := make([]*catalog.Resource, len(which))
		for j, i := range which {
			rs[j] = resources[i]
		}
		return f.cfg.Batch(ctx, rs)
	})
}
