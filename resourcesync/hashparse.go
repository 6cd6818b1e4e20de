package resourcesync

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
)

// hashFlags records tolerated or unusual hash values.
type hashFlags uint8

const (
	hashBase64  hashFlags = 1 << iota // converted from base64 to hex
	hashOddForm                       // known algorithm, value neither hex nor base64 of its size
)

func (f hashFlags) String() string {
	var parts []string
	if f&hashBase64 != 0 {
		parts = append(parts, "base64 hash value converted to hex")
	}
	if f&hashOddForm != 0 {
		parts = append(parts, "hash value of unexpected form kept as published")
	}
	return strings.Join(parts, "; ")
}

// ParseHashes parses a hash attribute: "alg:value" items separated by
// whitespace (newlines included). md5, sha-1 and sha-256 values are returned
// as lower-case hex; a base64 or base64url value of the right length is
// converted, and tolerated says so. Unknown algorithms are kept as
// published, with the algorithm in lower case.
func ParseHashes(s string) ([]Hash, string, error) {
	hs, flags, err := parseHashes(s)
	if err != nil {
		return nil, "", err
	}
	return hs, (flags & hashBase64).String(), nil
}

func parseHashes[T ~string | ~[]byte](s T) ([]Hash, hashFlags, error) {
	var hs []Hash
	var flags hashFlags
	for i := 0; i < len(s); {
		for i < len(s) && isSpaceByte(s[i]) {
			i++
		}
		j := i
		for j < len(s) && !isSpaceByte(s[j]) {
			j++
		}
		if j == i {
			break
		}
		h, f, err := parseHash(s[i:j])
		if err != nil {
			return nil, 0, err
		}
		hs = append(hs, h)
		flags |= f
		i = j
	}
	return hs, flags, nil
}

// plainHash recognises the common hash attribute: one item of a known
// algorithm whose value is lower-case hex of the right length. For it,
// parseHashes would return one Hash of alg and value.
func plainHash(s []byte) (alg string, value []byte, ok bool) {
	colon := bytes.IndexByte(s, ':')
	if colon <= 0 {
		return "", nil, false
	}
	known, ok := knownAlg(s[:colon])
	if !ok {
		return "", nil, false
	}
	alg, value = known.Name, s[colon+1:]
	if len(value) != 2*known.Size {
		return "", nil, false
	}
	for _, c := range value {
		if !lowerHexByte[c] {
			return "", nil, false
		}
	}
	return alg, value, true
}

// lowerHexByte marks 0-9 and a-f.
var lowerHexByte = func() (t [256]bool) {
	for _, c := range "0123456789abcdef" {
		t[c] = true
	}
	return t
}()

func parseHash[T ~string | ~[]byte](item T) (Hash, hashFlags, error) {
	colon := -1
	for k := 0; k < len(item); k++ {
		if item[k] == ':' {
			colon = k
			break
		}
	}
	if colon <= 0 || colon == len(item)-1 {
		return Hash{}, 0, fmt.Errorf("hash %q is not alg:value", string(item))
	}
	alg, value := item[:colon], item[colon+1:]
	known, ok := knownAlg(alg)
	if !ok {
		return Hash{Alg: strings.ToLower(string(alg)), Value: string(value)}, 0, nil
	}
	name, size := known.Name, known.Size
	if len(value) == 2*size && isHex(value) {
		return Hash{Alg: name, Value: lowerHex(value)}, 0, nil
	}
	if raw, ok := decodeBase64(string(value), size); ok {
		return Hash{Alg: name, Value: hex.EncodeToString(raw)}, hashBase64, nil
	}
	return Hash{Alg: name, Value: string(value)}, hashOddForm, nil
}

func isHex[T ~string | ~[]byte](s T) bool {
	for k := 0; k < len(s); k++ {
		if hexDigit(s[k]) < 0 {
			return false
		}
	}
	return true
}

// lowerHex returns s in lower case with one allocation.
func lowerHex[T ~string | ~[]byte](s T) string {
	b := make([]byte, len(s))
	for k := 0; k < len(s); k++ {
		c := s[k]
		if c >= 'A' && c <= 'F' {
			c += 'a' - 'A'
		}
		b[k] = c
	}
	return string(b)
}

var base64Encodings = [...]*base64.Encoding{
	base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding,
}

// decodeBase64 decodes s in any of the four base64 alphabets and paddings if
// it holds exactly size bytes.
func decodeBase64(s string, size int) ([]byte, bool) {
	for _, enc := range base64Encodings {
		if enc.DecodedLen(len(s)) < size || enc.DecodedLen(len(s)) > size+2 {
			continue
		}
		raw, err := enc.DecodeString(s)
		if err == nil && len(raw) == size {
			return raw, true
		}
	}
	return nil, false
}
