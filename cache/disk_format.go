package cache

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
)

// A block file holds one block: a header, then the data.
//
//	offset  size  field
//	0       4     magic "RSFB"
//	4       1     format version (1)
//	5       3     zero
//	8       4     block size (little-endian): block i holds bytes from i*size
//	12      4     content id length L (little-endian)
//	16      L     content id
//	16+L    8     block index (little-endian)
//	24+L    4     data length N (little-endian)
//	28+L    4     CRC-32C (Castagnoli) of the data
//	32+L    N     data
//
// A file is served only when every field matches the block asked for and the
// checksum matches the data, so a torn or corrupted file is never served.
// The block size is part of the key too: a cache reopened with another
// block size never reads the old files, which age out.
const (
	blockFileMagic   = "RSFB"
	blockFileVersion = 1
	blockFileFixed   = 32 // header bytes besides the content id
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errBadBlockFile reports a block file that must not be served.
var errBadBlockFile = errors.New("bad block file")

// diskKey names a block file: the SHA-256 of the content id, a zero byte,
// the block index and the block size (8 bytes each, big-endian). The zero
// byte keeps the id and the rest apart, so no two blocks share a key.
type diskKey [sha256.Size]byte

func diskKeyOf(k blockKey, blockSize int) diskKey {
	h := sha256.New()
	h.Write([]byte(k.id))
	var tail [17]byte
	binary.BigEndian.PutUint64(tail[1:], uint64(k.block))
	binary.BigEndian.PutUint64(tail[9:], uint64(blockSize))
	h.Write(tail[:])
	var dk diskKey
	h.Sum(dk[:0])
	return dk
}

func (dk diskKey) String() string { return hex.EncodeToString(dk[:]) }

// parseDiskKey reads a block file's name back into its key.
func parseDiskKey(name string) (diskKey, bool) {
	var dk diskKey
	if len(name) != 2*len(dk) {
		return dk, false
	}
	if _, err := hex.Decode(dk[:], []byte(name)); err != nil {
		return dk, false
	}
	return dk, true
}

// blockFileHeader returns the header of block k (of blockSize) holding data.
func blockFileHeader(k blockKey, blockSize int, data []byte) []byte {
	return appendBlockFileHeader(nil, k, blockSize, data)
}

// appendBlockFileHeader appends the header of block k (of blockSize)
// holding data to dst.
func appendBlockFileHeader(dst []byte, k blockKey, blockSize int, data []byte) []byte {
	n := len(dst)
	dst = append(dst, make([]byte, blockFileFixed+len(k.id))...)
	hdr := dst[n:]
	copy(hdr, blockFileMagic)
	hdr[4] = blockFileVersion
	binary.LittleEndian.PutUint32(hdr[8:], uint32(blockSize))
	binary.LittleEndian.PutUint32(hdr[12:], uint32(len(k.id)))
	copy(hdr[16:], k.id)
	rest := hdr[16+len(k.id):]
	binary.LittleEndian.PutUint64(rest, uint64(k.block))
	binary.LittleEndian.PutUint32(rest[8:], uint32(len(data)))
	binary.LittleEndian.PutUint32(rest[12:], crc32.Checksum(data, castagnoli))
	return dst
}

// decodeBlockFile returns the data of a block file's bytes if they hold
// block k (of blockSize) intact.
func decodeBlockFile(k blockKey, blockSize int, file []byte) ([]byte, error) {
	if len(file) < blockFileFixed || string(file[:4]) != blockFileMagic {
		return nil, fmt.Errorf("%w: no header (%d bytes)", errBadBlockFile, len(file))
	}
	if file[4] != blockFileVersion {
		return nil, fmt.Errorf("%w: format version %d", errBadBlockFile, file[4])
	}
	if size := binary.LittleEndian.Uint32(file[8:]); size != uint32(blockSize) {
		return nil, fmt.Errorf("%w: block size %d", errBadBlockFile, size)
	}
	idLen := int64(binary.LittleEndian.Uint32(file[12:]))
	if idLen != int64(len(k.id)) || int64(len(file)) < blockFileFixed+idLen || string(file[16:16+idLen]) != k.id {
		return nil, fmt.Errorf("%w: holds another content", errBadBlockFile)
	}
	rest := file[16+idLen:]
	if block := int64(binary.LittleEndian.Uint64(rest)); block != k.block {
		return nil, fmt.Errorf("%w: holds block %d", errBadBlockFile, block)
	}
	n := int64(binary.LittleEndian.Uint32(rest[8:]))
	data := rest[16:]
	if int64(len(data)) != n {
		return nil, fmt.Errorf("%w: %d data bytes, header says %d", errBadBlockFile, len(data), n)
	}
	if sum := crc32.Checksum(data, castagnoli); sum != binary.LittleEndian.Uint32(rest[12:]) {
		return nil, fmt.Errorf("%w: checksum mismatch", errBadBlockFile)
	}
	return data, nil
}
