package fs

import (
	"sync"

	"rsfs/cache"
	"rsfs/catalog"
)

// Reading a small file warms the small files that follow it in its
// directory, so tools that read a tree in order (grep -r, rsync, tar) find
// them in memory instead of paying one round trip each.
const (
	warmAhead  = 64 // files warmed per batch
	warmRefill = 24 // the batch is refilled once the reader passes this many
)

// warmer remembers, per directory, the name past which the next batch is
// due.
type warmer struct {
	mu     sync.Mutex
	refill map[catalog.NodeID]string
}

// warmSiblings warms the small files after id in its directory, at most
// once per batch.
func (f *FS) warmSiblings(id catalog.NodeID, name string) {
	cat := f.cfg.Catalog
	parent, ok := cat.Parent(id)
	if !ok {
		return
	}
	w := &f.warm
	w.mu.Lock()
	if w.refill == nil {
		w.refill = map[catalog.NodeID]string{}
	}
	due, seen := w.refill[parent]
	if seen && name < due {
		w.mu.Unlock()
		return
	}
	w.refill[parent] = "\xff" // claimed; set below
	w.mu.Unlock()

	var items []cache.WarmItem
	var resources []*catalog.Resource
	next := ""
	n := 0
	cat.ReadDirAfter(parent, name, func(child string, cid catalog.NodeID, a catalog.Attr) bool {
		n++
		if n == warmRefill {
			next = child
		}
		if !a.Dir && a.Size > 0 && f.oneBlock(a.Size) {
			if v, ok := cat.Version(cid); ok {
				resources = append(resources, v.Resource)
				items = append(items, cache.WarmItem{Content: contentOf(v), Fetcher: f.cfg.Fetcher(v.Resource)})
			}
		}
		return n < warmAhead
	})
	w.mu.Lock()
	if next == "" {
		next = "\xff" // the directory's end: nothing more to warm
	}
	w.refill[parent] = next
	w.mu.Unlock()
	if len(items) == 0 {
		return
	}
	if f.cfg.Batch == nil {
		f.cfg.Cache.Warm(items)
		return
	}
	go f.warmBatch(items, resources)
}

// warmBatch reads what the Source can read in batches, stores it verified,
// and warms the rest one by one.
func (f *FS) warmBatch(items []cache.WarmItem, resources []*catalog.Resource) {
	datas := f.cfg.Batch(f.closing, resources)
	rest := items[:0:0]
	for i, it := range items {
		if datas[i] == nil || f.cfg.Cache.PutVerified(it.Content, datas[i]) != nil {
			rest = append(rest, it)
		}
	}
	if len(rest) > 0 {
		f.cfg.Cache.Warm(rest)
	}
}
