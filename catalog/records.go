package catalog

import (
	"math"
	"time"
)

// fileRec is the fixed part of a resource: 56 bytes, no pointers, so the
// garbage collector never scans the records.
type fileRec struct {
	ino     uint64
	size    int64
	mtime   int64  // unix nanoseconds, noTime when unknown
	parent  uint32 // index in Catalog.dirs (after Seal)
	nameOff uint32 // arena offset of the name (may alias the URI suffix)
	prefix  uint32 // index in Catalog.prefixes
	suffix  uint32 // arena offset of the length-prefixed URI suffix
	hash    uint32 // arena offset of the hash blob, 0 for none
	typ     uint16 // index in Catalog.types
	tzMin   int16  // the lastmod's zone offset in minutes
	nameLen uint8
	flags   uint8
	set     uint16 // Resource.Set; 0 in snapshots written before it was kept
	links   uint32 // arena offset of the links blob (links.go), 0 for none; padding before snapshot version 3
}

const (
	flagDeleted uint8 = 1 << iota
	flagTypeOverflow
	flagHashShared // another file has the same URI hash (Seal settles inodes)
	flagInoNotRaw  // ino is not the URI hash (it is in Catalog.altIno)
)

const typeTableMax = math.MaxUint16

// noTime marks an unknown lastmod.
const noTime int64 = math.MinInt64

const (
	fileChunkBits = 12
	fileChunkSize = 1 << fileChunkBits
	fileChunkMask = fileChunkSize - 1
)

// fileStore keeps records in fixed chunks: growing never copies them and
// never leaves slack beyond the last chunk. ID 0 is not used.
type fileStore struct {
	chunks [][]fileRec
	next   NodeID
}

func (s *fileStore) init() { s.next = 1 }

func (s *fileStore) add() NodeID {
	id := s.next
	if id >= dirBit { // an invariant: Catalog.room checks first
		panic("catalog: more than 2^31 resource records unchecked")
	}
	if int(id>>fileChunkBits) == len(s.chunks) {
		s.chunks = append(s.chunks, make([]fileRec, fileChunkSize))
	}
	s.next++
	return id
}

func (s *fileStore) at(id NodeID) *fileRec {
	return &s.chunks[id>>fileChunkBits][id&fileChunkMask]
}

// valid reports whether id names a file record.
func (s *fileStore) valid(id NodeID) bool { return id != 0 && id < s.next }

// dirRec is a directory. Directories are few (one per distinct URI
// directory), so a slice of children per directory is affordable.
type dirRec struct {
	children []NodeID // sorted by name, bytewise
	ino      uint64
	mtime    int64 // newest mtime below, noTime when none is known
	parent   uint32
	nameOff  uint32
	subdirs  uint32
	nameLen  uint8
	deleted  bool
}

// dirKey finds a directory by parent and name.
type dirKey struct {
	parent uint32
	name   string
}

func dirID(i uint32) NodeID { return dirBit | NodeID(i) }

func timeNanos(t time.Time) int64 {
	if t.IsZero() {
		return noTime
	}
	switch s := t.Unix(); {
	case s >= math.MaxInt64/1_000_000_000:
		return math.MaxInt64
	case s <= math.MinInt64/1_000_000_000:
		return math.MinInt64 + 1
	}
	return t.UnixNano()
}

func zoneMinutes(t time.Time) int16 {
	if t.IsZero() {
		return 0
	}
	_, off := t.Zone()
	return int16(off / 60)
}

// mtimeUTC converts stored nanoseconds back to a time in UTC.
func mtimeUTC(n int64) time.Time {
	if n == noTime {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// lastmod converts stored nanoseconds and zone back to the published time.
func lastmod(n int64, tzMin int16) time.Time {
	if n == noTime {
		return time.Time{}
	}
	t := time.Unix(0, n)
	if tzMin == 0 {
		return t.UTC()
	}
	return t.In(time.FixedZone("", int(tzMin)*60))
}

// uriHash is FNV-1a 64 of a string: the URI index key and the file's inode
// number unless that collides.
func uriHash(s string) uint64 {
	const offset64, prime64 = 14695981039346656037, 1099511628211
	h := uint64(offset64)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= prime64
	}
	return h
}
