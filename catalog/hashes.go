package catalog

import (
	"encoding/hex"
	"strconv"

	"rsfs/resourcesync"
)

// Hash algorithm codes in the arena: a known algorithm (resourcesync's
// table, weakest first) is stored under its index + 1 as raw digest bytes,
// so a higher code is a stronger algorithm; anything else (algOther) keeps
// its algorithm name and value as text.
const algOther byte = 0

// knownAlgs is resourcesync's table of known hash algorithms.
var knownAlgs = resourcesync.HashAlgs()

// maxAlgCode is the highest code of a known algorithm.
var maxAlgCode = byte(len(knownAlgs))

func algCode(alg string) byte { return byte(resourcesync.HashAlgIndex(alg) + 1) }

func algName(code byte) string { return knownAlgs[code-1].Name }

func algSize(code byte) int { return knownAlgs[code-1].Size }

// appendHashes packs hashes onto dst as: count, then per hash either code,
// digest bytes (known algorithm with a lower-case hex value of the right
// size) or 0, len, alg, len, value (anything else; lengths as single bytes,
// values cut to 255 bytes). No hashes append nothing.
func appendHashes(dst []byte, hs []resourcesync.Hash) []byte {
	if len(hs) == 0 {
		return dst
	}
	if len(hs) > 255 {
		hs = hs[:255]
	}
	dst = append(dst, byte(len(hs)))
	for _, h := range hs {
		if code := algCode(h.Alg); code != algOther && len(h.Value) == 2*algSize(code) {
			if out, ok := appendLowerHex(append(dst, code), h.Value); ok {
				dst = out
				continue
			}
		}
		dst = append(dst, algOther)
		dst = appendShort(dst, h.Alg)
		dst = appendShort(dst, h.Value)
	}
	return dst
}

// lowerHexVal maps a lower-case hex digit to its value, anything else to 0xFF.
var lowerHexVal = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xFF
	}
	for c := byte('0'); c <= '9'; c++ {
		t[c] = c - '0'
	}
	for c := byte('a'); c <= 'f'; c++ {
		t[c] = c - 'a' + 10
	}
	return t
}()

// appendLowerHex decodes s (lower-case hex, even length) onto dst; false if
// s is not that.
func appendLowerHex(dst []byte, s string) ([]byte, bool) {
	for i := 0; i+1 < len(s); i += 2 {
		hi, lo := lowerHexVal[s[i]], lowerHexVal[s[i+1]]
		if hi|lo == 0xFF || hi > 15 || lo > 15 {
			return dst, false
		}
		dst = append(dst, hi<<4|lo)
	}
	return dst, true
}

func appendShort(out []byte, s string) []byte {
	if len(s) > 255 {
		s = s[:255]
	}
	out = append(out, byte(len(s)))
	return append(out, s...)
}

// hashBlobLen returns the length of an encoded blob starting at b[0].
func hashBlobLen(b []byte) int {
	n, pos := int(b[0]), 1
	for i := 0; i < n; i++ {
		code := b[pos]
		pos++
		if code != algOther {
			pos += algSize(code)
			continue
		}
		pos += 1 + int(b[pos])
		pos += 1 + int(b[pos])
	}
	return pos
}

// decodeHashes unpacks a blob written by appendHashes.
func decodeHashes(b []byte) []resourcesync.Hash {
	n, pos := int(b[0]), 1
	hs := make([]resourcesync.Hash, 0, n)
	for i := 0; i < n; i++ {
		code := b[pos]
		pos++
		if code != algOther {
			size := algSize(code)
			hs = append(hs, resourcesync.Hash{Alg: algName(code), Value: hex.EncodeToString(b[pos : pos+size])})
			pos += size
			continue
		}
		alg := string(b[pos+1 : pos+1+int(b[pos])])
		pos += 1 + int(b[pos])
		val := string(b[pos+1 : pos+1+int(b[pos])])
		pos += 1 + int(b[pos])
		hs = append(hs, resourcesync.Hash{Alg: alg, Value: val})
	}
	return hs
}

// bestHash returns "alg:hex" for the strongest known hash in a blob, or "".
func bestHash(b []byte) string {
	n, pos := int(b[0]), 1
	bestCode, bestPos := algOther, 0
	for i := 0; i < n; i++ {
		code := b[pos]
		pos++
		if code != algOther {
			if code > bestCode {
				bestCode, bestPos = code, pos
			}
			pos += algSize(code)
			continue
		}
		pos += 1 + int(b[pos])
		pos += 1 + int(b[pos])
	}
	if bestCode == algOther {
		return ""
	}
	return algName(bestCode) + ":" + hex.EncodeToString(b[bestPos:bestPos+algSize(bestCode)])
}

// versionID is the content identity of a resource without a known hash.
func versionID(uri string, mtime, size int64) string {
	if mtime == noTime {
		mtime = 0
	}
	return uri + "\x00" + strconv.FormatInt(mtime, 10) + "\x00" + strconv.FormatInt(size, 10)
}
