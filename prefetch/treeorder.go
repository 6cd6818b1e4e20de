package prefetch

import (
	"path"

	"rsfs/catalog"
)

// treeScan bounds the entries one look for a subdirectory reads: a
// directory of more files than this is taken to hold no subdirectory
// after them, so a walk never scans a huge directory over and over.
const treeScan = 4096

// nextDir returns the directory after dir in the tree's depth-first
// order, the order in which grep -r, tar, rsync and find reach
// directories: dir's first subdirectory, else the next directory after
// dir in its parent, else after its parent in the grandparent, and so on
// (d00/s001 after d00/s000, d01 then d01/s000 after d00/s084). It returns
// false at the tree's end.
func (p *Prefetcher) nextDir(dir catalog.NodeID) (catalog.NodeID, bool) {
	if sub, ok := p.subdirAfter(dir, ""); ok {
		return sub, true
	}
	cat := p.cfg.Catalog
	for d := dir; d != catalog.RootID; {
		parent, ok := cat.Parent(d)
		if !ok {
			return 0, false
		}
		if next, ok := p.subdirAfter(parent, path.Base(cat.Path(d))); ok {
			return next, true
		}
		d = parent
	}
	return 0, false
}

// subdirAfter returns the first subdirectory of dir whose name sorts after
// after, looking at treeScan entries at most.
func (p *Prefetcher) subdirAfter(dir catalog.NodeID, after string) (catalog.NodeID, bool) {
	var found catalog.NodeID
	n := 0
	p.cfg.Catalog.ReadDirAfter(dir, after, func(_ string, id catalog.NodeID, a catalog.Attr) bool {
		n++
		if a.Dir {
			found = id
			return false
		}
		return n < treeScan
	})
	return found, found != 0
}

// follows reports whether dir is one of the n directories after prev in
// the tree's depth-first order: a reader that went from prev to dir is
// walking the tree (it may skip a few directories whose files it does not
// read, or that hold none).
func (p *Prefetcher) follows(prev, dir catalog.NodeID, n int) bool {
	d := prev
	for range n {
		next, ok := p.nextDir(d)
		if !ok {
			return false
		}
		if next == dir {
			return true
		}
		d = next
	}
	return false
}
