package catalog

import "strconv"

// uriOf rebuilds a record's URI.
func (c *Catalog) uriOf(f *fileRec) string {
	suffix, _ := c.arena.prefixed(f.suffix)
	return c.prefixes[f.prefix] + suffix
}

// uriEquals compares a record's URI with uri without building it.
func (c *Catalog) uriEquals(f *fileRec, uri string) bool {
	p := c.prefixes[f.prefix]
	if len(uri) < len(p) || uri[:len(p)] != p {
		return false
	}
	suffix, _ := c.arena.prefixed(f.suffix)
	return uri[len(p):] == suffix
}

// rawHash is the URI hash of a file: its inode number unless that had to
// differ.
func (c *Catalog) rawHash(id NodeID) uint64 {
	f := c.files.at(id)
	if f.flags&flagInoNotRaw != 0 {
		return uriHash(c.uriOf(f))
	}
	return f.ino
}

func (c *Catalog) findURI(h uint64, uri string) (NodeID, bool) {
	var found NodeID
	c.uris.each(h, func(id NodeID) bool {
		if c.uriEquals(c.files.at(id), uri) {
			found = id
			return false
		}
		return true
	})
	return found, found != 0
}

// findOrShared is findURI for Add: in the same pass it reports whether
// another file has the same URI hash.
func (c *Catalog) findOrShared(h uint64, uri string) (found NodeID, shared bool) {
	c.uris.each(h, func(id NodeID) bool {
		if c.uriEquals(c.files.at(id), uri) {
			found = id
			return false
		}
		shared = shared || c.rawHash(id) == h
		return true
	})
	return found, shared
}

// markHashShared flags the files whose URI hash is h, so Seal settles their
// inodes.
func (c *Catalog) markHashShared(h uint64) {
	c.uris.each(h, func(other NodeID) bool {
		if c.rawHash(other) == h {
			c.files.at(other).flags |= flagHashShared
		}
		return true
	})
}

// indexURI adds a new file to the index.
func (c *Catalog) indexURI(h uint64, id NodeID) { c.uris.insert(h, id) }

func (c *Catalog) unindexURI(h uint64, id NodeID) { c.uris.remove(h, id) }

// ByURI returns the live resource with this URI.
func (c *Catalog) ByURI(uri string) (NodeID, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.findURI(uriHash(uri), uri)
}

// inoTaken reports whether an inode number is in use (or reserved).
func (c *Catalog) inoTaken(ino uint64) bool {
	if ino <= 1 {
		return true
	}
	if _, ok := c.altIno[ino]; ok {
		return true
	}
	taken := false
	c.uris.each(ino, func(id NodeID) bool {
		f := c.files.at(id)
		taken = f.flags&flagInoNotRaw == 0 && f.ino == ino
		return !taken
	})
	return taken
}

// freeIno returns the first free inode among hash(key), hash(key+"\x00"+"1"), …
func (c *Catalog) freeIno(key string) uint64 {
	for k := 0; ; k++ {
		cand := key
		if k > 0 {
			cand = key + "\x00" + strconv.Itoa(k)
		}
		if ino := uriHash(cand); !c.inoTaken(ino) {
			return ino
		}
	}
}

// setAltIno gives a file an inode other than (or not known to be) its URI
// hash.
func (c *Catalog) setAltIno(id NodeID, f *fileRec, ino uint64) {
	f.flags |= flagInoNotRaw
	f.ino = ino
	c.altIno[ino] = id
}

// newFileIno gives a file created after Seal its inode: its URI hash when
// free, else the next free candidate.
func (c *Catalog) newFileIno(id NodeID, f *fileRec, uri string, h uint64) {
	f.flags |= flagInoNotRaw // not a candidate for inoTaken while we look
	if !c.inoTaken(h) {
		f.flags &^= flagInoNotRaw
		f.ino = h
		return
	}
	c.setAltIno(id, f, c.freeIno(uri))
}

// dirInoKey is the key a directory's inode number is derived from.
func dirInoKey(path string) string { return "\x00dir\x00" + path }
