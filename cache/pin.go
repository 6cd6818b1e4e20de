package cache

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"rsfs/atomicfile"
)

// Pins keep the blocks `rsfs warm` filled ahead of ordinary LRU eviction:
// the disk cache passes over a pinned block file while it can evict
// others, and takes it only when the others are not enough to stay within
// DiskMaxBytes. The pinned blocks are listed (their file names) in the
// file "pins" beside the blocks directory, rewritten whole on each change,
// so pins survive a remount.

const pinsFile = "pins"

// pinsPath is where the store keeps its pins.
func (d *diskStore) pinsPath() string { return filepath.Join(filepath.Dir(d.dir), pinsFile) }

// pinnedLocked reports whether dk is pinned. d.mu must be held.
func (d *diskStore) pinnedLocked(dk diskKey) bool { return d.pins[dk] }

// loadPins reads the pins file, if there is one.
func (d *diskStore) loadPins() error {
	f, err := os.Open(d.pinsPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	pins := make(map[diskKey]bool)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var dk diskKey
		if b, err := hex.DecodeString(sc.Text()); err == nil && len(b) == len(dk) {
			copy(dk[:], b)
			pins[dk] = true
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read %s: %w", d.pinsPath(), err)
	}
	d.mu.Lock()
	d.pins = pins
	d.mu.Unlock()
	return nil
}

// savePins rewrites the pins file.
func (d *diskStore) savePins() error {
	d.mu.Lock()
	keys := make([]diskKey, 0, len(d.pins))
	for dk := range d.pins {
		keys = append(keys, dk)
	}
	d.mu.Unlock()
	return atomicfile.Write(d.pinsPath(), func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		for _, dk := range keys {
			fmt.Fprintln(bw, hex.EncodeToString(dk[:]))
		}
		return bw.Flush()
	})
}

// blockKeys are the disk keys of every block of ct.
func (c *Cache) blockKeys(ct Content) []diskKey {
	bs := int64(c.blockSize)
	var keys []diskKey
	for b := int64(0); b*bs < ct.Size; b++ {
		keys = append(keys, c.disk.key(blockKey{ct.ID, b}))
	}
	return keys
}

// Pin keeps the blocks of contents ahead of ordinary eviction from the
// disk cache, from now and across remounts, until Unpin. It returns the
// error of saving the pins (they hold for this mount anyway).
func (c *Cache) Pin(contents []Content) error {
	return c.setPins(contents, true)
}

// Unpin ends the pins of contents: their blocks age out as any others.
func (c *Cache) Unpin(contents []Content) error {
	return c.setPins(contents, false)
}

func (c *Cache) setPins(contents []Content, pin bool) error {
	if c.disk == nil {
		return ErrNoDisk
	}
	var keys []diskKey
	for _, ct := range contents {
		keys = append(keys, c.blockKeys(ct)...)
	}
	d := c.disk
	d.mu.Lock()
	if d.pins == nil {
		d.pins = make(map[diskKey]bool)
	}
	changed := false
	for _, dk := range keys {
		if d.pins[dk] != pin {
			changed = true
			if pin {
				d.pins[dk] = true
			} else {
				delete(d.pins, dk)
			}
		}
	}
	d.mu.Unlock()
	if !changed {
		return nil
	}
	return d.savePins()
}

// Pinned reports whether every block of ct is pinned.
func (c *Cache) Pinned(ct Content) bool {
	if c.disk == nil || ct.Size <= 0 {
		return false
	}
	keys := c.blockKeys(ct)
	c.disk.mu.Lock()
	defer c.disk.mu.Unlock()
	for _, dk := range keys {
		if !c.disk.pins[dk] {
			return false
		}
	}
	return true
}
