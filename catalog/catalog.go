// Package catalog holds the resources of a Source (a ResourceSync Source,
// or an Atom-PMH feed's representations) as a tree: it maps each URI to one
// path (see mapping.go), keeps a compact record per resource (size, mtime,
// hashes, type, links) and answers the filesystem's lookups from memory,
// from many goroutines at once. Changes mutate it through Upsert and
// Remove, which say what the kernel must be told.
package catalog

import (
	"cmp"
	"sync"
	"time"

	"rsfs/resourcesync"
)

// Resource is what the Source published about one resource.
type Resource struct {
	URI     string // absolute, as published (already resolved)
	Length  int64  // resourcesync.NoLength when unknown
	Lastmod time.Time
	Hashes  []resourcesync.Hash
	Type    string
	// Links are every link the Source published about the resource
	// (rs:ln: duplicate mirrors, describedby, memento, ...; an Atom-PMH
	// entry's links other than alternate), in document order, and the
	// links rsfs adds for its own use, whose relations begin with
	// InternalRelPrefix (dump copies). Kept per resource only where there
	// are any.
	Links []Link
	// Props are the protocol's own attributes (props.go); none for
	// ResourceSync.
	Props []Property
	// Set is a small number the caller gives the resource (source: the
	// resource set that lists it, from 1); 0 when unknown. Kept, never
	// compared: a new Set alone is no change.
	Set uint16
}

// Link is a link from a resource to another: ResourceSync's rs:ln, which
// any protocol uses (Atom-PMH's links other than alternate are stored as
// these too), so packages that fill a catalog need not import resourcesync.
type Link = resourcesync.Link

// InternalRelPrefix begins the relation of a link rsfs adds for its own
// use (copies.DumpRel); such links are no Source's and are not shown.
const InternalRelPrefix = "x-rsfs-"

// Options configure a Catalog.
type Options struct {
	// Origin is the Source's origin, in any spelling (it is put in package
	// origin's canonical form, "scheme://host[:port]"); resources there map
	// at the root, others under "@host[:port]".
	Origin string
	// Protocol names the resources' extended attributes
	// (user.<Protocol>.uri, ...); "" means DefaultProtocol.
	Protocol string
	// Limits lower the capacity limits, for tests; zero means the product
	// limits.
	Limits Limits
}

// NodeID names a file or directory for the life of the catalog; IDs of
// deleted nodes are not reused.
type NodeID uint32

// dirBit marks directory IDs; the rest of a directory ID indexes c.dirs.
const dirBit NodeID = 1 << 31

// RootID is the root directory.
const RootID NodeID = dirBit

// IsDir reports whether id names a directory.
func (id NodeID) IsDir() bool { return id&dirBit != 0 }

// DirSize is the size directories report.
const DirSize = 4096

// Attr is what getattr needs about a node.
type Attr struct {
	Ino  uint64
	Dir  bool
	Size int64 // 0 for a file of unknown length
	// NoSize: the file's length is not known yet (its list gave none);
	// the file system learns it when asked (SetLength).
	NoSize bool
	Mtime  time.Time
	Nlink  uint32
	// Gen names the file's version: it changes whenever the length, the
	// lastmod or the hashes do, so the file system can give each version
	// an inode of its own (0 for directories).
	Gen uint64
}

// Stats describe the catalog's size.
type Stats struct {
	Resources   int   // live resources
	Bytes       int64 // their published lengths, summed
	Directories int   // live directories, the root included
	ArenaBytes  int64 // bytes held by the names/URIs/hashes arena
	ArenaUsed   int64 // bytes of it written
	Records     int   // file records, deleted ones included
	RecordBytes int64 // bytes held by the fixed records
	IndexBytes  int64 // bytes held by the URI index
	Prefixes    int   // distinct URI prefixes (a URI up to its last "/")
	Types       int   // distinct media types
	Renamed     int   // resources given a collision suffix (rule 7)
	WithLinks   int   // resources with links
}

// Catalog is the resource tree. Its methods are safe for concurrent use.
type Catalog struct {
	mu     sync.RWMutex
	origin string
	sealed bool
	lim    Limits

	arena arena
	files fileStore
	dirs  []dirRec

	dirIndex    map[dirKey]uint32 // live directories by parent and name
	prefixes    []string          // aliases the arena
	prefixIndex map[string]uint32
	prefixDir   []uint32 // after Seal: the directory of each prefix

	types        []string
	typeIndex    map[string]uint16
	typeOverflow map[NodeID]string
	withLinks    int // live files with links
	props        map[NodeID][]Property
	protocol     string

	uris   uriTable          // files by uriHash
	altIno map[uint64]NodeID // inodes that are not a file's own uriHash: directories and settled collisions

	indexNameOff uint32
	live         int
	liveBytes    int64
	renamed      int
}

// New returns an empty catalog ready for Add.
func New(opts Options) *Catalog {
	c := &Catalog{
		origin:       normalizeOrigin(opts.Origin),
		dirIndex:     make(map[dirKey]uint32),
		prefixIndex:  make(map[string]uint32),
		types:        []string{""},
		typeIndex:    map[string]uint16{"": 0},
		typeOverflow: make(map[NodeID]string),
		props:        make(map[NodeID][]Property),
		protocol:     cmp.Or(opts.Protocol, DefaultProtocol),
		altIno:       make(map[uint64]NodeID),
		lim:          opts.Limits,
	}
	c.arena.max = opts.Limits.arenaBytes()
	c.files.init()
	c.uris.init()
	c.indexNameOff = c.arena.addString(IndexName)
	c.dirs = append(c.dirs, dirRec{ino: 1, mtime: noTime})
	return c
}

// Add records a resource while loading; it is safe for concurrent use. The
// same URI added twice keeps the one with the newer Lastmod (on a tie, the
// later call). After Seal, Add is Upsert without the effects. A resource
// that would pass a capacity limit is refused with an error wrapping
// ErrFull, and the catalog is left as it was.
func (c *Catalog) Add(r *Resource) error {
	_, err := c.put(r, false)
	return err
}

// AddAll is Add for each of rs in turn, under one lock: loading adds a
// list's entries in batches, so that the part of loading that cannot run
// in parallel (the insert under the lock) does not also pay for taking the
// lock per resource. It returns how many it added; on an error (ErrFull),
// rs[n] is the one refused.
func (c *Catalog) AddAll(rs []*Resource) (n int, err error) {
	adds := make([]addition, len(rs))
	var blobs []byte
	for i, r := range rs {
		start := len(blobs)
		adds[i] = prepare(r, blobs)
		blobs = adds[i].blob
		adds[i].blob = blobs[start:len(blobs):len(blobs)]
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range adds {
		if _, err := c.putLocked(&adds[i], false); err != nil {
			return i, err
		}
	}
	return len(rs), nil
}

// put is Add (newer wins before Seal) and TryUpsert (always: the call
// wins). The URI is hashed and the hashes prepared before the lock; after
// Seal both are an upsert, with its effects.
func (c *Catalog) put(r *Resource, always bool) ([]Effect, error) {
	var stack [128]byte
	p := prepare(r, stack[:0])
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.putLocked(&p, always)
}

// putLocked is put once a is prepared, under the lock.
func (c *Catalog) putLocked(a *addition, always bool) ([]Effect, error) {
	id, shared := c.findOrShared(a.h, a.r.URI)
	if err := c.room(a, id != 0); err != nil {
		return nil, err
	}
	if c.sealed {
		return c.upsertLocked(a, id), nil
	}
	c.addLocked(a, id, shared, always)
	return nil, nil
}

// addition is what Add and TryUpsert compute about a resource before they
// take the lock: its URI hash and split, and its hashes and links as stored.
type addition struct {
	r              *Resource
	h              uint64
	prefix, suffix string // splitURI(r.URI)
	blob           []byte
	links          []byte // nil for none
}

// prepare computes r's addition, the hash blob appended to buf.
func prepare(r *Resource, buf []byte) addition {
	prefix, suffix := splitURI(r.URI)
	return addition{r: r, h: uriHash(r.URI), prefix: prefix, suffix: suffix,
		blob: appendHashes(buf, r.Hashes), links: appendLinks(nil, r.Links)}
}

// addLocked records a resource before Seal, given what findOrShared found;
// an existing record of the URI is replaced when always is set or the
// resource is not older.
func (c *Catalog) addLocked(a *addition, id NodeID, shared, always bool) {
	if id != 0 {
		if always || timeNanos(a.r.Lastmod) >= c.files.at(id).mtime {
			c.setVersion(id, a)
		}
		return
	}
	c.newFile(a)
	if shared {
		c.markHashShared(a.h)
	}
}

// Sealed reports whether Seal has run.
func (c *Catalog) Sealed() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.sealed
}

// newFile stores a record for a URI not yet in the catalog and indexes it.
func (c *Catalog) newFile(a *addition) NodeID {
	id := c.files.add()
	f := c.files.at(id)
	f.prefix = c.internPrefix(a.prefix)
	f.suffix = c.arena.addPrefixed(a.suffix)
	f.ino = a.h
	f.mtime = noTime
	f.size = resourcesync.NoLength // no length learned before (setVersion)
	c.setVersion(id, a)
	c.indexURI(a.h, id)
	c.live++
	return id
}

func (c *Catalog) internPrefix(p string) uint32 {
	if i, ok := c.prefixIndex[p]; ok {
		return i
	}
	stored := c.arena.str(c.arena.addString(p), len(p))
	i := uint32(len(c.prefixes))
	c.prefixes = append(c.prefixes, stored)
	c.prefixIndex[stored] = i
	return i
}

// setVersion stores r's version fields (not its URI) in the record of id and
// reports whether any changed.
func (c *Catalog) setVersion(id NodeID, a *addition) bool {
	r := a.r
	f := c.files.at(id)
	f.set = r.Set
	changed := false
	mt, tz := timeNanos(r.Lastmod), zoneMinutes(r.Lastmod)
	length := r.Length
	if length < 0 && f.size >= 0 && c.mayBeVersion(f, r) {
		length = f.size // a length learned (SetLength) stays while the version does
	}
	if f.size != length || f.mtime != mt || f.tzMin != tz {
		c.liveBytes += max(length, 0) - max(f.size, 0)
		f.size, f.mtime, f.tzMin = length, mt, tz
		changed = true
	}
	if c.setHashes(f, a.blob) {
		changed = true
	}
	if c.setType(id, f, r.Type) {
		changed = true
	}
	if c.setLinks(f, a.links) {
		changed = true
	}
	if c.setProps(id, r.Props) {
		changed = true
	}
	return changed
}

// mayBeVersion reports whether r, which publishes no length, may be the
// version f holds, by the one rule of the same version (CompareVersion):
// unless it is another version, f's learned length stays. An unknown (no
// lastmod, no common hash) keeps it: every read checks a length against
// the server's answer.
func (c *Catalog) mayBeVersion(f *fileRec, r *Resource) bool {
	held := Resource{Length: f.size, Lastmod: mtimeUTC(f.mtime)}
	if f.hash != 0 {
		held.Hashes = decodeHashes(c.arena.tail(f.hash))
	}
	return CompareVersion(&held, r.Hashes, r.Lastmod, r.Length) != VersionOther
}

// sameHashes reports whether f's hash blob is blob.
func (c *Catalog) sameHashes(f *fileRec, blob []byte) bool {
	if f.hash == 0 {
		return len(blob) == 0
	}
	old := c.arena.tail(f.hash)
	return len(blob) == hashBlobLen(old) && string(blob) == string(old[:len(blob)])
}

func (c *Catalog) setHashes(f *fileRec, blob []byte) bool {
	if c.sameHashes(f, blob) {
		return false
	}
	f.hash = 0
	if len(blob) > 0 {
		off, buf := c.arena.reserve(len(blob))
		copy(buf, blob)
		f.hash = off
	}
	return true
}

func (c *Catalog) setType(id NodeID, f *fileRec, typ string) bool {
	if c.typeOf(id, f) == typ {
		return false
	}
	delete(c.typeOverflow, id)
	f.flags &^= flagTypeOverflow
	idx, ok := c.typeIndex[typ]
	if !ok && len(c.types) < typeTableMax {
		idx = uint16(len(c.types))
		c.types = append(c.types, typ)
		c.typeIndex[typ] = idx
		ok = true
	}
	if !ok {
		c.typeOverflow[id] = typ
		f.flags |= flagTypeOverflow
		idx = 0
	}
	f.typ = idx
	return true
}

func (c *Catalog) typeOf(id NodeID, f *fileRec) string {
	if f.flags&flagTypeOverflow != 0 {
		return c.typeOverflow[id]
	}
	return c.types[f.typ]
}

// setLinks stores a file's links blob (links.go) and reports whether the
// links changed. The blob of links replaced stays in the arena, unused,
// as replaced hashes do.
func (c *Catalog) setLinks(f *fileRec, blob []byte) bool {
	if f.links != 0 {
		if old, ok := linksBlob(c.arena.tail(f.links)); ok && string(old) == string(blob) {
			return false
		}
		c.withLinks--
	} else if len(blob) == 0 {
		return false
	}
	f.links = 0
	if len(blob) > 0 {
		off, buf := c.arena.reserve(len(blob))
		copy(buf, blob)
		f.links = off
		c.withLinks++
	}
	return true
}
