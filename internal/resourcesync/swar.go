package resourcesync

import "encoding/binary"

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
	return w&swarHigh == 0 && !hasByteBelow(w, 0x20) && !hasByte(w, '&') && !hasByte(w, '<') && !hasByte(w, '>')
}

// plainAttrWord is plainTextWord for attribute values, where '>' is plain.
func plainAttrWord(w uint64) bool {
	return w&swarHigh == 0 && !hasByteBelow(w, 0x20) && !hasByte(w, '&') && !hasByte(w, '<')
}

// plainTagWord reports that w holds none of the bytes findTagEnd stops at.
func plainTagWord(w uint64) bool {
	return !hasByte(w, '>') && !hasByte(w, '"') && !hasByte(w, '\'') && !hasByte(w, '<')
}
