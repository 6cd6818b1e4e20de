package resourcesync

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"hash"
	"strings"
)

// HashAlg is a hash algorithm of rs:md hash that this package knows: a
// value of it is normalised to lower-case hex of Size bytes, and New
// computes it.
type HashAlg struct {
	Name string // lower case, as the specification spells it
	Size int    // digest bytes
	New  func() hash.Hash
}

// hashAlgs are the known algorithms, weakest first. The order is part of
// the catalog's snapshot format, which stores a digest under its index + 1:
// add an algorithm only at the end, and only a stronger one.
var hashAlgs = [...]HashAlg{
	{"md5", md5.Size, md5.New},
	{"sha-1", sha1.Size, sha1.New},
	{"sha-256", sha256.Size, sha256.New},
}

// HashAlgs returns the known hash algorithms, weakest first: md5, sha-1,
// sha-256.
func HashAlgs() []HashAlg {
	algs := hashAlgs
	return algs[:]
}

// HashAlgIndex returns the index in HashAlgs of the algorithm named alg (in
// lower case, as a parsed Hash holds it), or -1 if it is not known.
func HashAlgIndex(alg string) int {
	for i := range hashAlgs {
		if hashAlgs[i].Name == alg {
			return i
		}
	}
	return -1
}

// knownAlg returns the known algorithm named alg in any case; ok is false
// if there is none. Its Name is a constant: no allocation.
func knownAlg[T ~string | ~[]byte](alg T) (a HashAlg, ok bool) {
	for i := range hashAlgs {
		if string(alg) == hashAlgs[i].Name {
			return hashAlgs[i], true
		}
	}
	for i := range hashAlgs {
		if len(alg) == len(hashAlgs[i].Name) && strings.EqualFold(string(alg), hashAlgs[i].Name) {
			return hashAlgs[i], true
		}
	}
	return HashAlg{}, false
}
