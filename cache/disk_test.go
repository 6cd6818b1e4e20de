package cache

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/tests/logbuf"
)

func blockPath(c *Cache, id string, block int64) string {
	return c.disk.path(c.disk.key(blockKey{id, block}))
}

// newDiskCache returns a Cache over dir, closed when the test ends.
func newDiskCache(t *testing.T, dir string, cfg Config) (*Cache, *logbuf.Buffer) {
	t.Helper()
	logs := &logbuf.Buffer{}
	cfg.DiskDir = dir
	cfg.Logger = logs.Logger()
	if cfg.BlockSize == 0 {
		cfg.BlockSize = testBlock
	}
	c, err := NewWithDisk(cfg)
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c, logs
}

// waitDiskIdle waits until the disk write queue is empty.
func waitDiskIdle(t *testing.T, c *Cache) {
	t.Helper()
	eventually(t, func() bool {
		c.disk.mu.Lock()
		defer c.disk.mu.Unlock()
		return len(c.disk.pending) == 0
	}, "disk writes to finish")
}

// waitScanned waits until the startup scan has finished.
func waitScanned(t *testing.T, c *Cache) {
	t.Helper()
	select {
	case <-c.disk.scanDone:
	case <-time.After(hangBound):
		t.Fatal("disk scan did not finish")
	}
}

// readContent reads a whole content through a fresh File.
func readContent(t *testing.T, c *Cache, content Content, fetcher Fetcher) []byte {
	t.Helper()
	f := c.Open(content, fetcher)
	defer f.Close()
	got, errs := readAll(testCtx(t), f, testBlock)
	require.Equal(t, io.EOF, errs[len(errs)-1])
	for i, err := range errs[:len(errs)-1] {
		require.NoError(t, err, "read %d", i)
	}
	return got
}

func TestDiskBlocksSurviveANewCache(t *testing.T) {
	dir := t.TempDir()
	data := randomBytes(5*testBlock+123, 40)
	content := Content{ID: "v1", Name: "u", Size: int64(len(data)), Hashes: sha256Of(data)}

	first, _ := newDiskCache(t, dir, Config{ReadAhead: -1})
	fetcher := &memOrigin{data: data}
	assert.Equal(t, data, readContent(t, first, content, fetcher))
	assert.Equal(t, int64(6), fetcher.calls.Load())
	first.Close()
	st := first.Stats()
	assert.Equal(t, uint64(6), st.DiskWrites)
	assert.Equal(t, 6, st.DiskBlocks)
	// Five block files, and the short last block in a pack with its table.
	wantBytes := int64(len(data) + 6*(blockFileFixed+len("v1")) + packTableEntry + packTrailerLen)
	assert.Equal(t, wantBytes, st.DiskBytes)
	assert.Equal(t, wantBytes, bytesUnder(t, dir), "the bytes on disk")

	second, _ := newDiskCache(t, dir, Config{ReadAhead: -1})
	again := &memOrigin{data: data}
	assert.Equal(t, data, readContent(t, second, content, again))
	assert.Equal(t, int64(0), again.calls.Load(), "every block comes from disk")
	st = second.Stats()
	assert.Equal(t, uint64(6), st.DiskHits)
	assert.Equal(t, uint64(0), st.Fills)
	assert.Equal(t, uint64(0), st.DiskWrites, "blocks read from disk are not written back")
	waitScanned(t, second)
	assert.Equal(t, wantBytes, second.Stats().DiskBytes)
}

// Blocks up to oneWriteMax are written with their header in one write,
// larger ones in two: both come back whole from a new cache.
func TestDiskBlocksAboveAndBelowOneWriteSurviveANewCache(t *testing.T) {
	dir := t.TempDir()
	block := 2 * oneWriteMax
	data := randomBytes(2*block+5000, 43)
	content := Content{ID: "v1", Name: "u", Size: int64(len(data)), Hashes: sha256Of(data)}
	cfg := Config{ReadAhead: -1, BlockSize: block, MaxBytes: int64(8 * block)}

	first, _ := newDiskCache(t, dir, cfg)
	require.Equal(t, data, readContent(t, first, content, &memOrigin{data: data}))
	first.Close()
	assert.Equal(t, int64(len(data)+3*(blockFileFixed+len("v1"))+packTableEntry+packTrailerLen), first.Stats().DiskBytes)
	for b, n := range []int{block, block} {
		st, err := os.Stat(blockPath(first, "v1", int64(b)))
		require.NoError(t, err)
		assert.Equal(t, int64(blockFileFixed+len("v1")+n), st.Size(), "block file %d", b)
	}
	packs := packFiles(t, dir)
	require.Len(t, packs, 1, "the short last block is in a pack")
	st, err := os.Stat(packs[0])
	require.NoError(t, err)
	assert.Equal(t, int64(blockFileFixed+len("v1")+5000+packTableEntry+packTrailerLen), st.Size())

	second, _ := newDiskCache(t, dir, cfg)
	again := &memOrigin{data: data}
	assert.Equal(t, data, readContent(t, second, content, again))
	assert.Equal(t, int64(0), again.calls.Load(), "every block comes from disk")
	assert.Equal(t, uint64(3), second.Stats().DiskHits)
}

func TestDiskBadBlockFilesAreRefetchedNeverServed(t *testing.T) {
	dir := t.TempDir()
	data := randomBytes(6*testBlock, 41)
	content := Content{ID: "v1", Name: "u", Size: int64(len(data))} // no hash: only the disk checks guard
	first, _ := newDiskCache(t, dir, Config{ReadAhead: -1})
	readContent(t, first, content, &memOrigin{data: data})
	first.Close()

	damage := map[int64]func(path string){
		0: func(p string) { flipByte(t, p, -1) },                   // last data byte
		1: func(p string) { truncate(t, p, blockFileFixed+2+100) }, // torn data
		2: func(p string) { truncate(t, p, 10) },                   // torn header
		3: func(p string) { truncate(t, p, 0) },                    // empty (crash before data)
		4: func(p string) { flipByte(t, p, blockFileFixed+2-1) },   // stored checksum
		5: func(p string) { flipByte(t, p, 12) },                   // content id
	}
	for b, hurt := range damage {
		hurt(blockPath(first, "v1", b))
	}

	second, logs := newDiskCache(t, dir, Config{ReadAhead: -1})
	fetcher := &memOrigin{data: data}
	assert.Equal(t, data, readContent(t, second, content, fetcher))
	assert.Equal(t, int64(6), fetcher.calls.Load(), "every damaged block is refetched")
	st := second.Stats()
	assert.Equal(t, uint64(0), st.DiskHits)
	assert.Equal(t, uint64(6), st.DiskErrors)
	assert.Contains(t, logs.String(), "discarding block file")

	// The refetched blocks are written again, intact.
	waitDiskIdle(t, second)
	second.Close()
	third, _ := newDiskCache(t, dir, Config{ReadAhead: -1})
	again := &memOrigin{data: data}
	assert.Equal(t, data, readContent(t, third, content, again))
	assert.Equal(t, int64(0), again.calls.Load())
}

func flipByte(t *testing.T, path string, at int) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	if at < 0 {
		at = len(b) + at
	}
	b[at] ^= 0xff
	require.NoError(t, os.WriteFile(path, b, 0o644))
}

func truncate(t *testing.T, path string, n int64) {
	t.Helper()
	require.NoError(t, os.Truncate(path, n))
}

func TestDecodeBlockFileRejectsOtherBlocks(t *testing.T) {
	k := blockKey{"v1", 3}
	data := []byte("some block data")
	file := append(blockFileHeader(k, 4096, data), data...)
	got, err := decodeBlockFile(k, 4096, file)
	require.NoError(t, err)
	assert.Equal(t, data, got)

	for _, other := range []blockKey{{"v2", 3}, {"v1", 4}, {"v11", 3}} {
		_, err := decodeBlockFile(other, 4096, file)
		assert.ErrorIs(t, err, errBadBlockFile, "%v", other)
	}
	_, err = decodeBlockFile(k, 8192, file)
	assert.ErrorIs(t, err, errBadBlockFile, "another block size")
	_, err = decodeBlockFile(k, 4096, append(file, 0))
	assert.ErrorIs(t, err, errBadBlockFile, "a longer file")
	assert.NotEqual(t, diskKeyOf(blockKey{"a", 1}, 4096), diskKeyOf(blockKey{"a\x00", 1}, 4096))
	assert.NotEqual(t, diskKeyOf(blockKey{"a", 1}, 4096), diskKeyOf(blockKey{"a", 1}, 8192))
}

func TestDiskSizeBoundEvictsLeastRecentlyUsedAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	const size = testBlock // whole blocks: block files (short ones go into packs)
	fileSize := int64(size + blockFileFixed + len("v1"))
	first, _ := newDiskCache(t, dir, Config{DiskMaxBytes: 4 * fileSize})
	for b := range int64(4) {
		first.Put("v1", b, randomBytes(size, uint64(b)))
	}
	waitDiskIdle(t, first)
	first.Close()
	// Blocks 0..3 were last used in that order, a minute apart.
	base := time.Now().Add(-time.Hour)
	for b := range int64(4) {
		at := base.Add(time.Duration(b) * time.Minute)
		require.NoError(t, os.Chtimes(blockPath(first, "v1", b), at, at))
	}

	second, _ := newDiskCache(t, dir, Config{DiskMaxBytes: 4 * fileSize})
	waitScanned(t, second)
	// Reading block 0 makes it the most recent.
	got, err := second.Get(testCtx(t), "v1", 0, func(context.Context) ([]byte, error) {
		return nil, fmt.Errorf("block 0 must come from disk")
	})
	require.NoError(t, err)
	assert.Equal(t, randomBytes(size, 0), got)
	for b := int64(4); b < 6; b++ {
		second.Put("v1", b, randomBytes(size, uint64(b)))
		waitDiskIdle(t, second)
	}
	st := second.Stats()
	assert.Equal(t, uint64(2), st.DiskEvictions)
	assert.Equal(t, 4*fileSize, st.DiskBytes)
	for b, want := range map[int64]bool{0: true, 1: false, 2: false, 3: true, 4: true, 5: true} {
		_, err := os.Stat(blockPath(second, "v1", b))
		assert.Equal(t, want, err == nil, "block %d on disk", b)
	}
}

func TestDiskScanEvictsDownToTheBound(t *testing.T) {
	dir := t.TempDir()
	first, _ := newDiskCache(t, dir, Config{})
	for b := range int64(10) {
		first.Put("v1", b, make([]byte, testBlock))
	}
	waitDiskIdle(t, first)
	first.Close()
	fileSize := int64(testBlock + blockFileFixed + 2)

	second, _ := newDiskCache(t, dir, Config{DiskMaxBytes: 3 * fileSize})
	waitScanned(t, second)
	st := second.Stats()
	assert.Equal(t, 3, st.DiskBlocks)
	assert.Equal(t, uint64(7), st.DiskEvictions)
	files, err := filepath.Glob(filepath.Join(dir, "blocks", "*", "*"))
	require.NoError(t, err)
	assert.Len(t, files, 3)
}

func TestDiskLeftoverTempFileIsIgnoredAndCleaned(t *testing.T) {
	dir := t.TempDir()
	c0, _ := newDiskCache(t, dir, Config{})
	c0.Close()
	k := blockKey{"v1", 0}
	// A crash left a complete temporary file (never renamed) holding other
	// bytes for the block, and a torn final file.
	stale, fresh := randomBytes(testBlock, 1), randomBytes(testBlock, 2)
	final := blockPath(c0, k.id, k.block)
	tmp := final + tempMarker + "0123456789abcdef"
	require.NoError(t, os.WriteFile(tmp, append(blockFileHeader(k, testBlock, stale), stale...), 0o644))
	require.NoError(t, os.WriteFile(final, blockFileHeader(k, testBlock, fresh)[:20], 0o644))

	c, _ := newDiskCache(t, dir, Config{})
	got, err := c.Get(testCtx(t), k.id, k.block, func(context.Context) ([]byte, error) { return fresh, nil })
	require.NoError(t, err)
	assert.Equal(t, fresh, got)
	waitScanned(t, c)
	_, err = os.Stat(tmp)
	assert.ErrorIs(t, err, os.ErrNotExist, "the leftover temp file is removed")
	assert.Equal(t, uint64(1), c.disk.cleaned.Load())
	waitDiskIdle(t, c)
	file, err := os.ReadFile(final)
	require.NoError(t, err)
	data, err := decodeBlockFile(k, testBlock, file)
	require.NoError(t, err)
	assert.Equal(t, fresh, data)
}

func TestDiskDropContentRemovesItsFiles(t *testing.T) {
	dir := t.TempDir()
	c, _ := newDiskCache(t, dir, Config{})
	for b := range int64(3) {
		c.Put("old", b, randomBytes(testBlock, uint64(b)))
	}
	c.Put("keep", 0, randomBytes(testBlock, 9))
	waitDiskIdle(t, c)
	c.DropContent("old")
	for b := range int64(3) {
		_, err := os.Stat(blockPath(c, "old", b))
		assert.ErrorIs(t, err, os.ErrNotExist, "block %d", b)
	}
	_, err := os.Stat(blockPath(c, "keep", 0))
	assert.NoError(t, err)
	assert.Equal(t, 1, c.Stats().DiskBlocks)
}

func TestDiskDropContentCancelsQueuedWrites(t *testing.T) {
	dir := t.TempDir()
	c, _ := newDiskCache(t, dir, Config{})
	// A write queued (not yet written) when its content is dropped.
	c.disk.mu.Lock()
	w := &diskWrite{key: blockKey{"old", 0}, dk: c.disk.key(blockKey{"old", 0})}
	c.disk.pending[w.dk] = w
	c.disk.mu.Unlock()
	c.DropContent("old")
	// The writer finds the block in memory (as when DropContent comes while
	// the file is being written): only the cancellation stops it.
	c.mu.Lock()
	c.lru.add(w.key, []byte("x"))
	c.mu.Unlock()
	require.NoError(t, c.disk.write(w))
	_, err := os.Stat(blockPath(c, "old", 0))
	assert.ErrorIs(t, err, os.ErrNotExist)
	c.disk.mu.Lock()
	delete(c.disk.pending, w.dk)
	c.disk.mu.Unlock()
}

func TestDiskConcurrentAccess(t *testing.T) {
	dir := t.TempDir()
	// A memory cache of 8 blocks over a disk cache of 40: most gets miss
	// memory and race disk reads, writes and evictions.
	fileSize := int64(testBlock + blockFileFixed + 2)
	c, _ := newDiskCache(t, dir, Config{MaxBytes: 8 * testBlock, DiskMaxBytes: 40 * fileSize})
	blockData := func(id string, b int64) []byte {
		return randomBytes(testBlock, uint64(b)*131+uint64(id[1]))
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 300 {
				id := fmt.Sprintf("v%d", (g+i)%3)
				b := int64((i * 7) % 20)
				got, err := c.Get(testCtx(t), id, b, func(context.Context) ([]byte, error) { return blockData(id, b), nil })
				if !assert.NoError(t, err) || !assert.Equal(t, blockData(id, b), got) {
					return
				}
				if i%50 == 0 {
					c.DropContent(id)
				}
			}
		})
	}
	wg.Wait()
	waitDiskIdle(t, c)
	st := c.Stats()
	assert.LessOrEqual(t, st.DiskBytes, 40*fileSize)
	// Disk hits depend on the writer keeping up, which this race does not
	// promise; TestDiskBlocksSurviveANewCache pins them down.
	t.Logf("disk hits %d, writes %d, dropped writes %d", st.DiskHits, st.DiskWrites, st.DiskWriteDrops)
	assert.Equal(t, uint64(0), st.DiskErrors)
}

func TestNewWithDiskReportsAnUnusableDir(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	c, err := NewWithDisk(Config{DiskDir: file})
	require.Error(t, err)
	assert.Contains(t, err.Error(), file)
	got, err := c.Get(testCtx(t), "v1", 0, func(context.Context) ([]byte, error) { return []byte("ok"), nil })
	require.NoError(t, err)
	assert.Equal(t, []byte("ok"), got, "the memory cache still works")
}

func TestDiskAnotherBlockSizeDoesNotReuseBlocks(t *testing.T) {
	dir := t.TempDir()
	// 1.5 blocks of 4 KiB: block 1 of 4 KiB and block 1 of 2 KiB have the
	// same length but different bytes.
	data := randomBytes(testBlock+testBlock/2, 42)
	content := Content{ID: "v1", Name: "u", Size: int64(len(data))}
	first, _ := newDiskCache(t, dir, Config{ReadAhead: -1})
	readContent(t, first, content, &memOrigin{data: data})
	first.Close()

	second, _ := newDiskCache(t, dir, Config{ReadAhead: -1, BlockSize: testBlock / 2})
	fetcher := &memOrigin{data: data}
	assert.Equal(t, data, readContent(t, second, content, fetcher))
	assert.Equal(t, int64(3), fetcher.calls.Load())
	assert.Equal(t, uint64(0), second.Stats().DiskHits)
}

// After the startup scan the index knows every block file on disk, so a
// miss opens no file: a block file that appears behind the store's back
// afterwards (here copied in from another cache directory) is not read,
// and the block is fetched.
func TestDiskMissAfterTheScanOpensNoFile(t *testing.T) {
	data := randomBytes(6*testBlock, 41) // whole blocks: six block files
	content := Content{ID: "v1", Name: "u", Size: int64(len(data)), Hashes: sha256Of(data)}

	written := t.TempDir()
	first, _ := newDiskCache(t, written, Config{ReadAhead: -1})
	assert.Equal(t, data, readContent(t, first, content, &memOrigin{data: data}))
	waitDiskIdle(t, first)
	first.Close()

	dir := t.TempDir()
	second, _ := newDiskCache(t, dir, Config{ReadAhead: -1})
	waitScanned(t, second)
	for b := range int64(6) {
		src, dst := blockPath(first, "v1", b), blockPath(second, "v1", b)
		raw, err := os.ReadFile(src)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(dst, raw, 0o644))
	}
	fetcher := &memOrigin{data: data}
	assert.Equal(t, data, readContent(t, second, content, fetcher))
	assert.Equal(t, int64(6), fetcher.calls.Load(), "blocks the scan did not index are fetched")
	assert.Equal(t, uint64(0), second.Stats().DiskHits)
}

// lookupIn is a memory cache for a bare diskStore: the blocks of held, which
// must not change once the store is open.
func lookupIn(held map[blockKey][]byte) func(blockKey) ([]byte, bool) {
	return func(k blockKey) ([]byte, bool) {
		data, ok := held[k]
		return data, ok
	}
}

// Writes wait for the reads to pause: while reads go on nothing is
// written, and the writes come no sooner than the quiet time after the
// last read, however late the machine runs them. Closing writes what is
// queued at once, while the writer waits for a quiet that would take an
// hour.
func TestDiskWritesWaitForQuietAndCloseWritesAll(t *testing.T) {
	held := map[blockKey][]byte{}
	for b := range int64(6) {
		held[blockKey{"v1", b}] = randomBytes(testBlock, uint64(b))
	}
	var mu sync.Mutex
	var looked []time.Time // when the writer took each block to write it
	lookup := func(k blockKey) ([]byte, bool) {
		mu.Lock()
		looked = append(looked, time.Now())
		mu.Unlock()
		return lookupIn(held)(k)
	}
	lookedSince := func(from int) []time.Time {
		mu.Lock()
		defer mu.Unlock()
		return append([]time.Time(nil), looked[from:]...)
	}
	d, err := openDiskStore(t.TempDir(), 1<<30, testBlock, lookup, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(d.close)
	// Set before the first enqueue, which orders them before the writer
	// reads them.
	d.quiet, d.maxDefer = time.Second, time.Hour
	for b := range int64(3) {
		d.enqueue(blockKey{"v1", b})
	}
	for start := time.Now(); time.Since(start) < 300*time.Millisecond; {
		d.busy() // reads go on
		time.Sleep(5 * time.Millisecond)
	}
	lastRead := time.Unix(0, d.lastBusy.Load())
	waitWrites(t, d, 3)
	for i, at := range lookedSince(0) {
		assert.GreaterOrEqual(t, at.Sub(lastRead), d.quiet, "block %d written %s after the last read", i, at.Sub(lastRead))
	}

	// The writer is idle, not in settle: setting quiet now is ordered
	// before it reads it by the next enqueue.
	d.quiet = time.Hour
	for b := int64(3); b < 6; b++ {
		d.enqueue(blockKey{"v1", b})
	}
	waitUntil(t, "the writer to take the first block and wait for quiet", func() bool { return len(d.queue) == 2 })
	closing := time.Now()
	closed := make(chan struct{})
	go func() { d.close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(hangBound):
		t.Fatal("close did not write the queued blocks at once")
	}
	assert.Equal(t, uint64(6), d.writes.Load(), "closing writes every queued block")
	for i, at := range lookedSince(3) {
		assert.False(t, at.Before(closing), "block %d written %s before closing, while reads had not paused", 3+i, closing.Sub(at))
	}
	for b := range int64(6) {
		_, err := os.Stat(d.path(d.key(blockKey{"v1", b})))
		assert.NoError(t, err, "block %d", b)
	}
}

// waitWrites waits, at most 10 s, until the store has written n blocks.
func waitWrites(t *testing.T, d *diskStore, n uint64) {
	t.Helper()
	waitUntil(t, fmt.Sprintf("%d blocks written", n), func() bool { return d.writes.Load() >= n })
}

// waitUntil waits until cond holds, at most 10 s: long enough for a
// loaded machine, and the passing case returns as soon as it holds.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(hangBound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// A write waits for quiet at most maxDefer: reads that never pause (a long
// rsync) still fill the disk cache.
func TestDiskWritesWaitAtMostMaxDefer(t *testing.T) {
	k := blockKey{"busy", 0}
	d, err := openDiskStore(t.TempDir(), 1<<30, testBlock, lookupIn(map[blockKey][]byte{k: randomBytes(testBlock, 1)}), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(d.close)
	d.quiet = time.Hour
	d.maxDefer = 200 * time.Millisecond
	start := time.Now()
	d.enqueue(k)
	for d.writes.Load() == 0 && time.Since(start) < 10*time.Second {
		d.busy() // reads never pause
		time.Sleep(10 * time.Millisecond)
	}
	assert.Equal(t, uint64(1), d.writes.Load(), "written within maxDefer while reads go on")
	assert.GreaterOrEqual(t, time.Since(start), d.maxDefer, "written before maxDefer while reads went on")
}

// A Cache's disk queue holds keys, not blocks: a large read's blocks are
// written from memory after it, and those evicted meanwhile are dropped,
// not kept alive by the queue.
func TestDiskQueueWritesFromMemoryAfterTheReads(t *testing.T) {
	dir := t.TempDir()
	c, _ := newDiskCache(t, dir, Config{MaxBytes: 4 * testBlock, ReadAhead: -1})
	c.disk.quiet = 300 * time.Millisecond
	data := randomBytes(10*testBlock, 7)
	content := Content{ID: "big", Name: "u", Size: int64(len(data))}
	f := c.Open(content, &memOrigin{data: data})
	buf := make([]byte, testBlock)
	for b := range int64(10) { // in order: blocks 6 to 9 stay in memory
		_, err := f.ReadAt(testCtx(t), buf, b*testBlock)
		require.NoError(t, err)
	}
	f.Close()
	assert.Equal(t, uint64(0), c.disk.writes.Load(), "written during the read")
	eventually(t, func() bool { return c.disk.writes.Load()+c.disk.drops.Load() == 10 }, "every queued block written or dropped")
	assert.Equal(t, uint64(4), c.disk.writes.Load(), "the blocks still in memory are written")
	for b := range int64(10) {
		_, err := os.Stat(c.disk.path(c.disk.key(blockKey{"big", b})))
		assert.Equal(t, b >= 6, err == nil, "block %d on disk", b)
	}
}

// Opening and reading a file count as reads at work, and so does a walk of
// the tree: the disk writer waits for them to pause too (a second grep -r,
// served from the kernel's pages, asks rsfs only for its directories but
// must not share the CPU with the first one's writes).
func TestDiskOpenAndReadPostponeWrites(t *testing.T) {
	c, _ := newDiskCache(t, t.TempDir(), Config{ReadAhead: -1})
	data := randomBytes(testBlock, 42)
	content := Content{ID: "v1", Name: "u", Size: int64(len(data)), Hashes: sha256Of(data)}
	c.disk.lastBusy.Store(0)
	f := c.Open(content, &memOrigin{data: data})
	defer f.Close()
	opened := c.disk.lastBusy.Load()
	assert.NotZero(t, opened, "an open marks the store busy")
	c.disk.lastBusy.Store(0)
	_, err := f.ReadAt(testCtx(t), make([]byte, 10), 0)
	require.NoError(t, err)
	assert.NotZero(t, c.disk.lastBusy.Load(), "a read marks the store busy")
	c.disk.lastBusy.Store(0)
	c.Busy()
	assert.NotZero(t, c.disk.lastBusy.Load(), "so does a walk of the tree, told by the file system (which opens without OPEN)")
}
