package cache

import (
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bytesUnder is the size of the disk cache's block files and packs in dir.
func bytesUnder(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	require.NoError(t, filepath.WalkDir(filepath.Join(dir, "blocks"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		n += info.Size()
		return nil
	}))
	return n
}

// packFiles lists the packs in dir; blockFiles the block files.
func packFiles(t *testing.T, dir string) []string {
	t.Helper()
	found, err := filepath.Glob(filepath.Join(dir, "blocks", packsDirName, "*"+packSuffix))
	require.NoError(t, err)
	return found
}

func blockFiles(t *testing.T, dir string) []string {
	t.Helper()
	found, err := filepath.Glob(filepath.Join(dir, "blocks", "[0-9a-f][0-9a-f]", "*"))
	require.NoError(t, err)
	return found
}

// shortBlockContents are n contents of one short block each, of varied sizes.
func shortBlockContents(n, seed int) ([]Content, []*memOrigin) {
	var cts []Content
	var origins []*memOrigin
	for i := range n {
		cs, os := keepContents(1, 100+(i*997)%(testBlock-100), seed+i)
		cts, origins = append(cts, cs...), append(origins, os...)
	}
	return cts, origins
}

// Small files' blocks go into one pack, not a file each; a new cache reads
// them all from it (its table: one read at start), fetching nothing.
func TestDiskSmallBlocksShareAPackAndSurviveANewCache(t *testing.T) {
	dir := t.TempDir()
	cts, origins := shortBlockContents(50, 1)
	first, _ := newDiskCache(t, dir, Config{ReadAhead: -1})
	for i := range cts {
		readContent(t, first, cts[i], origins[i])
	}
	waitDiskIdle(t, first)
	assert.Empty(t, blockFiles(t, dir), "no block file per small block")
	assert.Len(t, packFiles(t, dir), 1)
	assert.Equal(t, uint64(50), first.Stats().DiskWrites)
	first.Close()
	assert.Equal(t, bytesUnder(t, dir), first.Stats().DiskBytes, "the bytes counted are those on disk, table included")

	second, logs := newDiskCache(t, dir, Config{ReadAhead: -1})
	for i := range cts {
		again := &memOrigin{data: origins[i].data}
		assert.Equal(t, origins[i].data, readContent(t, second, cts[i], again))
		assert.Zero(t, again.calls.Load(), "content %d comes from the pack", i)
	}
	st := second.Stats()
	assert.Equal(t, uint64(50), st.DiskHits)
	assert.Equal(t, 50, st.DiskBlocks)
	assert.Equal(t, bytesUnder(t, dir), st.DiskBytes)
	assert.NotContains(t, logs.String(), "not sealed")
}

// A pack whose table was never written (rsfs was killed) is read record by
// record up to its first bad one: a dropped content's cleared record is
// passed over, the records after a corrupted one are not served, nor a torn
// last one; those are fetched again, the others come from disk.
func TestDiskUnsealedPackIsReadRecordByRecord(t *testing.T) {
	for _, corrupt := range []bool{false, true} {
		t.Run(map[bool]string{false: "torn", true: "corrupted"}[corrupt], func(t *testing.T) {
			dir := t.TempDir()
			cts, origins := shortBlockContents(10, 2)
			first, _ := newDiskCache(t, dir, Config{ReadAhead: -1})
			for i := range cts {
				readContent(t, first, cts[i], origins[i])
			}
			waitDiskIdle(t, first)
			first.DropContent(cts[3].ID)
			first.Close()
			packs := packFiles(t, dir)
			require.Len(t, packs, 1)
			raw, err := os.ReadFile(packs[0])
			require.NoError(t, err)
			recLen := func(i int) int { return blockFileFixed + len(cts[i].ID) + int(cts[i].Size) }
			records := len(raw) - 9*packTableEntry - packTrailerLen // 9 live records in the table
			if corrupt {
				off := 0
				for i := range 6 {
					off += recLen(i)
				}
				raw[off+blockFileFixed+len(cts[6].ID)+3] ^= 1 // a data byte of record 6
			}
			// Cut off the table and half the last record.
			require.NoError(t, os.WriteFile(packs[0], raw[:records-recLen(9)/2], 0o644))

			second, logs := newDiskCache(t, dir, Config{ReadAhead: -1})
			for i := range cts {
				again := &memOrigin{data: origins[i].data}
				assert.Equal(t, origins[i].data, readContent(t, second, cts[i], again))
				fetched := i == 3 || i == 9 || (corrupt && i >= 6)
				assert.Equal(t, map[bool]int64{true: 1}[fetched], again.calls.Load(), "content %d", i)
			}
			assert.Contains(t, logs.String(), "not sealed")
			assert.Zero(t, second.Stats().DiskErrors)
		})
	}
}

// A record whose bytes changed on disk is never served: it is refetched,
// logged and counted; the pack's other records are still served.
func TestDiskBadPackRecordIsRefetchedNeverServed(t *testing.T) {
	dir := t.TempDir()
	cts, origins := shortBlockContents(5, 3)
	first, _ := newDiskCache(t, dir, Config{ReadAhead: -1})
	for i := range cts {
		readContent(t, first, cts[i], origins[i])
	}
	first.Close()
	packs := packFiles(t, dir)
	require.Len(t, packs, 1)
	raw, err := os.ReadFile(packs[0])
	require.NoError(t, err)
	// Flip a data byte of the third record.
	off := 0
	for i := range 2 {
		off += blockFileFixed + len(cts[i].ID) + int(cts[i].Size)
	}
	raw[off+blockFileFixed+len(cts[2].ID)+7] ^= 0x40
	require.NoError(t, os.WriteFile(packs[0], raw, 0o644))

	second, logs := newDiskCache(t, dir, Config{ReadAhead: -1})
	for i := range cts {
		again := &memOrigin{data: origins[i].data}
		assert.Equal(t, origins[i].data, readContent(t, second, cts[i], again))
		assert.Equal(t, int64(map[bool]int{true: 1}[i == 2]), again.calls.Load(), "content %d", i)
	}
	assert.Equal(t, uint64(1), second.Stats().DiskErrors)
	assert.Contains(t, logs.String(), "checksum mismatch")
}

// Dropping a content forgets its records; a sealed pack none of whose
// records is held any longer is removed, and its bytes leave the count.
func TestDiskDropContentEmptiesAPack(t *testing.T) {
	dir := t.TempDir()
	// A bound whose 64th seals a pack after three records of 1,000 bytes.
	c, _ := newDiskCache(t, dir, Config{DiskMaxBytes: 64 * 2100})
	for b := range int64(3) {
		c.Put("old", b, randomBytes(1000, uint64(b)))
		waitDiskIdle(t, c)
	}
	c.Put("keep", 0, randomBytes(1000, 9))
	waitDiskIdle(t, c)
	require.Len(t, packFiles(t, dir), 2)
	c.DropContent("old")
	assert.Len(t, packFiles(t, dir), 1)
	assert.Equal(t, 1, c.Stats().DiskBlocks)
	assert.Equal(t, bytesUnder(t, dir), c.Stats().DiskBytes)
	_, ok := c.disk.read(blockKey{"keep", 0})
	assert.True(t, ok)
}

// Random writes, drops and reads of short and whole blocks under a small
// bound: the bytes counted are always the bytes on disk, within the bound,
// and every block the disk serves is the one written last, before and
// after a restart (a block dropped may be written again with other bytes,
// as after a hash mismatch; its length stays, as the listed length does).
func TestDiskPacksAndFilesKeepTheBound(t *testing.T) {
	for seed := range uint64(3) {
		t.Run("seed "+string(rune('0'+seed)), func(t *testing.T) {
			dir := t.TempDir()
			const bound = 64 << 10
			rng := rand.New(rand.NewPCG(seed, 42))
			want := map[blockKey][]byte{}
			c, _ := newDiskCache(t, dir, Config{DiskMaxBytes: bound, MaxBytes: 1 << 20})
			c.disk.quiet = time.Millisecond
			check := func(c *Cache) {
				t.Helper()
				waitDiskIdle(t, c)
				st := c.Stats()
				assert.Equal(t, bytesUnder(t, dir), st.DiskBytes)
				assert.LessOrEqual(t, st.DiskBytes, int64(bound))
				for k, data := range want {
					if got, ok := c.disk.read(k); ok {
						assert.Equal(t, data, got, "%v", k)
					}
				}
			}
			for op := range 200 {
				id := "c" + string(rune('a'+rng.IntN(20)))
				switch r := rng.IntN(10); {
				case r < 7:
					b := int64(rng.IntN(3))
					n := testBlock // whole blocks of some ids, short of others
					if id[1]%2 == 0 {
						n = 1 + (int(id[1])*131+int(b)*17)%(testBlock-1)
					}
					k := blockKey{id, b}
					if _, ok := want[k]; ok {
						continue // a block's bytes never change
					}
					want[k] = randomBytes(n, uint64(op))
					c.Put(id, b, want[k])
				case r < 9:
					c.DropContent(id)
					for k := range want {
						if k.id == id {
							delete(want, k)
						}
					}
				default:
					check(c)
				}
			}
			check(c)
			c.Close()
			assert.Equal(t, bytesUnder(t, dir), c.Stats().DiskBytes, "after close")
			again, _ := newDiskCache(t, dir, Config{DiskMaxBytes: bound})
			again.disk.quiet = time.Millisecond
			waitScanned(t, again)
			check(again)
			assert.False(t, strings.Contains(strings.Join(blockFiles(t, dir), " "), tempMarker))
		})
	}
}

// A dropped content's record stays in its pack (the pack holds others) but
// is cleared: a restart, which reads the pack's table, does not serve it.
func TestDiskDroppedRecordIsNotServedAfterARestart(t *testing.T) {
	dir := t.TempDir()
	c, _ := newDiskCache(t, dir, Config{})
	c.Put("bad", 0, randomBytes(1000, 1))
	c.Put("good", 0, randomBytes(1000, 2))
	waitDiskIdle(t, c)
	c.DropContent("bad")
	c.Close()
	require.Len(t, packFiles(t, dir), 1)

	again, logs := newDiskCache(t, dir, Config{})
	_, ok := again.disk.read(blockKey{"bad", 0})
	assert.False(t, ok, "a dropped record is not served")
	got, ok := again.disk.read(blockKey{"good", 0})
	assert.True(t, ok)
	assert.Equal(t, randomBytes(1000, 2), got)
	assert.Zero(t, again.Stats().DiskErrors, "a cleared record is no error")
	assert.NotContains(t, logs.String(), "discarding")
}
