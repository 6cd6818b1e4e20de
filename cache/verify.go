package cache

import (
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

// knownAlgs is resourcesync's table of known hash algorithms, weakest
// first.
var knownAlgs = resourcesync.HashAlgs()

// strongestDigest picks the strongest known hash of hs; ok is false when
// none is known.
func strongestDigest(hs []resourcesync.Hash) (d digest, ok bool) {
	best := -1
	for _, h := range hs {
		if i := resourcesync.HashAlgIndex(h.Alg); i > best {
			best, d = i, digest{alg: h.Alg, want: h.Value, new: knownAlgs[i].New}
		}
	}
	return d, best >= 0
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
