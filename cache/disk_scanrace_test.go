package cache

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The startup scan runs beside the writer. It never counts a pack this
// run's writer made (it is indexed already; a scan that found it would
// count its bytes twice, or remove it as empty), nor adds back a block file
// it listed that this run evicted or dropped before the scan added it. In
// both, the bytes counted are the bytes on disk. (A random test of the
// bound, TestDiskPacksAndFilesKeepTheBound, found both about once in 100
// runs under -race.)
func TestDiskScanBesideTheWriter(t *testing.T) {
	t.Run("a pack of this run", func(t *testing.T) {
		dir := t.TempDir()
		c, _ := newDiskCache(t, dir, Config{})
		waitScanned(t, c)
		c.Put("short", 0, randomBytes(1000, 1)) // packed
		waitDiskIdle(t, c)
		require.Len(t, packFiles(t, dir), 1)
		c.disk.loadPacks() // as a scan that listed the packs after the writer made one
		assert.Len(t, packFiles(t, dir), 1)
		assert.Equal(t, bytesUnder(t, dir), c.Stats().DiskBytes)
		_, ok := c.disk.read(blockKey{"short", 0})
		assert.True(t, ok)
	})
	t.Run("a block file dropped after the scan listed it", func(t *testing.T) {
		dir := t.TempDir()
		c, _ := newDiskCache(t, dir, Config{})
		waitScanned(t, c)
		c.Put("whole", 0, randomBytes(testBlock, 2)) // a block file
		waitDiskIdle(t, c)
		require.Len(t, blockFiles(t, dir), 1)
		c.disk.mu.Lock()
		c.disk.index.forgotten = map[diskKey]struct{}{} // as while a scan runs
		c.disk.mu.Unlock()
		found := c.disk.scanDir(filepath.Dir(blockFiles(t, dir)[0]), nil)
		require.Len(t, found, 1)
		c.DropContent("whole")
		require.Empty(t, blockFiles(t, dir))
		c.disk.mu.Lock()
		for _, f := range found {
			c.disk.index.addScanned(f.key, f.size)
		}
		c.disk.index.forgotten = nil
		c.disk.mu.Unlock()
		assert.Equal(t, bytesUnder(t, dir), c.Stats().DiskBytes)
		assert.Zero(t, c.Stats().DiskBlocks)
	})
}
