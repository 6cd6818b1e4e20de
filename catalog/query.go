package catalog

import (
	"slices"
	"strings"
	"unsafe"

	"rsfs/resourcesync"
)

// readDirBatch is how many entries ReadDir copies per lock hold.
const readDirBatch = 256

// nameOf returns a node's name (aliasing the arena).
func (c *Catalog) nameOf(id NodeID) string {
	if id.IsDir() {
		d := &c.dirs[id&^dirBit]
		return c.arena.str(d.nameOff, int(d.nameLen))
	}
	return c.fileName(c.files.at(id))
}

func (c *Catalog) fileName(f *fileRec) string { return c.arena.str(f.nameOff, int(f.nameLen)) }

// liveDir returns the directory of id, or nil.
func (c *Catalog) liveDir(id NodeID) *dirRec {
	if !id.IsDir() || int(id&^dirBit) >= len(c.dirs) {
		return nil
	}
	d := &c.dirs[id&^dirBit]
	if d.deleted {
		return nil
	}
	return d
}

// liveFile returns the record of id, or nil.
func (c *Catalog) liveFile(id NodeID) *fileRec {
	if id.IsDir() || !c.files.valid(id) {
		return nil
	}
	f := c.files.at(id)
	if f.flags&flagDeleted != 0 || !c.sealed {
		return nil
	}
	return f
}

func (c *Catalog) attrOf(id NodeID) (Attr, bool) {
	if id.IsDir() {
		d := c.liveDir(id)
		if d == nil {
			return Attr{}, false
		}
		return Attr{Ino: d.ino, Dir: true, Size: DirSize, Mtime: mtimeUTC(d.mtime), Nlink: 2 + d.subdirs}, true
	}
	f := c.liveFile(id)
	if f == nil {
		return Attr{}, false
	}
	return c.fileAttr(f), true
}

func (c *Catalog) fileAttr(f *fileRec) Attr {
	return Attr{Ino: f.ino, Size: max(f.size, 0), NoSize: f.size < 0, Mtime: mtimeUTC(f.mtime), Nlink: 1, Gen: c.genOf(f)}
}

// SetLength records the length learned of a file whose list gave none, if
// the catalog still holds the version gen of it with no length; it returns
// the file's attributes as they now are. The new length makes a new Gen:
// the file system gives the version an inode only once its length is
// known, so no inode the kernel holds changes.
func (c *Catalog) SetLength(id NodeID, gen uint64, length int64) (Attr, bool) {
	if length < 0 {
		return Attr{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.liveFile(id)
	if f == nil || f.size >= 0 || c.genOf(f) != gen {
		return Attr{}, false
	}
	f.size = length
	c.liveBytes += length
	return c.fileAttr(f), true
}

// genOf is the version number of a file: FNV-1a 64 over its length, its
// lastmod and its hash blob.
func (c *Catalog) genOf(f *fileRec) uint64 {
	var blob []byte
	if f.hash != 0 {
		tail := c.arena.tail(f.hash)
		blob = tail[:hashBlobLen(tail)]
	}
	return versionGen(f.size, f.mtime, blob)
}

func versionGen(size, mtime int64, blob []byte) uint64 {
	const offset64, prime64 = 14695981039346656037, 1099511628211
	h := uint64(offset64)
	for _, v := range [2]uint64{uint64(size), uint64(mtime)} {
		for i := 0; i < 64; i += 8 {
			h ^= (v >> i) & 0xff
			h *= prime64
		}
	}
	for _, b := range blob {
		h ^= uint64(b)
		h *= prime64
	}
	return h
}

// childIndex returns the position of name among d's children and whether it
// is there.
func (c *Catalog) childIndex(d *dirRec, name string) (int, bool) {
	return slices.BinarySearchFunc(d.children, name, func(id NodeID, name string) int {
		return strings.Compare(c.nameOf(id), name)
	})
}

// Lookup finds name in directory parent.
func (c *Catalog) Lookup(parent NodeID, name string) (NodeID, Attr, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	d := c.liveDir(parent)
	if d == nil {
		return 0, Attr{}, false
	}
	i, ok := c.childIndex(d, name)
	if !ok {
		return 0, Attr{}, false
	}
	id := d.children[i]
	a, _ := c.attrOf(id)
	return id, a, true
}

// Attr returns a node's attributes; false if it does not exist (or was
// deleted).
func (c *Catalog) Attr(id NodeID) (Attr, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.attrOf(id)
}

// DirEntry is one child as ReadDir reports it.
type DirEntry struct {
	Name string
	ID   NodeID
	Attr Attr
}

// ReadDir calls fn for each child of dir in name order (bytewise) until fn
// returns false. No lock is held while fn runs: entries are copied in
// batches, and a batch resumes after the last name seen, so a concurrent
// change never repeats or skips an entry that stays. It returns false if dir
// is not a live directory.
func (c *Catalog) ReadDir(dir NodeID, fn func(name string, id NodeID, a Attr) bool) bool {
	return c.ReadDirAfter(dir, "", fn)
}

// ReadDirAfter is ReadDir starting after the name after ("" for the
// beginning), for readers that resume a listing.
func (c *Catalog) ReadDirAfter(dir NodeID, after string, fn func(name string, id NodeID, a Attr) bool) bool {
	batch := make([]DirEntry, 0, readDirBatch)
	first := true
	for {
		var ok bool
		batch, ok = c.readBatch(dir, after, first, batch[:0])
		if !ok {
			return !first
		}
		first = false
		for _, e := range batch {
			if !fn(e.Name, e.ID, e.Attr) {
				return true
			}
		}
		if len(batch) < readDirBatch {
			return true
		}
		after = batch[len(batch)-1].Name
	}
}

// readBatch copies up to readDirBatch children of dir whose names sort
// after after.
func (c *Catalog) readBatch(dir NodeID, after string, first bool, out []DirEntry) ([]DirEntry, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	d := c.liveDir(dir)
	if d == nil {
		return out, false
	}
	i := 0
	if after != "" || !first {
		var found bool
		i, found = c.childIndex(d, after)
		if found {
			i++
		}
	}
	for ; i < len(d.children) && len(out) < readDirBatch; i++ {
		id := d.children[i]
		a, _ := c.attrOf(id)
		out = append(out, DirEntry{Name: c.nameOf(id), ID: id, Attr: a})
	}
	return out, true
}

// Children returns a copy of a directory's entries in name order.
func (c *Catalog) Children(dir NodeID) ([]DirEntry, bool) {
	var out []DirEntry
	ok := c.ReadDir(dir, func(name string, id NodeID, a Attr) bool {
		out = append(out, DirEntry{Name: name, ID: id, Attr: a})
		return true
	})
	return out, ok
}

// Resource materialises the full record of a file.
func (c *Catalog) Resource(id NodeID) (*Resource, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	f := c.liveFile(id)
	if f == nil {
		return nil, false
	}
	return c.resourceOf(id, f), true
}

// FileVersion is one version of a file, all of it read at one instant:
// what reading that version needs once the catalog has moved on.
type FileVersion struct {
	Resource  *Resource
	ContentID string
	Attr      Attr
}

// Version returns the current version of a live file.
func (c *Catalog) Version(id NodeID) (FileVersion, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	f := c.liveFile(id)
	if f == nil {
		return FileVersion{}, false
	}
	return c.versionOf(id, f), true
}

func (c *Catalog) versionOf(id NodeID, f *fileRec) FileVersion {
	return FileVersion{Resource: c.resourceOf(id, f), ContentID: c.contentIDOf(f), Attr: c.fileAttr(f)}
}

func (c *Catalog) resourceOf(id NodeID, f *fileRec) *Resource {
	r := &Resource{
		URI:     c.uriOf(f),
		Length:  f.size,
		Lastmod: lastmod(f.mtime, f.tzMin),
		Type:    c.typeOf(id, f),
		Set:     f.set,
	}
	if f.hash != 0 {
		r.Hashes = decodeHashes(c.arena.tail(f.hash))
	}
	if f.links != 0 {
		r.Links, _ = decodeLinks(c.arena.tail(f.links)) // checked when stored or loaded
	}
	r.Props = slices.Clone(c.props[id])
	return r
}

// ContentID returns a file's content identity: its strongest published hash
// ("sha-256:<hex>", else "sha-1:", else "md5:"), or else
// "<uri>\x00<lastmod unix nanos>\x00<length>". It changes when the version
// changes; "" if id is not a live file.
func (c *Catalog) ContentID(id NodeID) string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	f := c.liveFile(id)
	if f == nil {
		return ""
	}
	return c.contentIDOf(f)
}

func (c *Catalog) contentIDOf(f *fileRec) string {
	if f.hash != 0 {
		if h := bestHash(c.arena.tail(f.hash)); h != "" {
			return h
		}
	}
	return versionID(c.uriOf(f), f.mtime, f.size)
}

// Hashes returns a file's published hashes.
func (c *Catalog) Hashes(id NodeID) []resourcesync.Hash {
	c.mu.RLock()
	defer c.mu.RUnlock()
	f := c.liveFile(id)
	if f == nil || f.hash == 0 {
		return nil
	}
	return decodeHashes(c.arena.tail(f.hash))
}

// Path returns a node's path relative to the root ("" for the root and for
// an unknown node).
func (c *Catalog) Path(id NodeID) string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if id.IsDir() && c.liveDir(id) == nil || !id.IsDir() && c.liveFile(id) == nil {
		return ""
	}
	return c.pathOf(id)
}

func (c *Catalog) pathOf(id NodeID) string {
	var parts []string
	parent := uint32(0)
	if id.IsDir() {
		parent = uint32(id &^ dirBit)
	} else {
		parts = append(parts, c.nameOf(id))
		parent = c.files.at(id).parent
	}
	for d := parent; d != 0; d = c.dirs[d].parent {
		parts = append(parts, c.nameOf(dirID(d)))
	}
	slices.Reverse(parts)
	return strings.Join(parts, "/")
}

// Parent returns the directory holding a live node (RootID for the root).
func (c *Catalog) Parent(id NodeID) (NodeID, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if id.IsDir() {
		if d := c.liveDir(id); d != nil {
			return dirID(d.parent), true
		}
		return 0, false
	}
	if f := c.liveFile(id); f != nil {
		return dirID(f.parent), true
	}
	return 0, false
}

// Len returns the number of live resources.
func (c *Catalog) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.live
}

// CountBySet returns the number of live resources by Resource.Set (0:
// resources whose set is not known). It walks every record: for a scrape
// or a status report, not a hot path.
func (c *Catalog) CountBySet() map[uint16]int {
	var bySet []int // indexed by set number: a map write per record costs 5x more
	c.mu.RLock()
	for id := NodeID(1); id < c.files.next; id++ {
		if f := c.liveFile(id); f != nil {
			if int(f.set) >= len(bySet) {
				bySet = append(bySet, make([]int, int(f.set)+1-len(bySet))...)
			}
			bySet[f.set]++
		}
	}
	c.mu.RUnlock()
	counts := make(map[uint16]int, len(bySet))
	for set, n := range bySet {
		if n > 0 {
			counts[uint16(set)] = n
		}
	}
	return counts
}

// Stats reports the catalog's size.
func (c *Catalog) Stats() Stats {
	c.mu.RLock()
	defer c.mu.RUnlock()
	dirs := 0
	for i := range c.dirs {
		if !c.dirs[i].deleted {
			dirs++
		}
	}
	return Stats{
		Resources:   c.live,
		Bytes:       c.liveBytes,
		Directories: dirs,
		ArenaBytes:  c.arena.allocated(),
		ArenaUsed:   c.arena.used(),
		Records:     int(c.files.next - 1),
		RecordBytes: int64(len(c.files.chunks)) * fileChunkSize * int64(unsafe.Sizeof(fileRec{})),
		IndexBytes:  c.uris.bytes(),
		Prefixes:    len(c.prefixes),
		Types:       len(c.types) - 1 + len(c.typeOverflow),
		Renamed:     c.renamed,
		WithLinks:   c.withLinks,
	}
}
