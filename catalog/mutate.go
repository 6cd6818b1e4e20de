package catalog

import "slices"

// EffectKind says what changed at one name.
type EffectKind uint8

const (
	// EntryAdded: a new name in Parent (a file, or a directory created for it).
	EntryAdded EffectKind = iota + 1
	// EntryRemoved: the name is gone from Parent.
	EntryRemoved
	// ContentChanged: the file has a new version (size, mtime, hash, type or
	// links); its cached content and attributes are stale.
	ContentChanged
)

func (k EffectKind) String() string {
	switch k {
	case EntryAdded:
		return "added"
	case EntryRemoved:
		return "removed"
	case ContentChanged:
		return "changed"
	}
	return "EffectKind(?)"
}

// Effect is one thing the filesystem must tell the kernel after a change.
type Effect struct {
	Kind   EffectKind
	Parent NodeID
	Name   string
	ID     NodeID
	Ino    uint64
	// Old is the file's version before the change, for ContentChanged
	// when the version's Gen changed and for a file's EntryRemoved: the
	// kernel may hold that version open after the catalog has moved on.
	Old *FileVersion
}

// Upsert creates or updates a resource after Seal and returns the effects,
// in order: for a new resource, EntryAdded for each directory created (top
// down) and then for the file; for a new version, ContentChanged; nothing if
// nothing changed. Existing paths never move (mapping.go, rule 7). Before
// Seal it is Add, with no effects.
//
// A resource that would pass a capacity limit is left out (the catalog is
// unchanged); TryUpsert says so.
func (c *Catalog) Upsert(r *Resource) []Effect {
	effects, _ := c.TryUpsert(r)
	return effects
}

// TryUpsert is Upsert that returns an error wrapping ErrFull when r would
// pass a capacity limit; the catalog is then unchanged.
func (c *Catalog) TryUpsert(r *Resource) ([]Effect, error) {
	return c.put(r, true)
}

// upsertLocked stores a after Seal; id is its URI's record, 0 if none.
func (c *Catalog) upsertLocked(a *addition, id NodeID) []Effect {
	r, h := a.r, a.h
	if id != 0 {
		f := c.files.at(id)
		var old *FileVersion
		if c.genOf(f) != versionGen(r.Length, timeNanos(r.Lastmod), a.blob) {
			v := c.versionOf(id, f)
			old = &v
		}
		if !c.setVersion(id, a) {
			return nil
		}
		c.raiseMtime(f.parent, f.mtime)
		return []Effect{{Kind: ContentChanged, Parent: dirID(f.parent), Name: c.fileName(f), ID: id, Ino: f.ino, Old: old}}
	}
	id = c.newFile(a)
	f := c.files.at(id)
	effects := c.placeNewFile(id, f)
	c.newFileIno(id, f, r.URI, h)
	c.raiseMtime(f.parent, f.mtime)
	return append(effects, Effect{Kind: EntryAdded, Parent: dirID(f.parent), Name: c.fileName(f), ID: id, Ino: f.ino})
}

// placeNewFile puts a file created after Seal into the tree without moving
// anything already there, and returns the effects of directories it created.
func (c *Catalog) placeNewFile(id NodeID, f *fileRec) []Effect {
	suffix, sufOff := c.arena.prefixed(f.suffix)
	var segs []string
	var name string
	if isDotSegment(suffix) {
		all := MapURI(c.origin, c.uriOf(f))
		segs, name = all[:len(all)-1], all[len(all)-1]
	} else {
		segs, name = dirSegments(c.origin, c.prefixes[f.prefix]), fileName(suffix)
	}
	dir, effects := c.liveDirPath(segs)
	for {
		child, ok := c.dirIndex[dirKey{dir, name}]
		if !ok {
			break
		}
		dir, name = child, IndexName
	}
	if _, taken := c.childIndex(&c.dirs[dir], name); taken {
		uri := c.uriOf(f)
		for k := 0; ; k++ {
			cand := suffixName(name, uri, k)
			if _, taken := c.childIndex(&c.dirs[dir], cand); !taken {
				name = cand
				break
			}
		}
		c.renamed++
	}
	f.parent = dir
	c.setName(f, name, suffix, sufOff)
	c.insertChild(dir, id)
	return effects
}

// liveDirPath finds or creates the directories of a path after Seal. A name
// held by a file gets a suffixed directory name instead (the file stays).
func (c *Catalog) liveDirPath(segs []string) (uint32, []Effect) {
	var effects []Effect
	d := uint32(0)
	for _, seg := range segs {
		name := seg
		for k := 0; ; k++ {
			if child, ok := c.dirIndex[dirKey{d, name}]; ok {
				d = child
				break
			}
			if _, taken := c.childIndex(&c.dirs[d], name); !taken {
				child := c.createDir(d, name)
				c.insertChild(d, dirID(child))
				path := c.pathOf(dirID(child))
				ino := c.freeIno(dirInoKey(path))
				c.dirs[child].ino = ino
				c.altIno[ino] = dirID(child)
				effects = append(effects, Effect{Kind: EntryAdded, Parent: dirID(d), Name: c.nameOf(dirID(child)), ID: dirID(child), Ino: ino})
				d = child
				break
			}
			name = suffixName(seg, seg, k)
		}
	}
	return d, effects
}

// insertChild puts id into d's sorted child list.
func (c *Catalog) insertChild(d uint32, id NodeID) {
	dir := &c.dirs[d]
	i, _ := c.childIndex(dir, c.nameOf(id))
	dir.children = slices.Insert(dir.children, i, id)
}

// removeChild takes id out of d's child list.
func (c *Catalog) removeChild(d uint32, id NodeID) {
	dir := &c.dirs[d]
	if i, ok := c.childIndex(dir, c.nameOf(id)); ok && dir.children[i] == id {
		dir.children = slices.Delete(dir.children, i, i+1)
	}
}

// raiseMtime carries a new mtime up to the root.
func (c *Catalog) raiseMtime(d uint32, mtime int64) {
	for {
		if mtime > c.dirs[d].mtime {
			c.dirs[d].mtime = mtime
		}
		if d == 0 {
			return
		}
		d = c.dirs[d].parent
	}
}

// Remove deletes a resource and the directories it leaves empty, returning
// EntryRemoved for the file and then for each directory (bottom up). Nothing
// if the URI is unknown. Before Seal it only forgets the resource.
// Directory mtimes keep the newest mtime seen below them.
func (c *Catalog) Remove(uri string) []Effect {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := uriHash(uri)
	id, ok := c.findURI(h, uri)
	if !ok {
		return nil
	}
	f := c.files.at(id)
	var old *FileVersion
	if c.sealed {
		v := c.versionOf(id, f)
		old = &v
	}
	c.unindexURI(h, id)
	if c.altIno[f.ino] == id {
		delete(c.altIno, f.ino)
	}
	if f.links != 0 {
		c.withLinks--
		f.links = 0
	}
	delete(c.props, id)
	delete(c.typeOverflow, id)
	c.live--
	c.liveBytes -= max(f.size, 0)
	if !c.sealed {
		f.flags |= flagDeleted
		return nil
	}
	c.removeChild(f.parent, id)
	f.flags |= flagDeleted
	effects := []Effect{{Kind: EntryRemoved, Parent: dirID(f.parent), Name: c.fileName(f), ID: id, Ino: f.ino, Old: old}}
	for d := f.parent; d != 0 && len(c.dirs[d].children) == 0; d = c.dirs[d].parent {
		effects = append(effects, c.removeDir(d))
	}
	return effects
}

// removeDir deletes an empty directory.
func (c *Catalog) removeDir(d uint32) Effect {
	dir := &c.dirs[d]
	id := dirID(d)
	name := c.nameOf(id)
	c.removeChild(dir.parent, id)
	c.dirs[dir.parent].subdirs--
	delete(c.dirIndex, dirKey{dir.parent, name})
	if c.altIno[dir.ino] == id {
		delete(c.altIno, dir.ino)
	}
	dir.deleted = true
	dir.children = nil
	return Effect{Kind: EntryRemoved, Parent: dirID(dir.parent), Name: name, ID: id, Ino: dir.ino}
}
