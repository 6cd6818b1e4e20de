package resourcesync

import "unsafe"

// Block sizes of the Reader's allocators. A caller that keeps one entry
// keeps its block alive: at most entryBlock entries, stringBlock bytes and
// hashBlock hashes.
const (
	entryBlock     = 32
	stringBlock    = 16 << 10
	maxArenaString = 512
	hashBlock      = 64
)

// allocator hands out entries, strings and hash slices from blocks, so that
// a million entries cost a few thousand allocations. Nothing it hands out is
// ever written again.
type allocator struct {
	entries []Entry
	bytes   []byte
	hashes  []Hash
}

// entry returns a new zero Entry.
func (a *allocator) entry() *Entry {
	if len(a.entries) == 0 {
		a.entries = make([]Entry, entryBlock)
	}
	e := &a.entries[0]
	a.entries = a.entries[1:]
	return e
}

// str returns b as a string.
func (a *allocator) str(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > maxArenaString {
		return string(b)
	}
	if cap(a.bytes)-len(a.bytes) < len(b) {
		a.bytes = make([]byte, 0, stringBlock)
	}
	start := len(a.bytes)
	a.bytes = append(a.bytes, b...)
	return unsafe.String(&a.bytes[start], len(b))
}

// oneHash returns a slice holding h, with no spare capacity.
func (a *allocator) oneHash(h Hash) []Hash {
	if len(a.hashes) == 0 {
		a.hashes = make([]Hash, hashBlock)
	}
	a.hashes[0] = h
	s := a.hashes[0:1:1]
	a.hashes = a.hashes[1:]
	return s
}
