package catalog

import (
	"encoding/binary"
	"fmt"
	"unsafe"
)

const (
	arenaChunkBits = 20
	arenaChunkSize = 1 << arenaChunkBits
	arenaChunkMask = arenaChunkSize - 1
	arenaMaxSize   = 1 << 32
)

// arena is append-only byte storage addressed by uint32 offsets. It grows in
// fixed chunks that never move and bytes once written are never changed, so
// strings that alias it (unsafe.String) stay valid forever. Offset 0 is
// reserved to mean "none".
type arena struct {
	chunks [][]byte
	next   uint64 // the offset the next item starts at
	held   int64  // bytes of buffers allocated
	max    uint64 // the end no item may pass; 0 means arenaMaxSize
}

// fits reports whether items of the given sizes, reserved in that order,
// would all stay within the arena's limit.
func (a *arena) fits(sizes ...int) bool {
	next := max(a.next, 1)
	for _, n := range sizes {
		pos, chunk := next&arenaChunkMask, next>>arenaChunkBits
		if pos+uint64(n) > arenaChunkSize {
			chunk, pos = chunk+1, 0
		}
		if n > arenaChunkSize {
			next = (chunk + uint64(n+arenaChunkSize-1)/arenaChunkSize) << arenaChunkBits
		} else {
			next = chunk<<arenaChunkBits + pos + uint64(n)
		}
		if next > a.limit() {
			return false
		}
	}
	return true
}

func (a *arena) limit() uint64 {
	if a.max == 0 {
		return arenaMaxSize
	}
	return a.max
}

// reserve returns room for n bytes at a fresh offset, in one chunk (or in a
// dedicated buffer for an item larger than a chunk).
func (a *arena) reserve(n int) (uint32, []byte) {
	if a.next == 0 {
		a.next = 1 // offset 0 means "none"
	}
	pos := int(a.next & arenaChunkMask)
	chunk := int(a.next >> arenaChunkBits)
	if pos+n > arenaChunkSize {
		chunk, pos = chunk+1, 0
	}
	if n > arenaChunkSize {
		return a.reserveLarge(chunk, n)
	}
	for len(a.chunks) <= chunk {
		a.chunks = append(a.chunks, make([]byte, 0, arenaChunkSize))
		a.held += arenaChunkSize
	}
	a.checkLimit(uint64(chunk)<<arenaChunkBits + uint64(pos+n))
	off := uint64(chunk)<<arenaChunkBits | uint64(pos)
	a.chunks[chunk] = a.chunks[chunk][:pos+n]
	a.next = off + uint64(n)
	return uint32(off), a.chunks[chunk][pos : pos+n]
}

// reserveLarge gives an oversized item chunk slots of its own.
func (a *arena) reserveLarge(chunk, n int) (uint32, []byte) {
	k := (n + arenaChunkSize - 1) / arenaChunkSize
	a.checkLimit(uint64(chunk+k) << arenaChunkBits)
	for len(a.chunks) < chunk {
		a.chunks = append(a.chunks, nil)
	}
	big := make([]byte, n)
	a.held += int64(n)
	for j := 0; j < k; j++ {
		a.chunks = append(a.chunks, big[j*arenaChunkSize:])
	}
	a.next = uint64(chunk+k) << arenaChunkBits
	return uint32(uint64(chunk) << arenaChunkBits), big
}

// checkLimit guards an invariant: callers check fits (Catalog.room, Seal)
// before they store, so Source input never reaches this panic.
func (a *arena) checkLimit(end uint64) {
	if end > a.limit() {
		panic(fmt.Sprintf("catalog: string arena would exceed %d bytes unchecked", a.limit()))
	}
}

// addString stores s and returns its offset (the caller keeps the length).
func (a *arena) addString(s string) uint32 {
	off, buf := a.reserve(len(s))
	copy(buf, s)
	return off
}

// addPrefixed stores s preceded by its length as a uvarint.
func (a *arena) addPrefixed(s string) uint32 {
	var hdr [binary.MaxVarintLen64]byte
	h := binary.PutUvarint(hdr[:], uint64(len(s)))
	off, buf := a.reserve(h + len(s))
	copy(buf, hdr[:h])
	copy(buf[h:], s)
	return off
}

// bytes returns n bytes at off.
func (a *arena) bytes(off uint32, n int) []byte {
	c := a.chunks[off>>arenaChunkBits]
	pos := int(off & arenaChunkMask)
	return c[pos : pos+n : pos+n]
}

// str returns n bytes at off as a string aliasing the arena.
func (a *arena) str(off uint32, n int) string {
	if n == 0 {
		return ""
	}
	return unsafe.String(&a.bytes(off, n)[0], n)
}

// prefixed returns the length-prefixed string stored at off, and the offset of
// its first byte.
func (a *arena) prefixed(off uint32) (string, uint32) {
	c := a.chunks[off>>arenaChunkBits]
	pos := int(off & arenaChunkMask)
	n, h := binary.Uvarint(c[pos:])
	return a.str(off+uint32(h), int(n)), off + uint32(h)
}

// tail returns the bytes from off to the end of its chunk's written part, for
// decoders of self-describing items.
func (a *arena) tail(off uint32) []byte {
	c := a.chunks[off>>arenaChunkBits]
	return c[int(off&arenaChunkMask):]
}

// allocated is the bytes of buffers held.
func (a *arena) allocated() int64 { return a.held }

// used is the offset the next item would start at.
func (a *arena) used() int64 { return int64(a.next) }
