package cache

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"

	"rsfs/resourcesync"
)

// digest is the published hash a content is verified against.
type digest struct {
	alg  string
	want string // lower-case hex
	new  func() hash.Hash
}

// hashAlgs lists the known algorithms, strongest first.
var hashAlgs = []struct {
	name string
	new  func() hash.Hash
}{
	{"sha-256", sha256.New},
	{"sha-1", sha1.New},
	{"md5", md5.New},
}

// strongestDigest picks the strongest known hash of hs; ok is false when
// none is known.
func strongestDigest(hs []resourcesync.Hash) (d digest, ok bool) {
	for _, alg := range hashAlgs {
		for _, h := range hs {
			if h.Alg == alg.name {
				return digest{alg: alg.name, want: h.Value, new: alg.new}, true
			}
		}
	}
	return digest{}, false
}

// check compares a computed sum with the published one.
func (d digest) check(uri string, sum []byte) error {
	got := hex.EncodeToString(sum)
	if got == d.want {
		return nil
	}
	return &hashMismatch{uri: uri, alg: d.alg, want: d.want, got: got}
}

// checkData hashes data and compares it with the published sum.
func (d digest) checkData(uri string, data []byte) error {
	h := d.new()
	h.Write(data)
	return d.check(uri, h.Sum(nil))
}

// hashMismatch is an ErrIntegrity carrying what was expected and found.
type hashMismatch struct {
	uri, alg, want, got string
}

func (e *hashMismatch) Error() string {
	return fmt.Sprintf("%v: %s: %s mismatch: published %s, got %s", ErrIntegrity, e.uri, e.alg, e.want, e.got)
}

func (e *hashMismatch) Unwrap() error { return ErrIntegrity }
