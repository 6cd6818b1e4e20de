package prefetch

import (
	"context"
	"math"
	"path"
	"sync"

	"rsfs/cache"
	"rsfs/catalog"
)

// Reading a small file warms the small files that follow it in the tree,
// so tools that read a tree in order (grep -r, rsync, tar, restic, find
// -exec cat) find them in memory instead of paying one round trip each.
//
// A reader is followed as a walk, recognised by its walk and not by the
// size of its directories. The first file read in a directory no walk
// knows starts one, whose first window is that directory's small files,
// fetched as one batch (from the directory's start when the file read is
// among its first entries, since the order a tool reads one directory in
// is not known; else from the file on). A reader that then opens a file
// in one of the next few directories of the tree's depth-first order
// (cousins included: d01/s000 after d00/s084), or reads on past the
// middle of its window, is walking: its window runs on across
// directories, in that order and at any depth, a fill sized in files,
// bytes and directories (from the network's round trip and bandwidth,
// window.go; a walk that goes on earns larger fills), and is refilled
// from where it ended each time
// the reader passes the middle of the last fill. So a walk of small
// directories costs a round trip per fill, not per directory. A reader
// that stops stops its window: nothing is fetched past the fill it last
// asked for. The window's bytes count against the cache's warm budget (a
// quarter of --cache-size, package cache), so memory stays bounded.
const (
	warmAhead      = 512      // files in one fill at most, until the network is measured (window.go)
	warmAheadBytes = 32 << 20 // and at most this many of their bytes
	warmAheadDirs  = 256      // and at most this many directories
	warmScan       = 8192     // entries looked at per fill, at most
	warmRefill     = 32       // a fill of fewer files in one directory has no refill point: its reader walks once it steps into the next directory
	warmNear       = 64       // a new walk starts at its directory's start when the file read is among its first warmNear entries
	warmFollows    = 4        // directories after a walk's last that its reader may open next and still be walking
	warmWalks      = 8        // walks followed at once
	warmDirsKept   = 4096     // directories remembered before the map is cleared
	dirEnd         = "\xff"   // sorts after every name: a cursor at a directory's end
	neverDue       = math.MaxInt
)

// warmer follows the walks: the directories their windows reached, in
// each walk's order.
type warmer struct {
	mu      sync.Mutex
	walks   []*walk // the least recently used first
	reached map[catalog.NodeID]reach
}

// reach is a directory a walk's window reached, and its place in the walk.
type reach struct {
	w   *walk
	ord int
}

// cursor is a place in the tree's depth-first order: after the entry
// named after in dir. A zero dir is the tree's end.
type cursor struct {
	dir   catalog.NodeID
	after string
}

// walk is one reader's walk; its fields are guarded by warmer.mu.
type walk struct {
	last    catalog.NodeID // the directory of the reader's last file
	walking bool           // its window may run on into the next directories
	cur     cursor         // where the next fill starts
	ord     int            // the place of the last directory reached
	dueOrd  int            // the reader's reaching the file dueName of the
	dueName string         // directory at place dueOrd asks for the next fill
	filling bool
	walked  int // fills that crossed directories: the next is grown (window.go)
}

// Reading is called when a reader opens a stream on file id, size bytes
// long (package fs: at each read of a file of one block, whose stream
// closes when the read ends). A small file's read follows the reader's
// walk, and fills its window when the read asks for it; a larger one's
// does nothing here (the cache reads ahead within a file).
func (p *Prefetcher) Reading(id catalog.NodeID, size int64) {
	if !p.cfg.Cache.OneBlock(size) {
		return
	}
	dir, ok := p.cfg.Catalog.Parent(id)
	if !ok {
		return
	}
	name := path.Base(p.cfg.Catalog.Path(id))
	wm := &p.warm
	wm.mu.Lock()
	r, known := wm.reached[dir]
	var lasts []catalog.NodeID
	if !known {
		for _, w := range wm.walks {
			lasts = append(lasts, w.last)
		}
	}
	wm.mu.Unlock()
	var after catalog.NodeID // the last directory of a walk dir follows
	for i := len(lasts) - 1; i >= 0 && !known; i-- {
		if lasts[i] != dir && p.follows(lasts[i], dir, warmFollows) {
			after = lasts[i]
			break
		}
	}
	var start cursor
	if !known {
		start = p.startOf(dir, name)
	}
	wm.mu.Lock()
	w, from, cross := wm.step(dir, name, r, known, after, start)
	wm.mu.Unlock()
	if w != nil {
		p.fill(w, id, from, cross)
	}
}

// startOf is where a walk entering dir at the file name starts: the
// directory's start if name is among its first warmNear entries, else
// name's place.
func (p *Prefetcher) startOf(dir catalog.NodeID, name string) cursor {
	n := 0
	near := false
	p.cfg.Catalog.ReadDir(dir, func(child string, _ catalog.NodeID, _ catalog.Attr) bool {
		n++
		near = child == name
		return !near && n < warmNear
	})
	if near {
		return cursor{dir: dir}
	}
	return cursor{dir: dir, after: name}
}

// step decides what a read of name in dir does to the walks, and returns
// the walk whose window it fills, where from, and whether the fill may
// cross into the next directories; nil when it fills none. r is the
// directory's reach when known; after, if set, is the last directory of
// a walk that dir follows in tree order. wm.mu must be held.
func (wm *warmer) step(dir catalog.NodeID, name string, r reach, known bool, after catalog.NodeID, start cursor) (*walk, cursor, bool) {
	var w *walk
	switch {
	case known:
		w = r.w
		if w.last != dir {
			w.last, w.walking = dir, true // a step into a directory its window reached
		}
		if !(r.ord > w.dueOrd || r.ord == w.dueOrd && name >= w.dueName) {
			wm.touch(w)
			return nil, cursor{}, false
		}
		w.walking = true // it read on past the middle of its window
	case after != 0:
		w = wm.walkAt(after)
		if w == nil {
			return nil, cursor{}, false
		}
		w.last, w.walking = dir, true // a step in tree order: the window follows
		if !w.filling {
			w.cur = start
		}
	default:
		w = &walk{last: dir, cur: start}
		wm.walks = append(wm.walks, w)
		if len(wm.walks) > warmWalks {
			wm.walks = wm.walks[1:]
		}
	}
	wm.touch(w)
	if w.filling || w.cur.dir == 0 {
		return nil, cursor{}, false
	}
	w.filling = true
	return w, w.cur, w.walking
}

// walkAt returns the walk whose reader was last in dir.
func (wm *warmer) walkAt(dir catalog.NodeID) *walk {
	for i := len(wm.walks) - 1; i >= 0; i-- {
		if wm.walks[i].last == dir {
			return wm.walks[i]
		}
	}
	return nil
}

// touch makes w the most recently used walk.
func (wm *warmer) touch(w *walk) {
	for i, x := range wm.walks {
		if x == w {
			copy(wm.walks[i:], wm.walks[i+1:])
			wm.walks[len(wm.walks)-1] = w
			return
		}
	}
}

// warmWindow is what one fill collects.
type warmWindow struct {
	p         *Prefetcher
	size      windowSize
	reading   catalog.NodeID // the file the reader opened: it fetches it
	items     []cache.WarmItem
	resources []*catalog.Resource
	bytes     int64
	dirs      []catalog.NodeID // the directories reached, in order
	places    []int            // per item, its directory's index in dirs
	names     []string         // per item, its name
	ids       []catalog.NodeID // per item, its catalog node
	gens      []uint64         // per item, its version
	// unsized is the file of unknown length the window stopped at
	// (lengths.go), and unsizedPlace its directory's index in dirs: the
	// reader's reaching it asks for the next fill, by when its length,
	// and those after it, may be known.
	unsized      string
	unsizedPlace int
}

// take adds a small file of the last directory reached to the window; it
// reports whether there is room for more.
func (w *warmWindow) take(name string, cid catalog.NodeID, a catalog.Attr) bool {
	if !a.Dir && a.NoSize && cid != w.reading {
		w.unsized, w.unsizedPlace = name, len(w.dirs)-1
		return false
	}
	if w.room() && !a.Dir && a.Size > 0 && cid != w.reading && w.p.cfg.Cache.OneBlock(a.Size) {
		if v, ok := w.p.cfg.Catalog.Version(cid); ok {
			w.resources = append(w.resources, v.Resource)
			w.items = append(w.items, cache.WarmItem{Content: ContentOf(v), Fetcher: w.p.cfg.Fetcher(v.Resource)})
			w.places = append(w.places, len(w.dirs)-1)
			w.names = append(w.names, name)
			w.ids = append(w.ids, cid)
			w.gens = append(w.gens, v.Attr.Gen)
			w.bytes += a.Size
		}
	}
	return w.room()
}

func (w *warmWindow) room() bool { return len(w.items) < w.size.files && w.bytes < w.size.bytes }

// collect fills win from cur in the tree's depth-first order, crossing
// into the next directories if cross, and returns where the next fill
// starts.
func (p *Prefetcher) collect(win *warmWindow, cur cursor, cross bool) cursor {
	scanned := 0
	for {
		win.dirs = append(win.dirs, cur.dir)
		last, stopped := cur.after, false
		if !p.cfg.Catalog.ReadDirAfter(cur.dir, cur.after, func(child string, cid catalog.NodeID, a catalog.Attr) bool {
			scanned++
			last = child
			stopped = !win.take(child, cid, a) || scanned >= warmScan
			return !stopped
		}) {
			return cursor{} // the directory is gone: the walk ends
		}
		if stopped && !p.dirDone(cur.dir, last) {
			return cursor{dir: cur.dir, after: last}
		}
		if !cross {
			return cursor{dir: cur.dir, after: dirEnd}
		}
		next, ok := p.nextDir(cur.dir)
		if !ok {
			return cursor{}
		}
		cur = cursor{dir: next}
		if !win.room() || len(win.dirs) >= warmAheadDirs || scanned >= warmScan {
			return cur
		}
	}
}

// dirDone reports whether name is dir's last entry.
func (p *Prefetcher) dirDone(dir catalog.NodeID, name string) bool {
	more := false
	p.cfg.Catalog.ReadDirAfter(dir, name, func(string, catalog.NodeID, catalog.Attr) bool {
		more = true
		return false
	})
	return !more
}

// fill collects w's next window from cur, records the directories it
// reached and its refill point (its middle file), and warms it.
func (p *Prefetcher) fill(w *walk, reading catalog.NodeID, cur cursor, cross bool) {
	wm := &p.warm
	size := p.windowSize()
	if cross {
		wm.mu.Lock()
		size = size.grown(w.walked)
		w.walked++
		wm.mu.Unlock()
	}
	win := &warmWindow{p: p, size: size, reading: reading}
	next := p.collect(win, cur, cross)
	wm.mu.Lock()
	if wm.reached == nil || len(wm.reached) > warmDirsKept {
		wm.reached = map[catalog.NodeID]reach{}
	}
	ords := make([]int, len(win.dirs))
	for i, d := range win.dirs {
		if r, ok := wm.reached[d]; ok && r.w == w {
			ords[i] = r.ord
			continue
		}
		w.ord++
		ords[i] = w.ord
		wm.reached[d] = reach{w: w, ord: w.ord}
	}
	w.cur, w.filling = next, false
	w.dueOrd, w.dueName = neverDue, ""
	due := -1 // the item that is the refill point
	switch {
	case len(win.items) > 0 && (cross || len(win.items) >= warmRefill):
		due = len(win.items) / 2
		w.dueOrd, w.dueName = ords[win.places[due]], win.names[due]
	case win.unsized != "":
		w.dueOrd, w.dueName = ords[win.unsizedPlace], win.unsized
	case cross && next.dir != 0:
		w.dueOrd = w.ord // nothing to warm: reaching the last directory asks for more
	}
	wm.mu.Unlock()
	if len(win.items) == 0 {
		return
	}
	p.handOver(win, due)
	if p.cfg.Batch == nil {
		p.cfg.Cache.Warm(win.items)
		return
	}
	p.warmBatch(win.items, win.resources)
}

// handOver has each item of win but the refill point given to
// Config.Warmed once it is filled.
func (p *Prefetcher) handOver(win *warmWindow, due int) {
	if p.cfg.Warmed == nil {
		return
	}
	for i := range win.items {
		if i == due {
			continue
		}
		id, gen := win.ids[i], win.gens[i]
		win.items[i].Filled = func(data []byte) { p.cfg.Warmed(id, gen, data) }
	}
}

// warmBatch reads what the Source can read in batches, stores it verified,
// and warms the rest one by one (cache.WarmBatch: the cache is asked first,
// memory then disk). The contents are claimed before it returns, so the
// reader's next open waits on the batch instead of fetching; they are read
// in the background.
func (p *Prefetcher) warmBatch(items []cache.WarmItem, resources []*catalog.Resource) {
	run := p.cfg.Cache.ClaimBatch(items)
	go run(p.closing, func(ctx context.Context, which []int) [][]byte {
		rs := make([]*catalog.Resource, len(which))
		for j, i := range which {
			rs[j] = resources[i]
		}
		return p.cfg.Batch(ctx, rs)
	})
}
