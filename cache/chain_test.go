package cache

import (
	"bytes"
	"crypto/sha256"
	"hash"
	"io"
	"sync/atomic"
	"testing"
	"weak"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/tests/logbuf"
)

// verifiedStreamed makes a cache that streams every content and reads
// data (content "v1") whole once through fetcher, so that its pass
// matches and leaves a chain.
func verifiedStreamed(t *testing.T, data []byte, fetcher Fetcher) (*Cache, *logbuf.Buffer, Content) {
	t.Helper()
	c, logs := newTestCache(t, Config{VerifyWholeBelow: -1, ReadAhead: -1})
	content := Content{ID: "v1", Name: "u", Size: int64(len(data)), Hashes: sha256Of(data)}
	f := c.Open(content, fetcher)
	defer f.Close()
	got, errs := readAll(testCtx(t), f, testBlock/2)
	require.Equal(t, data, got)
	require.ErrorIs(t, errs[len(errs)-1], io.EOF)
	require.NotNil(t, c.vers.chainOf("v1"), "the pass that matched left a chain")
	return c, logs, content
}

// countingHash counts the bytes a hash is given.
type countingHash struct {
	hash.Hash
	n *atomic.Int64
}

func (h countingHash) Write(p []byte) (int, error) {
	h.n.Add(int64(len(p)))
	return h.Hash.Write(p)
}

// A pass over a streamed content that matches leaves its chain; a second
// File that reads the content whole hashes nothing, and gets the bytes.
func TestStreamedVersionVerifiedOnceIsNotHashedAgain(t *testing.T) {
	data := randomBytes(5*testBlock+100, 41)
	fetcher := &memOrigin{data: data}
	c, _, content := verifiedStreamed(t, data, fetcher)
	ch := c.vers.chainOf("v1")

	g := c.Open(content, fetcher)
	defer g.Close()
	var hashed atomic.Int64
	counting := func() hash.Hash { return countingHash{sha256.New(), &hashed} }
	g.verify.digest.new, ch.newHash = counting, counting
	got, _ := readAll(testCtx(t), g, testBlock/2)
	assert.Equal(t, data, got)
	assert.Zero(t, hashed.Load(), "bytes hashed again by a second whole read")
}

// After a pass, a block fetched again with other bytes is refused before
// any reader gets it, wherever the read starts: as a whole-verified
// content's blocks are by their sums.
func TestChainedBlockFetchedAgainWithOtherBytesIsRefused(t *testing.T) {
	data := randomBytes(4*testBlock, 42)
	fetcher := &changingOrigin{data: data}
	c, _, content := verifiedStreamed(t, data, fetcher)

	c.DropContent("v1") // as eviction would
	fetcher.set(corrupt(data, 2*testBlock+7))
	g := c.Open(content, fetcher)
	defer g.Close()
	buf := make([]byte, 10)
	n, err := g.ReadAt(testCtx(t), buf, testBlock) // block 1: same bytes, fetched again
	require.NoError(t, err)
	assert.Equal(t, data[testBlock:testBlock+10], buf[:n])
	n, err = g.ReadAt(testCtx(t), buf, 2*testBlock) // block 2: changed
	require.ErrorIs(t, err, ErrIntegrity, "a block with other bytes than those verified")
	assert.Zero(t, n)
	assert.ErrorIs(t, c.vers.checkBlock("u", "v1", 2, corrupt(data[2*testBlock:3*testBlock], 7), true), ErrIntegrity,
		"the fill's check refuses it too, before it is stored")
}

// A chain checks each block on its own: the same bytes in another slice
// pass (and are then known), other bytes fail, the short last block too.
func TestChainChecksEachBlockOnItsOwn(t *testing.T) {
	data := randomBytes(3*testBlock+10, 43)
	blocks := [][]byte{data[:testBlock], data[testBlock : 2*testBlock], data[2*testBlock : 3*testBlock], data[3*testBlock:]}
	p := newHashPipe(sha256.New(), true, nil)
	ids := make([]weak.Pointer[byte], len(blocks))
	for i, b := range blocks {
		p.Write(b)
		ids[i] = sliceID(b)
	}
	sum := p.Sum()
	want := sha256.Sum256(data)
	require.Equal(t, want[:], sum)
	ch := p.rec.chain(sha256.New, ids, nil)
	require.NotNil(t, ch)
	for i, b := range blocks {
		assert.NoError(t, ch.check("u", int64(i), b), "block %d, the slice hashed", i)
		again := bytes.Clone(b)
		assert.NoError(t, ch.check("u", int64(i), again), "block %d, the same bytes fetched again", i)
		assert.Equal(t, sliceID(again), ch.good[i], "block %d: the new slice is known good", i)
		assert.ErrorIs(t, ch.check("u", int64(i), corrupt(b, len(b)-1)), ErrIntegrity, "block %d, changed", i)
	}
	assert.ErrorIs(t, ch.check("u", 1, blocks[2]), ErrIntegrity, "another block's bytes")
	assert.ErrorIs(t, ch.check("u", 4, blocks[0]), ErrIntegrity, "a block past the end")
}

// The chains kept are bounded by their blocks, the oldest dropped first,
// and their count follows what is kept.
func TestChainsAreBoundedByTheirBlocks(t *testing.T) {
	v := newVersions(nil)
	third := chainMaxBlocks / 3
	for _, id := range []string{"a", "b", "c", "d"} {
		v.markChained(id, &chain{good: make([]weak.Pointer[byte], third)})
	}
	assert.Nil(t, v.chainOf("a"), "the oldest is dropped")
	for _, id := range []string{"b", "c", "d"} {
		assert.NotNil(t, v.chainOf(id), id)
	}
	assert.Equal(t, 3*third, v.chainBlocks)
	v.markChained("b", &chain{good: make([]weak.Pointer[byte], third)}) // again: replaced, not counted twice
	assert.Equal(t, 3*third, v.chainBlocks)
	v.markChained("huge", &chain{good: make([]weak.Pointer[byte], chainMaxBlocks+1)})
	assert.Nil(t, v.chainOf("huge"), "a chain over the bound is not kept")
	v.markBad("c", ErrIntegrity)
	assert.Nil(t, v.chainOf("c"), "a bad version has no chain")
	assert.Equal(t, 2*third, v.chainBlocks)
}

// A block the chain does not know (read back from the disk cache, say) is
// checked beside the reads: a mismatch fails the read that reaches the end
// at the latest, never passes in silence.
func TestChainedBlockWithOtherBytesInTheCacheFailsTheWholeRead(t *testing.T) {
	data := randomBytes(6*testBlock, 44)
	fetcher := &memOrigin{data: data}
	c, logs, content := verifiedStreamed(t, data, fetcher)

	// Block 3 comes back with other bytes, past the fill's checks (as a
	// disk cache block would).
	c.mu.Lock()
	c.lru.add(blockKey{"v1", 3}, corrupt(data[3*testBlock:4*testBlock], 9))
	c.mu.Unlock()
	g := c.Open(content, fetcher)
	defer g.Close()
	_, errs := readAll(testCtx(t), g, testBlock/2)
	assert.ErrorIs(t, errs[len(errs)-1], ErrIntegrity, "the whole read ends in an integrity error, not EOF")
	_, ok := c.peek(blockKey{"v1", 3})
	assert.False(t, ok, "the block that differs is dropped")
	assert.EqualValues(t, 1, c.VerifyFailures(0, 0).Total, "counted, for rsfs status")
	assert.Contains(t, logs.String(), "block 3 differs from the bytes verified earlier")

	h := c.Open(content, fetcher) // the next reader fetches it again, and it matches
	defer h.Close()
	got, errs := readAll(testCtx(t), h, testBlock)
	assert.Equal(t, data, got)
	assert.ErrorIs(t, errs[len(errs)-1], io.EOF)
}
