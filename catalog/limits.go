package catalog

import (
	"errors"
	"fmt"
	"strings"
)

// ErrFull is returned (wrapped) when a resource would pass one of the
// catalog's capacity limits: 4 GiB of names, URIs and hashes (offsets are 32
// bits), 2^31 file records, 2^32 URI index slots. The catalog is unchanged.
var ErrFull = errors.New("catalog full")

// Limits lower the catalog's capacity, so that tests can reach it. Zero
// fields, and values above the product limits, mean the product limits.
type Limits struct {
	ArenaBytes int64 // names, URIs and hashes
	Records    int   // file records
	IndexBits  int   // log2 of the URI index's slots
}

const (
	maxRecords   = int64(dirBit) - 1 // NodeIDs below dirBit; 0 is unused
	maxIndexBits = 32
	maxDirs      = int64(dirBit) - 1
)

func (l Limits) arenaBytes() uint64 {
	if l.ArenaBytes <= 0 || uint64(l.ArenaBytes) > arenaMaxSize {
		return arenaMaxSize
	}
	return uint64(l.ArenaBytes)
}

func (l Limits) records() NodeID {
	if l.Records <= 0 || int64(l.Records) > maxRecords {
		return NodeID(maxRecords)
	}
	return NodeID(l.Records)
}

func (l Limits) indexBits() int {
	if l.IndexBits < minTableBits || l.IndexBits > maxIndexBits {
		return maxIndexBits
	}
	return l.IndexBits
}

// room checks, before anything changes, that r can be stored: a new file
// needs a record, an index slot and arena room for its URI (and, after Seal,
// for its name and the directories it may create); any version needs arena
// room for its hashes.
func (c *Catalog) room(a *addition, exists bool) error {
	r, blob := a.r, a.blob
	if exists {
		if !c.arena.fits(len(blob), len(a.links)) {
			return c.fullf("%d bytes of names, URIs and hashes", c.arena.limit())
		}
		return nil
	}
	if c.files.next >= c.lim.records() {
		return c.fullf("%d resources", c.lim.records()-1)
	}
	if !c.uris.canInsert(c.lim.indexBits()) {
		return c.fullf("a URI index of 2^%d slots", c.lim.indexBits())
	}
	var room [8]int
	sizes := append(room[:0], len(a.suffix)+10, len(blob), len(a.links))
	if _, ok := c.prefixIndex[a.prefix]; !ok {
		sizes = append(sizes, len(a.prefix))
	}
	if c.sealed {
		// At most one new directory per segment and a name, each at most
		// NameMax plus a collision suffix.
		segs := strings.Count(r.URI, "/") + 2
		if int64(len(c.dirs))+int64(segs) > maxDirs {
			return c.fullf("%d directories", maxDirs)
		}
		for range segs + 1 {
			sizes = append(sizes, NameMax+digestSuffixLen)
		}
	}
	if !c.arena.fits(sizes...) {
		return c.fullf("%d bytes of names, URIs and hashes", c.arena.limit())
	}
	return nil
}

func (c *Catalog) fullf(format string, args ...any) error {
	return fmt.Errorf("%w: it holds %d resources and would pass its limit of %s", ErrFull, c.live, fmt.Sprintf(format, args...))
}
