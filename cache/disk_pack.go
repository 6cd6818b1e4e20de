package cache

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// Pack files hold the blocks shorter than the block size (small files, and
// the last block of larger ones) many to a file. Creating a file costs more
// than the rest of a small file's read (350 to 1,000 µs of CPU on ext4,
// measured for issue 42), and grep -r of 20,000 small files made 20,000 of
// them; a record appended to an open pack costs one write.
//
// A pack is a run of records, each exactly a block file's bytes (header,
// then data, disk_format.go), so each is checked as a block file is. When
// it reaches packTarget bytes, or the store closes, it is sealed: a table
// of its records and a trailer are appended, and the startup reads only
// those. A pack left unsealed (rsfs was killed) is read record by record
// up to its first bad one.
//
//	table    N × (32-byte disk key, 8-byte offset, 4-byte record length)
//	trailer  4-byte N, 4-byte CRC-32C of the table, 8-byte magic "RSFPACK1"
//
// (integers little-endian). Packs are evicted whole: the least recently
// used record of one takes its pack with it; records of a dropped content
// stay in their pack, unreachable, until the pack goes.
const (
	packMagic      = "RSFPACK1"
	packTrailerLen = 16
	packTableEntry = 32 + 8 + 4
	packTarget     = 8 << 20  // a pack is sealed once it holds this much (at most 1/64 of the bound)
	packRecordMax  = 64 << 10 // larger records are block files of their own
	packsDirName   = "packs"
	packSuffix     = ".pack"
	// packTouchEvery bounds how often a hit sets its pack's modification
	// time (the recency a restart sees).
	packTouchEvery = 10 * time.Second
)

// packFile is one pack. Its fields are guarded by diskStore.mu.
type packFile struct {
	name      string       // file name under the packs directory
	size      int64        // bytes on disk
	members   []*diskEntry // its records the index held, in order (those it holds: diskIndex.live)
	live      int          // records the index holds
	sealed    bool
	gone      bool // evicted or emptied: its file is (being) removed
	lastTouch time.Time
}

// packRecord is a record's place in its pack.
type packRecord struct {
	key  diskKey
	off  int64
	size int64
}

// packWriter is the pack being appended to. Guarded by diskStore.packMu
// (appends are the writers' only; reads never wait on it).
type packWriter struct {
	p    *packFile
	fd   int
	size int64
	recs []packRecord
}

// packable reports whether block data of a block of blockSize goes into a
// pack: a short block whose record is small.
func packable(k blockKey, blockSize int, data []byte) bool {
	return len(data) < blockSize && blockFileFixed+len(k.id)+len(data) <= packRecordMax
}

// packTarget is the size at which a pack is sealed: packTarget, or a 64th
// of the bound if that is less, so eviction, which takes packs whole,
// stays fine-grained in a small cache.
func (d *diskStore) packTarget() int64 { return min(packTarget, d.maxBytes/64) }

func (d *diskStore) packsDir() string { return filepath.Join(d.dir, packsDirName) }

func (d *diskStore) packPath(p *packFile) string { return filepath.Join(d.packsDir(), p.name) }

// writePacked appends block w (data) to the open pack, indexes it unless
// its write was cancelled, and seals the pack once it is full.
func (d *diskStore) writePacked(w *diskWrite, data []byte) error {
	buf := fileBufs.Get().(*[]byte)
	defer fileBufs.Put(buf)
	rec := append(appendBlockFileHeader((*buf)[:0], w.key, d.blockSize, data), data...)
	*buf = rec
	d.packMu.Lock()
	defer d.packMu.Unlock()
	pw, err := d.openPack()
	if err != nil {
		return err
	}
	off := pw.size
	if err := pwriteAll(pw.fd, rec, off); err != nil {
		d.abandonPack(pw)
		return fmt.Errorf("write pack %s: %w", pw.p.name, err)
	}
	pw.size += int64(len(rec))
	pw.recs = append(pw.recs, packRecord{w.dk, off, int64(len(rec))})
	d.mu.Lock()
	oldFile := d.index.addPacked(w.dk, w.key, int64(len(rec)), pw.p, off, !w.cancelled)
	victims := d.index.takeOldest(d.maxBytes, d.pinnedLocked)
	d.mu.Unlock()
	if !w.cancelled {
		d.writes.Add(1)
	}
	if oldFile {
		os.Remove(d.path(w.dk)) // superseded
	}
	if pw.size >= d.packTarget() {
		d.sealPack()
	}
	d.removeVictims(victims, &d.evictions)
	return nil
}

// openPack returns the pack being appended to, creating one if there is
// none or it was evicted. Called with packMu held.
func (d *diskStore) openPack() (*packWriter, error) {
	if pw := d.packW; pw != nil {
		d.mu.Lock()
		gone := pw.p.gone
		d.mu.Unlock()
		if !gone {
			return pw, nil
		}
		syscall.Close(pw.fd)
		d.packW = nil
	}
	d.packSeq++
	p := &packFile{name: fmt.Sprintf("%d-%04d-%s%s", time.Now().UnixNano(), d.packSeq, d.nonce, packSuffix)}
	fd, err := createFile(d.packPath(p))
	if err != nil {
		return nil, fmt.Errorf("create pack: %w", err)
	}
	d.mu.Lock()
	d.index.addPack(p)
	d.mu.Unlock()
	d.packW = &packWriter{p: p, fd: fd}
	return d.packW, nil
}

// sealPack appends the table and trailer to the open pack and closes it.
// Called with packMu held.
func (d *diskStore) sealPack() {
	pw := d.packW
	if pw == nil {
		return
	}
	d.packW = nil
	tail := packTail(pw.recs)
	err := pwriteAll(pw.fd, tail, pw.size)
	if cerr := syscall.Close(pw.fd); err == nil {
		err = cerr
	}
	if err != nil {
		d.errs.Add(1)
		d.log.Warn("disk cache: sealing a pack failed; it is read record by record next time", "pack", pw.p.name, "err", err)
	}
	var victims diskVictims
	d.mu.Lock()
	if err == nil && d.index.sealPack(pw.p, int64(len(tail))) {
		victims.packs = append(victims.packs, pw.p) // emptied while it was open
	}
	victims.add(d.index.takeOldest(d.maxBytes, d.pinnedLocked)) // the table's bytes count too
	d.mu.Unlock()
	d.removeVictims(victims, &d.evictions)
}

// abandonPack stops appending to a pack whose write failed; its records so
// far stay readable. Called with packMu held.
func (d *diskStore) abandonPack(pw *packWriter) {
	syscall.Close(pw.fd)
	d.packW = nil
}

// clearRecord clears the magic of a dropped content's record in a pack
// that stays, so that no later start serves it again (the same block may
// be written anew, with other bytes, after a hash mismatch). A pack gone
// meanwhile needs nothing.
func (d *diskStore) clearRecord(r droppedRecord) {
	d.mu.Lock()
	gone := r.pack.gone
	d.mu.Unlock()
	if gone {
		return
	}
	fd, err := openFile(d.packPath(r.pack), syscall.O_WRONLY)
	if err == nil {
		err = pwriteAll(fd, make([]byte, len(blockFileMagic)), r.off)
		if cerr := syscall.Close(fd); err == nil {
			err = cerr
		}
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		d.errs.Add(1)
		d.log.Warn("disk cache: clearing a dropped record failed", "pack", r.pack.name, "offset", r.off, "err", err)
	}
}

// clearedRecord reports whether rec is a record clearRecord cleared.
func clearedRecord(rec []byte) bool {
	return len(rec) >= len(blockFileMagic) && string(rec[:len(blockFileMagic)]) == "\x00\x00\x00\x00"
}

// packTail is the table and trailer of a pack's records.
func packTail(recs []packRecord) []byte {
	b := make([]byte, 0, len(recs)*packTableEntry+packTrailerLen)
	for _, r := range recs {
		b = append(b, r.key[:]...)
		b = binary.LittleEndian.AppendUint64(b, uint64(r.off))
		b = binary.LittleEndian.AppendUint32(b, uint32(r.size))
	}
	sum := crc32.Checksum(b, castagnoli)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(recs)))
	b = binary.LittleEndian.AppendUint32(b, sum)
	return append(b, packMagic...)
}

// readPackRecord reads one record of a pack.
func readPackRecord(path string, off, size int64) ([]byte, error) {
	fd, err := openFile(path, syscall.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	buf := make([]byte, size)
	if err := preadFull(fd, buf, off); err != nil {
		return nil, fmt.Errorf("read pack record: %w", err)
	}
	return buf, nil
}

// loadPacks indexes the packs left by earlier runs, newest first as the
// block files' scan does. Reads wait for it (a pack's table is one read),
// so a remount finds its small files from its first read.
func (d *diskStore) loadPacks() {
	entries, err := os.ReadDir(d.packsDir())
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	if err != nil {
		d.errs.Add(1)
		d.log.Warn("disk cache: reading packs failed", "dir", d.packsDir(), "err", err)
		return
	}
	type found struct {
		p       *packFile
		recs    []packRecord
		lastUse time.Time
	}
	var packs []found
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, packSuffix) || strings.HasSuffix(name, "-"+d.nonce+packSuffix) {
			continue // not a pack, or one this run's writer made: it is indexed already
		}
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		p := &packFile{name: name, size: info.Size(), sealed: true}
		recs, sealed, err := d.packRecords(d.packPath(p), info.Size())
		if err != nil {
			d.errs.Add(1)
			d.log.Warn("disk cache: discarding pack", "pack", name, "err", err)
			os.Remove(d.packPath(p))
			continue
		}
		if !sealed {
			d.log.Info("disk cache: pack was not sealed (rsfs stopped before); its intact records are kept", "pack", name, "records", len(recs))
		}
		packs = append(packs, found{p, recs, info.ModTime()})
	}
	// Newest first: each record goes in as the least recent.
	slices.SortFunc(packs, func(a, b found) int { return b.lastUse.Compare(a.lastUse) })
	var empty []*packFile
	d.mu.Lock()
	for _, f := range packs {
		d.index.addPack(f.p)
		for i := len(f.recs) - 1; i >= 0; i-- { // newest first
			r := f.recs[i]
			d.index.addScannedPacked(r.key, r.size, f.p, r.off)
		}
		if f.p.live == 0 {
			empty = append(empty, f.p)
			d.index.dropPack(f.p)
		}
	}
	d.mu.Unlock()
	var removed atomic.Uint64
	d.removeVictims(diskVictims{packs: empty}, &removed)
}

// packRecords returns a pack's records: from its table if it is sealed,
// else by reading it record by record up to the first that is not intact.
func (d *diskStore) packRecords(path string, size int64) ([]packRecord, bool, error) {
	fd, err := openFile(path, syscall.O_RDONLY)
	if err != nil {
		return nil, false, err
	}
	defer syscall.Close(fd)
	if recs, ok := readPackTable(fd, size); ok {
		return recs, true, nil
	}
	recs, err := d.walkPack(fd, size)
	return recs, false, err
}

// readPackTable reads a sealed pack's table; false if it has none intact.
func readPackTable(fd int, size int64) ([]packRecord, bool) {
	if size < packTrailerLen {
		return nil, false
	}
	var tr [packTrailerLen]byte
	if preadFull(fd, tr[:], size-packTrailerLen) != nil || string(tr[8:]) != packMagic {
		return nil, false
	}
	n := int64(binary.LittleEndian.Uint32(tr[0:]))
	tableLen := n * packTableEntry
	if tableLen > size-packTrailerLen {
		return nil, false
	}
	table := make([]byte, tableLen)
	if preadFull(fd, table, size-packTrailerLen-tableLen) != nil ||
		crc32.Checksum(table, castagnoli) != binary.LittleEndian.Uint32(tr[4:]) {
		return nil, false
	}
	recs := make([]packRecord, n)
	for i := range recs {
		e := table[int64(i)*packTableEntry:]
		copy(recs[i].key[:], e[:32])
		recs[i].off = int64(binary.LittleEndian.Uint64(e[32:]))
		recs[i].size = int64(binary.LittleEndian.Uint32(e[40:]))
		if recs[i].off < 0 || recs[i].size <= 0 || recs[i].off+recs[i].size > size-packTrailerLen-tableLen {
			return nil, false
		}
	}
	return recs, true
}

// walkPack reads an unsealed pack's records in order, up to the first one
// that is not an intact block record (a write cut short).
func (d *diskStore) walkPack(fd int, size int64) ([]packRecord, error) {
	var recs []packRecord
	hdr := make([]byte, 16)
	for off := int64(0); off+blockFileFixed <= size; {
		if preadFull(fd, hdr, off) != nil || (string(hdr[:4]) != blockFileMagic && !clearedRecord(hdr)) {
			break
		}
		idLen := int64(binary.LittleEndian.Uint32(hdr[12:]))
		if idLen > maxDiskIDLen || off+blockFileFixed+idLen > size {
			break
		}
		head := make([]byte, 16+idLen+16)
		if preadFull(fd, head, off) != nil {
			break
		}
		n := int64(binary.LittleEndian.Uint32(head[16+idLen+8:]))
		recLen := blockFileFixed + idLen + n
		if n > packRecordMax || off+recLen > size {
			break
		}
		rec := make([]byte, recLen)
		if preadFull(fd, rec, off) != nil {
			break
		}
		cleared := clearedRecord(rec)
		copy(rec, blockFileMagic) // a cleared record is checked whole too, then passed over
		id := string(rec[16 : 16+idLen])
		k := blockKey{id, int64(binary.LittleEndian.Uint64(rec[16+idLen:]))}
		bs := int(binary.LittleEndian.Uint32(rec[8:]))
		if _, err := decodeBlockFile(k, bs, rec); err != nil {
			break
		}
		if !cleared {
			recs = append(recs, packRecord{diskKeyOf(k, bs), off, recLen})
		}
		off += recLen
	}
	return recs, nil
}
