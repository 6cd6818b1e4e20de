package catalog

import (
	"slices"
	"strings"
)

// Seal finishes loading: it maps every resource to its path (rules in
// mapping.go), builds the directories and assigns inode numbers. Before Seal
// the root is empty; after it the tree is queryable. Calling it again does
// nothing. An error (wrapping ErrFull: the directories and names would pass
// a capacity limit) leaves the catalog unusable.
func (c *Catalog) Seal() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sealed {
		return nil
	}
	c.prefixDir = make([]uint32, len(c.prefixes))
	for i, p := range c.prefixes {
		d, err := c.sealDirPath(dirSegments(c.origin, p))
		if err != nil {
			return err
		}
		c.prefixDir[i] = d
	}
	if err := c.sealNames(); err != nil {
		return err
	}
	c.sealFileOverDir()
	if err := c.sealChildren(); err != nil {
		return err
	}
	c.sealFileInos()
	c.sealDirInos()
	c.sealMtimes()
	c.prefixDir = nil
	// The prefix index is only for sharing prefixes among many resources
	// while loading; after Seal, new resources share among themselves only.
	c.prefixIndex = make(map[string]uint32)
	c.sealed = true
	return nil
}

// sealRoom checks, while sealing, that a name of n bytes can be stored and
// (dir) a directory made.
func (c *Catalog) sealRoom(n int, dir bool) error {
	if dir && int64(len(c.dirs)) >= maxDirs {
		return c.fullf("%d directories", maxDirs)
	}
	if !c.arena.fits(n) {
		return c.fullf("%d bytes of names, URIs and hashes", c.arena.limit())
	}
	return nil
}

// sealDirPath finds or creates the directories of a path while sealing.
func (c *Catalog) sealDirPath(segs []string) (uint32, error) {
	d := uint32(0)
	for _, name := range segs {
		child, ok := c.dirIndex[dirKey{d, name}]
		if !ok {
			if err := c.sealRoom(len(name), true); err != nil {
				return 0, err
			}
			child = c.createDir(d, name)
			c.dirs[d].children = append(c.dirs[d].children, dirID(child))
		}
		d = child
	}
	return d, nil
}

// createDir adds a directory under parent (which must not hold name); the
// caller puts it in the parent's child list.
func (c *Catalog) createDir(parent uint32, name string) uint32 {
	off := c.arena.addString(name)
	i := uint32(len(c.dirs))
	c.dirs = append(c.dirs, dirRec{parent: parent, nameOff: off, nameLen: uint8(len(name)), mtime: noTime})
	c.dirIndex[dirKey{parent, c.arena.str(off, len(name))}] = i
	c.dirs[parent].subdirs++
	return i
}

// sealNames gives each file its directory and name by rules 1 to 4 and 6.
func (c *Catalog) sealNames() error {
	for id := NodeID(1); id < c.files.next; id++ {
		f := c.files.at(id)
		if f.flags&flagDeleted != 0 {
			continue
		}
		suffix, sufOff := c.arena.prefixed(f.suffix)
		parent, name := c.prefixDir[f.prefix], ""
		if isDotSegment(suffix) {
			segs := MapURI(c.origin, c.uriOf(f))
			d, err := c.sealDirPath(segs[:len(segs)-1])
			if err != nil {
				return err
			}
			parent, name = d, segs[len(segs)-1]
		} else {
			name = fileName(suffix)
		}
		if name != suffix && name != IndexName { // setName stores it
			if err := c.sealRoom(len(name), false); err != nil {
				return err
			}
		}
		f.parent = parent
		c.setName(f, name, suffix, sufOff)
	}
	return nil
}

// setName stores a file's name, sharing the URI suffix's bytes when equal.
func (c *Catalog) setName(f *fileRec, name, suffix string, sufOff uint32) {
	f.nameLen = uint8(len(name))
	switch name {
	case suffix:
		f.nameOff = sufOff
	case IndexName:
		f.nameOff = c.indexNameOff
	default:
		f.nameOff = c.arena.addString(name)
	}
}

// sealFileOverDir applies rule 5: a file whose name is a directory becomes
// that directory's _index (repeatedly, should _index be a directory too).
func (c *Catalog) sealFileOverDir() {
	for id := NodeID(1); id < c.files.next; id++ {
		f := c.files.at(id)
		if f.flags&flagDeleted != 0 {
			continue
		}
		for {
			child, ok := c.dirIndex[dirKey{f.parent, c.fileName(f)}]
			if !ok {
				break
			}
			f.parent = child
			f.nameOff, f.nameLen = c.indexNameOff, uint8(len(IndexName))
		}
	}
}

// sealChildren sorts each directory's files, resolves collisions (rule 7)
// and merges files and subdirectories into the sorted child list.
func (c *Catalog) sealChildren() error {
	start := make([]int, len(c.dirs)+1)
	for id := NodeID(1); id < c.files.next; id++ {
		if f := c.files.at(id); f.flags&flagDeleted == 0 {
			start[f.parent+1]++
		}
	}
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
	flat := make([]NodeID, start[len(c.dirs)])
	fill := slices.Clone(start[:len(c.dirs)])
	for id := NodeID(1); id < c.files.next; id++ {
		if f := c.files.at(id); f.flags&flagDeleted == 0 {
			flat[fill[f.parent]] = id
			fill[f.parent]++
		}
	}
	for d := range c.dirs {
		if err := c.placeFiles(uint32(d), flat[start[d]:start[d+1]]); err != nil {
			return err
		}
	}
	return nil
}

// placeFiles builds directory d's child list from its files and subdirs.
func (c *Catalog) placeFiles(d uint32, files []NodeID) error {
	slices.SortFunc(files, c.compareFiles)
	for i := 1; i < len(files); i++ {
		if c.nameOf(files[i]) == c.nameOf(files[i-1]) {
			if err := c.resolveCollisions(d, files); err != nil {
				return err
			}
			slices.SortFunc(files, c.compareFiles)
			break
		}
	}
	subdirs := c.dirs[d].children
	slices.SortFunc(subdirs, c.compareNames)
	children := make([]NodeID, 0, len(files)+len(subdirs))
	i, j := 0, 0
	for i < len(files) || j < len(subdirs) {
		if j == len(subdirs) || i < len(files) && c.nameOf(files[i]) < c.nameOf(subdirs[j]) {
			children = append(children, files[i])
			i++
		} else {
			children = append(children, subdirs[j])
			j++
		}
	}
	c.dirs[d].children = children
	return nil
}

// compareFiles orders files by name, then URI.
func (c *Catalog) compareFiles(a, b NodeID) int {
	if n := strings.Compare(c.nameOf(a), c.nameOf(b)); n != 0 {
		return n
	}
	return strings.Compare(c.uriOf(c.files.at(a)), c.uriOf(c.files.at(b)))
}

func (c *Catalog) compareNames(a, b NodeID) int {
	return strings.Compare(c.nameOf(a), c.nameOf(b))
}

// resolveCollisions applies rule 7 to files sorted by name then URI: the
// first of each run of equal names keeps it; the others get a suffix not
// taken by any file or directory of d.
func (c *Catalog) resolveCollisions(d uint32, files []NodeID) error {
	taken := make(map[string]bool, len(files))
	for _, sub := range c.dirs[d].children {
		taken[c.nameOf(sub)] = true
	}
	var losers []NodeID
	for i, id := range files {
		if i > 0 && c.nameOf(id) == c.nameOf(files[i-1]) {
			losers = append(losers, id)
			continue
		}
		taken[c.nameOf(id)] = true
	}
	for _, id := range losers {
		f := c.files.at(id)
		name := c.assignSuffixed(c.fileName(f), c.uriOf(f), taken)
		if err := c.sealRoom(len(name), false); err != nil {
			return err
		}
		f.nameOff, f.nameLen = c.arena.addString(name), uint8(len(name))
		c.renamed++
	}
	return nil
}

// assignSuffixed returns the first suffixed form of name not in taken, and
// takes it.
func (c *Catalog) assignSuffixed(name, uri string, taken map[string]bool) string {
	for k := 0; ; k++ {
		cand := suffixName(name, uri, k)
		if !taken[cand] {
			taken[cand] = true
			return cand
		}
	}
}

// sealFileInos settles the inode numbers of files whose URI hash is shared or
// reserved (0 and 1): in URI order, each takes the first free candidate.
func (c *Catalog) sealFileInos() {
	var contested []NodeID
	for id := NodeID(1); id < c.files.next; id++ {
		f := c.files.at(id)
		if f.flags&flagDeleted == 0 && (f.flags&flagHashShared != 0 || f.ino <= 1) {
			contested = append(contested, id)
			f.flags |= flagInoNotRaw
		}
	}
	slices.SortFunc(contested, func(a, b NodeID) int {
		return strings.Compare(c.uriOf(c.files.at(a)), c.uriOf(c.files.at(b)))
	})
	for _, id := range contested {
		f := c.files.at(id)
		f.ino = 0
	}
	for _, id := range contested {
		f := c.files.at(id)
		c.setAltIno(id, f, c.freeIno(c.uriOf(f)))
	}
}

// sealDirInos numbers directories in path order from hashes of their paths.
func (c *Catalog) sealDirInos() {
	order := make([]uint32, 0, len(c.dirs)-1)
	paths := make([]string, len(c.dirs))
	for i := 1; i < len(c.dirs); i++ {
		order = append(order, uint32(i))
		paths[i] = c.pathOf(dirID(uint32(i)))
	}
	slices.SortFunc(order, func(a, b uint32) int { return strings.Compare(paths[a], paths[b]) })
	for _, i := range order {
		ino := c.freeIno(dirInoKey(paths[i]))
		c.dirs[i].ino = ino
		c.altIno[ino] = dirID(i)
	}
}

// sealMtimes sets each directory's mtime to the newest below it. Parents are
// created before their children, so one backward pass carries mtimes up.
func (c *Catalog) sealMtimes() {
	for id := NodeID(1); id < c.files.next; id++ {
		f := c.files.at(id)
		if f.flags&flagDeleted == 0 && f.mtime > c.dirs[f.parent].mtime {
			c.dirs[f.parent].mtime = f.mtime
		}
	}
	for i := len(c.dirs) - 1; i > 0; i-- {
		p := c.dirs[i].parent
		if c.dirs[i].mtime > c.dirs[p].mtime {
			c.dirs[p].mtime = c.dirs[i].mtime
		}
	}
}
