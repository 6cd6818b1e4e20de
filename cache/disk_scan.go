package cache

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// scannedFile is a block file found by the startup scan.
type scannedFile struct {
	key     diskKey
	size    int64
	lastUse time.Time
}

// scan indexes the packs left by earlier runs (their tables), then the
// block files (one stat each), least recently used last, removes temporary files that no running write owns,
// and evicts down to the bound. Reads do not wait for it: they look files
// up by path.
func (d *diskStore) scan() {
	defer func() {
		d.mu.Lock()
		d.index.forgotten = nil // the scan added what it found, or stopped
		d.mu.Unlock()
		close(d.scanDone)
	}()
	start := time.Now()
	d.loadPacks()
	close(d.packsDone)
	subdirs, err := os.ReadDir(d.dir)
	if err != nil {
		d.errs.Add(1)
		d.log.Warn("disk cache: scan failed", "dir", d.dir, "err", err)
		return
	}
	var found []scannedFile
	for _, sub := range subdirs {
		select {
		case <-d.stopScan:
			return
		default:
		}
		if sub.IsDir() && sub.Name() != packsDirName {
			found = d.scanDir(filepath.Join(d.dir, sub.Name()), found)
		}
	}
	// Newest first: addScanned appends each one as the least recent.
	slices.SortFunc(found, func(a, b scannedFile) int { return b.lastUse.Compare(a.lastUse) })
	d.mu.Lock()
	for _, f := range found {
		d.index.addScanned(f.key, f.size)
	}
	d.scanned = true
	victims := d.index.takeOldest(d.maxBytes, d.pinnedLocked)
	bytes := d.index.bytes
	d.mu.Unlock()
	d.removeVictims(victims, &d.evictions)
	d.log.Info("disk cache indexed", "dir", d.dir, "files", len(found), "bytes", bytes,
		"evicted", len(victims.keys)+len(victims.packs), "temp_removed", d.cleaned.Load(), "took", time.Since(start).Round(time.Millisecond))
}

// scanDir appends the block files of one directory to found.
func (d *diskStore) scanDir(dir string, found []scannedFile) []scannedFile {
	entries, err := os.ReadDir(dir)
	if err != nil {
		d.errs.Add(1)
		d.log.Warn("disk cache: scan failed", "dir", dir, "err", err)
		return found
	}
	for _, e := range entries {
		name := e.Name()
		if i := strings.Index(name, tempMarker); i >= 0 {
			if name[i+len(tempMarker):] != d.nonce && os.Remove(filepath.Join(dir, name)) == nil {
				d.cleaned.Add(1)
			}
			continue
		}
		dk, ok := parseDiskKey(name)
		if !ok || name[:2] != filepath.Base(dir) {
			continue
		}
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		found = append(found, scannedFile{key: dk, size: info.Size(), lastUse: info.ModTime()})
	}
	return found
}
