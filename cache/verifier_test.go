package cache

import (
	"bytes"
	"crypto/sha256"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/resourcesync"
)

func blocksOf(data []byte, size int) [][]byte {
	var out [][]byte
	for off := 0; off < len(data); off += size {
		out = append(out, data[off:min(off+size, len(data))])
	}
	return out
}

func TestVerifierPendingBlockEvictedAbandonsPass(t *testing.T) {
	data := randomBytes(4*100, 30)
	blocks := blocksOf(data, 100)
	d, ok := strongestDigest(sha256Of(data))
	require.True(t, ok)
	cached := map[int64]bool{}
	v := newVerifier(d, "u", 3, 10, func(b int64) ([]byte, bool) {
		if !cached[b] {
			return nil, false
		}
		return blocks[b], true
	}, nil)
	// Block 1 is read before block 0 and evicted before the prefix reaches it.
	readOneThenZeroAbandons(t, v, blocks, "pass abandoned")

	// A new pass from the start verifies, taking a pending block from the cache.
	cached[2] = true
	for _, b := range []int64{0, 2, 1} {
		done, err := v.observe(b, blocks[b:b+1], false)
		require.False(t, done)
		require.NoError(t, err)
	}
	done, err := v.observe(3, blocks[3:4], true)
	assert.True(t, done)
	assert.NoError(t, err)
}

func TestVerifierTooManyPendingAbandons(t *testing.T) {
	d := digest{alg: "sha-256", want: "00", new: sha256.New}
	v := newVerifier(d, "u", 100, 2, func(int64) ([]byte, bool) { return nil, false }, nil)
	for _, b := range []int64{5, 6} {
		_, err := v.observe(b, [][]byte{{1}}, false)
		require.NoError(t, err)
	}
	assert.Len(t, v.pending, 2)
	_, err := v.observe(7, [][]byte{{1}}, false)
	require.NoError(t, err)
	assert.Equal(t, int64(-1), v.next)
}

func TestVerifierWaitsForTheReadReachingTheEnd(t *testing.T) {
	data := randomBytes(3*100, 31)
	blocks := blocksOf(data, 100)
	d, _ := strongestDigest(wrongSHA256())
	v := newVerifier(d, "u", 2, 10, func(int64) ([]byte, bool) { return nil, false }, nil)
	done, err := v.observe(0, blocks, false) // touches every block, stops short of the end
	assert.False(t, done)
	assert.NoError(t, err)
	done, err = v.observe(2, blocks[2:], true)
	assert.True(t, done)
	assert.ErrorIs(t, err, ErrIntegrity)
}

func TestStrongestDigestPicksTheStrongestKnown(t *testing.T) {
	h := func(alg, v string) resourcesync.Hash { return resourcesync.Hash{Alg: alg, Value: v} }
	for _, tt := range []struct {
		hs        []resourcesync.Hash
		alg, want string
	}{
		{[]resourcesync.Hash{h("md5", "m"), h("sha-256", "s2"), h("sha-1", "s1")}, "sha-256", "s2"},
		{[]resourcesync.Hash{h("sha-1", "s1"), h("md5", "m")}, "sha-1", "s1"},
		{[]resourcesync.Hash{h("sha-512", "x"), h("md5", "m")}, "md5", "m"},
	} {
		d, ok := strongestDigest(tt.hs)
		require.True(t, ok)
		assert.Equal(t, tt.alg, d.alg)
		assert.Equal(t, tt.want, d.want)
	}
	_, ok := strongestDigest([]resourcesync.Hash{h("sha-512", "x")})
	assert.False(t, ok, "no known algorithm: nothing to verify against")
}

func TestVerifierChecksAHashedBlockFetchedAgain(t *testing.T) {
	data := randomBytes(3*100, 32)
	blocks := blocksOf(data, 100)
	d, _ := strongestDigest(sha256Of(data))
	v := newVerifier(d, "u", 2, 10, func(int64) ([]byte, bool) { return nil, false }, nil)
	done, err := v.observe(0, blocks[0:1], false) // hashes block 0
	require.False(t, done)
	require.NoError(t, err)

	same := bytes.Clone(blocks[0]) // fetched again, the same bytes
	done, err = v.observe(0, [][]byte{same}, false)
	require.False(t, done)
	require.NoError(t, err, "another fetch with the bytes hashed is fine")

	other := bytes.Clone(blocks[0])
	other[50] ^= 1
	done, err = v.observe(0, [][]byte{other}, false)
	assert.True(t, done)
	assert.ErrorIs(t, err, ErrIntegrity, "another fetch with other bytes than those hashed")
}

func TestVerifierPendingBlockFetchedAgainAbandonsPass(t *testing.T) {
	data := randomBytes(3*100, 33)
	blocks := blocksOf(data, 100)
	d, _ := strongestDigest(sha256Of(data))
	refetched := bytes.Clone(blocks[1]) // the same bytes, but not the slice served
	v := newVerifier(d, "u", 2, 10, func(b int64) ([]byte, bool) { return refetched, b == 1 }, nil)
	readOneThenZeroAbandons(t, v, blocks, "pass abandoned: the cache no longer holds the bytes served")
}

// readOneThenZeroAbandons reads block 1 ahead of the prefix, then block 0,
// and asserts that the pass was abandoned when the prefix reached block 1.
func readOneThenZeroAbandons(t *testing.T, v *verifier, blocks [][]byte, why string) {
	t.Helper()
	done, err := v.observe(1, blocks[1:2], false)
	require.False(t, done)
	require.NoError(t, err)
	done, err = v.observe(0, blocks[0:1], false)
	assert.False(t, done)
	assert.NoError(t, err)
	assert.Equal(t, int64(-1), v.next, why)
}
