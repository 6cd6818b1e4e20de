package resourcesync

import (
	"encoding/binary"
	"math/bits"
)

// Word-at-a-time byte classification: the scanning loops test 8 bytes at
// once and fall back to their byte tables only for a word that may hold a
// byte they must look at. A test may report a byte that is not there (a
// borrow), never miss one that is.
const (
	swarLow  = 0x0101010101010101
	swarHigh = 0x8080808080808080
)

func word(b []byte, i int) uint64 { return binary.LittleEndian.Uint64(b[i:]) }

// hasByteBelow reports whether some byte of w is below n (n <= 0x80).
func hasByteBelow(w uint64, n byte) bool { return (w-swarLow*uint64(n))&^w&swarHigh != 0 }

// hasByte reports whether some byte of w is c.
func hasByte(w uint64, c byte) bool {
	x := w ^ (swarLow * uint64(c))
	return (x-swarLow)&^x&swarHigh != 0
}

// plainTextWord reports that w holds only bytes readText copies as they are:
// ASCII from 0x20 up, other than '&', '<' and '>'.
func plainTextWord(w uint64) bool {
	// '<' (0x3c) and '>' (0x3e) differ only in bit 1, and no other byte
	// becomes 0x3e when that bit is set.
	return w&swarHigh == 0 && !hasByteBelow(w, 0x20) && !hasByte(w, '&') && !hasByte(w|swarLow*0x02, '>')
}

// plainAttrWord is plainTextWord for attribute values, where '>' is plain.
func plainAttrWord(w uint64) bool {
	return w&swarHigh == 0 && !hasByteBelow(w, 0x20) && !hasByte(w, '&') && !hasByte(w, '<')
}

// plainTagWord reports that w holds none of the bytes findTagEnd stops at.
func plainTagWord(w uint64) bool {
	return !hasByte(w, '>') && !hasByte(w, '"') && !hasByte(w, '\'') && !hasByte(w, '<')
}

// zeroBytes flags the bytes of x that are zero. The lowest flag is exact;
// flags above it may be borrows.
func zeroBytes(x uint64) uint64 { return (x - swarLow) &^ x & swarHigh }

// bytesBelow flags the bytes of w below n (n <= 0x80), lowest flag exact.
func bytesBelow(w uint64, n byte) uint64 { return (w - swarLow*uint64(n)) &^ w & swarHigh }

// textStop returns the index of the first byte of w that readText may have
// to look at (the bytes plainTextWord rejects), or 8 if there is none.
func textStop(w uint64) int {
	m := w&swarHigh | bytesBelow(w, 0x20) | zeroBytes(w^(swarLow*'&')) | zeroBytes((w|swarLow*0x02)^(swarLow*'>'))
	return bits.TrailingZeros64(m) / 8
}

// attrStop returns the index of the first byte of w that ends or needs
// decoding in an attribute value quoted with quote, or 8 if there is none.
func attrStop(w uint64, quote byte) int {
	m := w&swarHigh | bytesBelow(w, 0x20) | zeroBytes(w^(swarLow*'&')) | zeroBytes(w^(swarLow*'<')) |
		zeroBytes(w^(swarLow*uint64(quote)))
	return bits.TrailingZeros64(m) / 8
}
