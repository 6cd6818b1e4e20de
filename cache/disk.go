package cache

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The disk write queue holds keys, at most diskQueueLen (more are dropped
// rather than slowing reads): each block is taken from the memory cache
// when its turn comes, so the queue holds no block memory of its own.
const (
	diskQueueLen = 1 << 16
	// diskQuiet is how long no block must have been queued, and no file
	// opened or read nor the tree walked (Cache.Busy), before the writer
	// writes: the writes of a burst of reads (grep -r, twice; cat of a
	// large file) wait for its end instead of competing with it for the
	// CPU and the file system.
	diskQuiet = 100 * time.Millisecond
	// diskMaxDefer is how long a write waits for quiet at most: reads that
	// never pause (a long rsync) still fill the disk cache, at SCHED_IDLE.
	diskMaxDefer = 5 * time.Second
	maxDiskIDLen = 64 << 10 // contents with longer ids are not written to disk
	// oneWriteMax is the largest block written to its file together with
	// its header, in one write; larger ones are written from where they are.
	oneWriteMax = 64 << 10
)

// diskStore is the disk cache: one file per block under dir/blocks, or,
// for blocks shorter than the block size, a record in a pack under
// dir/blocks/packs (disk_pack.go), written in the background and bounded by
// bytes with LRU eviction. Recency survives restarts through the files'
// modification times (set on every hit; a pack's at most every 10 s).
//
// Blocks of an id are removed from disk by dropID when the index knows them
// by id: every block written or read since the store opened. Blocks found by
// the startup scan and not read since are known by key only; they are left
// in place (no read can reach them once the content's identity changed, and
// a content whose bytes failed verification was read, so its blocks are
// known) and age out through LRU eviction.
type diskStore struct {
	dir       string // dir/blocks
	maxBytes  int64
	blockSize int
	maxFile   int64         // the largest file a valid block can make
	quiet     time.Duration // diskQuiet; tests set it
	maxDefer  time.Duration // diskMaxDefer; tests set it
	// lookup returns a block still in memory; one evicted before its turn
	// is not written.
	lookup func(blockKey) ([]byte, bool)
	nonce  string
	log    *slog.Logger

	mu      sync.Mutex
	index   *diskIndex
	pins    map[diskKey]bool // pin.go
	pending map[diskKey]*diskWrite
	closed  bool
	scanned bool // the index holds every block file on disk: a key it does not know is not there

	packMu  sync.Mutex  // serializes appends to packs; held across their writes, never by a read
	packW   *packWriter // the pack being appended to; guarded by packMu
	packSeq int         // guarded by packMu

	queue      chan *diskWrite
	writerDone chan struct{}
	stopScan   chan struct{}
	packsDone  chan struct{} // the packs are indexed (the scan's first step): reads wait for it
	scanDone   chan struct{}

	lookups, hits, writes, evictions, errs, drops, cleaned atomic.Uint64
	lastBusy                                               atomic.Int64 // time.Now().UnixNano() of the last enqueue, open or read
}

// diskWrite is one queued block write.
type diskWrite struct {
	key       blockKey
	dk        diskKey
	queued    time.Time
	cancelled bool // set by dropID; guarded by diskStore.mu
	taken     bool // its write started (by the writer or writeNow); guarded by diskStore.mu
}

// openDiskStore prepares dir and starts the writer and the index scan. The
// writer takes the blocks it writes from lookup.
func openDiskStore(dir string, maxBytes int64, blockSize int, lookup func(blockKey) ([]byte, bool), log *slog.Logger) (*diskStore, error) {
	blocks := filepath.Join(dir, "blocks")
	for i := range 256 {
		if err := os.MkdirAll(filepath.Join(blocks, fmt.Sprintf("%02x", i)), 0o755); err != nil {
			return nil, fmt.Errorf("prepare %s: %w", dir, err)
		}
	}
	var nonce [8]byte
	rand.Read(nonce[:])
	d := &diskStore{
		dir:        blocks,
		maxBytes:   maxBytes,
		blockSize:  blockSize,
		maxFile:    blockFileFixed + maxDiskIDLen + int64(blockSize),
		quiet:      diskQuiet,
		maxDefer:   diskMaxDefer,
		lookup:     lookup,
		nonce:      hex.EncodeToString(nonce[:]),
		log:        log,
		index:      newDiskIndex(),
		pending:    make(map[diskKey]*diskWrite),
		queue:      make(chan *diskWrite, diskQueueLen),
		writerDone: make(chan struct{}),
		stopScan:   make(chan struct{}),
		packsDone:  make(chan struct{}),
		scanDone:   make(chan struct{}),
	}
	if err := d.loadPins(); err != nil {
		log.Warn("disk cache: the pins of rsfs warm are lost", "err", err)
	}
	go d.writeLoop()
	go d.scan()
	return d, nil
}

// key returns the name of block k's file.
func (d *diskStore) key(k blockKey) diskKey { return diskKeyOf(k, d.blockSize) }

// path returns where a block file lives.
func (d *diskStore) path(dk diskKey) string {
	name := dk.String()
	return filepath.Join(d.dir, name[:2], name)
}

// tempPath returns where this store writes a block file before renaming it.
func (d *diskStore) tempPath(dk diskKey) string {
	return d.path(dk) + tempMarker + d.nonce
}

const tempMarker = ".tmp-"

// read returns block k from disk. A file that fails its checks is logged,
// deleted and reported as a miss.
func (d *diskStore) read(k blockKey) ([]byte, bool) {
	d.lookups.Add(1)
	dk := d.key(k)
	<-d.packsDone // a table read each: small files are on disk from the start
	d.mu.Lock()
	e, scanned := d.index.locate(dk), d.scanned
	d.mu.Unlock()
	switch {
	case e == nil && scanned:
		return nil, false // no file to open
	case e != nil && e.pack != nil:
		return d.readPacked(k, dk, e)
	}
	path := d.path(dk)
	file, err := readBlockFile(path, d.maxFile)
	if errors.Is(err, fs.ErrNotExist) {
		d.forget(dk)
		return nil, false
	}
	var data []byte
	if err == nil {
		data, err = decodeBlockFile(k, d.blockSize, file)
	}
	if err != nil {
		d.errs.Add(1)
		d.log.Warn("disk cache: discarding block file", "path", path, "id", k.id, "block", k.block, "err", err)
		d.forget(dk)
		os.Remove(path)
		return nil, false
	}
	d.hits.Add(1)
	d.mu.Lock()
	d.index.touch(dk, k, int64(len(file)))
	d.mu.Unlock()
	now := time.Now()
	os.Chtimes(path, now, now) // recency for the next scan; best effort
	return data, true
}

// readPacked returns block k from its record in a pack (e, looked up
// before). A record that fails its checks is logged and forgotten (its
// bytes stay in the pack until the pack goes) and reported as a miss.
func (d *diskStore) readPacked(k blockKey, dk diskKey, e *diskEntry) ([]byte, bool) {
	d.mu.Lock()
	p, off, size := e.pack, e.off, e.size
	d.mu.Unlock()
	path := d.packPath(p)
	rec, err := readPackRecord(path, off, size)
	if errors.Is(err, fs.ErrNotExist) { // the pack went meanwhile
		d.forgetEntry(dk, e)
		return nil, false
	}
	if err == nil && clearedRecord(rec) { // its content was dropped
		d.forgetEntry(dk, e)
		return nil, false
	}
	var data []byte
	if err == nil {
		data, err = decodeBlockFile(k, d.blockSize, rec)
	}
	if err != nil {
		d.errs.Add(1)
		d.log.Warn("disk cache: discarding a record of a pack", "pack", path, "offset", off, "id", k.id, "block", k.block, "err", err)
		d.forgetEntry(dk, e)
		return nil, false
	}
	d.hits.Add(1)
	now := time.Now()
	d.mu.Lock()
	if d.index.locate(dk) == e {
		d.index.touch(dk, k, size)
	}
	touch := !p.gone && now.Sub(p.lastTouch) >= packTouchEvery
	if touch {
		p.lastTouch = now
	}
	d.mu.Unlock()
	if touch {
		os.Chtimes(path, now, now) // recency for the next start; best effort
	}
	return data, true
}

// readBlockFile reads a whole file of at most maxSize bytes, with plain
// system calls (sysfile.go).
func readBlockFile(path string, maxSize int64) ([]byte, error) {
	fd, err := openFile(path, syscall.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("stat block file: %w", err)
	}
	if st.Size > maxSize {
		return nil, fmt.Errorf("%w: %d bytes", errBadBlockFile, st.Size)
	}
	buf := make([]byte, st.Size)
	if err := preadFull(fd, buf, 0); err != nil {
		return nil, fmt.Errorf("read block file: %w", err)
	}
	return buf, nil
}

// mayHold reports whether the index knows a file for block k (found by the
// scan or written or read since; it may have been discarded meanwhile).
func (d *diskStore) mayHold(k blockKey) bool {
	dk := d.key(k)
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.index.knows(dk)
}

func (d *diskStore) forget(dk diskKey) {
	d.mu.Lock()
	v := d.index.remove(dk)
	d.mu.Unlock()
	d.removeVictims(v, &d.evictions)
}

// forgetEntry forgets dk if e is still its entry.
func (d *diskStore) forgetEntry(dk diskKey, e *diskEntry) {
	d.mu.Lock()
	var v diskVictims
	if d.index.locate(dk) == e {
		v = d.index.remove(dk)
	}
	d.mu.Unlock()
	d.removeVictims(v, &d.evictions)
}

// enqueue queues block k for writing unless it was written or read since
// the store opened, or is queued already, or the queue is full (then the
// write is dropped).
func (d *diskStore) enqueue(k blockKey) {
	if len(k.id) > maxDiskIDLen {
		return
	}
	dk := d.key(k)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed || d.pending[dk] != nil || d.index.holds(dk) {
		return
	}
	w := &diskWrite{key: k, dk: dk, queued: time.Now()}
	d.busy() // before the writer can take w: noted after, the writer could find the store quiet since it opened
	select {
	case d.queue <- w:
		d.pending[dk] = w
	default:
		d.drops.Add(1)
	}
}

func (d *diskStore) writeLoop() {
	defer close(d.writerDone)
	lockIdleThread()
	for w := range d.queue {
		d.settle(w.queued)
		if !d.take(w) {
			continue // writeNow wrote it
		}
		d.writeAndForget(w)
	}
}

// take claims w's write; false if it was claimed already.
func (d *diskStore) take(w *diskWrite) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if w.taken {
		return false
	}
	w.taken = true
	return true
}

// writeAndForget writes w and ends its pending state.
func (d *diskStore) writeAndForget(w *diskWrite) {
	if err := d.write(w); err != nil {
		d.errs.Add(1)
		d.log.Warn("disk cache: write failed", "id", w.key.id, "block", w.key.block, "err", err)
	}
	d.mu.Lock()
	if d.pending[w.dk] == w {
		delete(d.pending, w.dk)
	}
	d.mu.Unlock()
}

// writeNow writes block k (held in memory) on the caller's goroutine, at
// its priority, unless it is on disk or its write has started: the
// writer's thread runs at SCHED_IDLE, which a busy machine starves, and
// rsfs warm waits for its blocks (Cache.Keep). A queued write of k is
// taken over. It reports whether the caller wrote it.
func (d *diskStore) writeNow(k blockKey) bool {
	if len(k.id) > maxDiskIDLen {
		return false
	}
	dk := d.key(k)
	d.mu.Lock()
	if d.closed || d.index.holds(dk) {
		d.mu.Unlock()
		return false
	}
	w := d.pending[dk]
	switch {
	case w == nil:
		w = &diskWrite{key: k, dk: dk, queued: time.Now(), taken: true}
		d.pending[dk] = w
	case w.taken:
		d.mu.Unlock()
		return false
	default:
		w.taken = true
	}
	d.mu.Unlock()
	d.writeAndForget(w)
	return true
}

// settle waits, while the store is open, until no block has been queued,
// and no file opened or read nor the tree walked, for d.quiet, or until
// the write queued at `queued` has waited d.maxDefer.
func (d *diskStore) settle(queued time.Time) {
	for {
		quiet := time.Since(time.Unix(0, d.lastBusy.Load()))
		waited := time.Since(queued)
		if quiet >= d.quiet || waited >= d.maxDefer {
			return
		}
		t := time.NewTimer(min(d.quiet-quiet, d.maxDefer-waited))
		select {
		case <-t.C:
		case <-d.stopScan: // closing: write what is queued at once
			t.Stop()
			return
		}
	}
}

// busy notes work that the writer should not compete with.
func (d *diskStore) busy() { d.lastBusy.Store(time.Now().UnixNano()) }

// write stores one block: a temporary file renamed into place, then
// evictions to stay within the bound.
func (d *diskStore) write(w *diskWrite) error {
	data, ok := d.lookup(w.key)
	if !ok { // left memory before its turn
		d.drops.Add(1)
		return nil
	}
	if packable(w.key, d.blockSize, data) {
		return d.writePacked(w, data)
	}
	tmp := d.tempPath(w.dk)
	buf := fileBufs.Get().(*[]byte)
	defer fileBufs.Put(buf)
	hdr := appendBlockFileHeader((*buf)[:0], w.key, d.blockSize, data)
	size := int64(len(hdr) + len(data))
	if len(data) <= oneWriteMax {
		// One write: a system call costs more than copying a few KiB,
		// and grep -r of small files writes a block file per file.
		hdr, data = append(hdr, data...), nil
	}
	*buf = hdr
	if err := writeTemp(tmp, hdr, data); err != nil {
		return err
	}
	if d.isCancelled(w) {
		os.Remove(tmp)
		return nil
	}
	// The rename runs without the lock (reads must not wait on the disk).
	// A dropID meanwhile marks the write cancelled; the file is then
	// removed again below instead of indexed.
	path := d.path(w.dk)
	// syscall.Rename, not os.Rename, which first stats path to refuse a
	// directory there: a block file's name is never a directory's.
	if err := syscall.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("rename block file %s: %w", tmp, err)
	}
	d.mu.Lock()
	if w.cancelled {
		d.mu.Unlock()
		os.Remove(path)
		return nil
	}
	d.index.touch(w.dk, w.key, size)
	victims := d.index.takeOldest(d.maxBytes, d.pinnedLocked)
	d.mu.Unlock()
	d.writes.Add(1)
	d.removeVictims(victims, &d.evictions)
	return nil
}

// fileBufs holds the buffers block files are composed in (header, and the
// data of a small block), so the writer allocates none per block.
var fileBufs = sync.Pool{New: func() any { return new([]byte) }}

func (d *diskStore) isCancelled(w *diskWrite) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return w.cancelled
}

// writeTemp writes hdr and data (if any) to a new file at path, with
// plain system calls (sysfile.go).
func writeTemp(path string, hdr, data []byte) error {
	fd, err := createFile(path)
	if err != nil {
		return fmt.Errorf("create block file: %w", err)
	}
	err = pwriteAll(fd, hdr, 0)
	if err == nil && len(data) > 0 {
		err = pwriteAll(fd, data, int64(len(hdr)))
	}
	if cerr := syscall.Close(fd); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("write block file %s: %w", path, err)
	}
	return nil
}

// removeVictims deletes block files and packs, counting them in n.
func (d *diskStore) removeVictims(v diskVictims, n *atomic.Uint64) {
	for _, dk := range v.keys {
		d.removeFile(d.path(dk), n)
	}
	for _, p := range v.packs {
		d.removeFile(d.packPath(p), n)
	}
	for _, r := range v.records {
		d.clearRecord(r)
	}
}

func (d *diskStore) removeFile(path string, n *atomic.Uint64) {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		d.errs.Add(1)
		d.log.Warn("disk cache: remove failed", "err", err)
		return
	}
	n.Add(1)
}

// dropID deletes the known block files of a content id and cancels its
// queued writes.
func (d *diskStore) dropID(id string) {
	d.mu.Lock()
	victims := d.index.takeID(id)
	for _, w := range d.pending {
		if w.key.id == id {
			w.cancelled = true
		}
	}
	d.mu.Unlock()
	var removed atomic.Uint64
	d.removeVictims(victims, &removed)
}

// close finishes the queued writes and stops the writer and the scan.
func (d *diskStore) close() {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return
	}
	d.closed = true
	close(d.queue)
	d.mu.Unlock()
	close(d.stopScan)
	<-d.writerDone
	<-d.scanDone
	d.packMu.Lock()
	d.sealPack()
	d.packMu.Unlock()
}

// diskStats are the disk cache's counters and size.
type diskStats struct {
	lookups, hits, writes, evictions, errs, drops uint64
	bytes                                         int64
	blocks                                        int
}

func (d *diskStore) stats() diskStats {
	d.mu.Lock()
	bytes, blocks := d.index.bytes, d.index.len()
	d.mu.Unlock()
	// Hits first: a hit counted by then had its lookup counted before,
	// so hits never exceed lookups, even while reads run.
	hits := d.hits.Load()
	return diskStats{
		lookups: d.lookups.Load(), hits: hits, writes: d.writes.Load(), evictions: d.evictions.Load(),
		errs: d.errs.Load(), drops: d.drops.Load(), bytes: bytes, blocks: blocks,
	}
}
